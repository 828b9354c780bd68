//! Bête's playouts: the strict tricks of a deal played out at random, one trick at a time, for
//! the search and the luck correction (no events, no views).

use super::*;

impl BeteTable {
    /// The strict tricks of a playout, one trick at a time, each played by `play_trick` for the
    /// number of cards a hand holds in it.
    #[inline]
    pub(super) fn play_tricks(
        &mut self,
        ctx: &mut Ctx,
        rng: &mut impl RngCore,
        mut on_card: impl FnMut(Seat, Card),
    ) {
        let rules = FollowRules::new(self.trump, self.must_head, self.variant.ranking);
        // Bidding may have settled the deal (everyone passed).
        if self.stage != Stage::Tricks {
            return;
        }
        // In order, from the trick the deal is in (tests and not a `match`: a jump table per
        // trick costs an indirect branch).
        if self.trick_no == 0 {
            self.play_trick::<5>(ctx, &rules, rng, &mut on_card);
        }
        if self.trick_no == 1 {
            self.play_trick::<4>(ctx, &rules, rng, &mut on_card);
        }
        if self.trick_no == 2 {
            self.play_trick::<3>(ctx, &rules, rng, &mut on_card);
        }
        if self.trick_no == 3 {
            self.play_trick::<2>(ctx, &rules, rng, &mut on_card);
        }
        if self.trick_no == 4 {
            self.play_trick::<1>(ctx, &rules, rng, &mut on_card);
        }
        debug_assert!(self.stage != Stage::Tricks, "a playout ends the deal");
    }

    /// One trick of a playout, in which every hand yet to play holds `HELD` cards: the lead,
    /// then the followers by masks and selects (`MaskTrick`); the state is written back exactly
    /// as `play_card` leaves it, and the fifth trick settles the deal. Knowing `HELD` spares
    /// the work for cards a hand cannot hold: in the fifth trick (`HELD` = 1) every play is
    /// forced, and neither the legal cards nor a pick need working out.
    #[inline]
    pub(super) fn play_trick<const HELD: usize>(
        &mut self,
        ctx: &mut Ctx,
        rules: &FollowRules,
        rng: &mut impl RngCore,
        on_card: &mut impl FnMut(Seat, Card),
    ) {
        let n = self.seats;
        let mut seat = self.turn;
        let mut trick = if self.trick.len == 0 {
            // Any card may lead.
            let hand = self.hands[seat.index()];
            let Some(card) = Self::pick::<HELD>(hand, rng) else {
                debug_assert!(false, "a seat to lead holds no card");
                return;
            };
            self.hands[seat.index()] = hand.minus(CardSet::single(card));
            on_card(seat, card);
            self.turn = seat;
            let trick = MaskTrick::lead(seat, card, rules);
            seat = seat.next(n);
            trick
        } else {
            // A playout may start in the middle of a trick.
            MaskTrick::resume(self.trick, rules)
        };
        while trick.len() < n {
            let hand = self.hands[seat.index()];
            let legal = if HELD == 1 {
                hand
            } else {
                trick.legal(hand, rules)
            };
            let Some(card) = Self::pick::<HELD>(legal, rng) else {
                debug_assert!(false, "a seat to play holds no card");
                return;
            };
            self.hands[seat.index()] = hand.minus(CardSet::single(card));
            trick.follow(seat, card, rules);
            on_card(seat, card);
            // `play_card` leaves the turn on the trick's last player.
            self.turn = seat;
            seat = seat.next(n);
        }
        let trick = trick.finish(rules);
        let winner = trick.winner;
        self.tricks[winner.index()] += 1;
        self.done[self.trick_no as usize] = trick;
        self.trick = trick;
        self.trick_no += 1;
        if self.trick_no == 5 {
            // B23: all five tricks are played out.
            self.settle(ctx, &mut Discard);
        } else {
            self.trick = Trick::new(winner);
            self.turn = winner;
        }
    }

    /// A uniformly random card of `legal` (at most `HELD` ≤ 5 cards), one draw, in bit order as
    /// `legal_actions_into` lists them; `None` if `legal` is empty. With `HELD` = 1 the play
    /// is forced, and the draw is taken all the same, as for any action.
    #[inline]
    pub(super) fn pick<const HELD: usize>(legal: CardSet, rng: &mut impl RngCore) -> Option<Card> {
        debug_assert!(
            legal.len() as usize <= HELD,
            "a hand holds at most {HELD} cards now"
        );
        if HELD == 1 {
            uniform_index(rng, 1);
            return legal.first();
        }
        let peeled = legal.peel::<HELD>();
        // `uniform_index` wants n ≥ 1; an empty set draws from 1 and names no card.
        let k = uniform_index(rng, peeled.len().max(1));
        peeled.nth(k)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod speed {
    use super::*;

    /// Not a timed assert: prints the family-level speed (run with --release --ignored).
    #[test]
    #[ignore]
    fn family_level_random_deals() {
        let cfg = Config::defaults(RulesetId::Bete, 5);
        let pack = crate::game::pack(RulesetId::Bete, &cfg, 5);
        let mut table = BeteTable::new(RulesetId::Bete, &cfg, 5);
        let mut balances = [0i64; MAX_SEATS];
        let mut deck = pack.clone();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut out = Vec::with_capacity(64);
        let mut buf = Vec::with_capacity(16);
        let deals = 1_000_000u32;
        let t = std::time::Instant::now();
        for k in 0..deals {
            for i in (1..deck.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                deck.swap(i, j);
            }
            let mut ctx = Ctx {
                ruleset: RulesetId::Bete,
                config: &cfg,
                seats: 5,
                // Deals 0-4 of a 10-deal match: never the last settlement (deal 9 can be, and
                // after it `to_act()` is None, so later "deals" would only deal cards).
                deal: k % 5,
                dealer: Seat((k % 5) as u8),
                balances: &mut balances,
            };
            let paid = table.take_antes(&mut ctx);
            out.clear();
            table.deal(&mut ctx, &deck, paid, &mut out);
            while let Some(s) = table.to_act() {
                buf.clear();
                table.legal_actions_into(s, &mut buf);
                let a = buf[(next() % buf.len() as u64) as usize];
                out.clear();
                table.apply(&mut ctx, s, a, &mut out).unwrap();
            }
            let mut log = SummaryLog::default();
            table.record_summary(&mut log);
            std::hint::black_box(log);
        }
        let el = t.elapsed().as_secs_f64();
        eprintln!(
            "{deals} deals in {el:.3}s: {:.0} deals/s",
            deals as f64 / el
        );
    }
}
