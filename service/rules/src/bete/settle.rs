//! Bête's settlement (section 1.8 in its five steps): the winner's takings, vole and dévole,
//! the bête queue, and the end of the match (0.4 item 17).

use super::*;

impl BeteTable {
    /// The winner takes the deal pot, his N fiches (A11 re-antes when the dish runs short) and
    /// the current bête (B27). Returns the fiches anted within the settlement per seat.
    pub(super) fn take_winnings(&mut self, ctx: &mut Ctx, winner: Seat) {
        let pot = self.pot;
        ctx.balances[winner.index()] += pot;
        self.pot = 0;
        self.won.push(Won {
            pool: "deal_pot",
            seat: winner,
            amount: pot,
        });
        let mut owed = self.n as i64;
        let mut taken = 0;
        loop {
            let t = owed.min(self.fiches);
            self.fiches -= t;
            owed -= t;
            taken += t;
            if owed == 0 {
                break;
            }
            // A11: every seat antes a fresh fiche, within the settlement.
            for s in 0..self.seats {
                Self::pay(ctx, Seat(s), self.fiche_value);
            }
            self.fiches += self.seats as i64;
        }
        ctx.balances[winner.index()] += taken * self.fiche_value;
        self.won.push(Won {
            pool: "fiches",
            seat: winner,
            amount: taken * self.fiche_value,
        });
        if let Some(b) = self.staked.take() {
            ctx.balances[winner.index()] += b.amount;
            self.won.push(Won {
                pool: "bete",
                seat: winner,
                amount: b.amount,
            });
        }
        self.n = 0;
    }

    /// B28: all waiting bêtes and 1 jeton from each other seat.
    pub(super) fn vole(&mut self, ctx: &mut Ctx, winner: Seat) {
        for b in self.queue.drain(..) {
            ctx.balances[winner.index()] += b.amount;
            self.won.push(Won {
                pool: "bete",
                seat: winner,
                amount: b.amount,
            });
        }
        // 1 from every seat, the winner's own returned with the rest.
        for b in &mut ctx.balances[..self.n_us()] {
            *b -= 1;
        }
        ctx.balances[winner.index()] += self.seats as i64;
    }

    /// B30: 1 jeton to each other seat.
    pub(super) fn devole(&self, ctx: &mut Ctx, loser: Seat) {
        // 1 to every seat, the loser's own taken back with the rest.
        for b in &mut ctx.balances[..self.n_us()] {
            *b += 1;
        }
        ctx.balances[loser.index()] -= self.seats as i64;
    }

    pub(super) fn queue_bete(&mut self, ctx: &mut Ctx, payer: Seat, amount: i64) {
        Self::pay(ctx, payer, amount);
        let b = Bete { payer, amount };
        self.queue.push(b);
        self.betes_made.push(b);
    }

    /// The settlement of 1.8, steps 1–5, then the end test (0.4 item 17).
    pub(super) fn settle(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        let before = *ctx.balances;
        self.won.clear();
        self.betes_made.clear();
        let w = self.w();
        // Who lost the deal as a bidder forfeits the top pool (B32, B33).
        let mut losers = [None; 2];
        let result = match self.declarer {
            None => {
                self.outcome = "all_passed";
                DealResult::AllPassed
            }
            Some(p) => {
                let pr = self.declarer_result(p);
                let c = self.contrer;
                let cr = c.map(|c| match pr {
                    BidderResult::Null => BidderResult::Null,
                    BidderResult::Win { .. } => BidderResult::Lose {
                        devole: self.tricks[c.index()] == 0,
                    },
                    BidderResult::Lose { .. } => {
                        if self.passes(c) {
                            BidderResult::Win {
                                vole: self.tricks[c.index()] == 5,
                            }
                        } else {
                            BidderResult::Lose {
                                devole: self.tricks[c.index()] == 0,
                            }
                        }
                    }
                });
                self.outcome = match pr {
                    BidderResult::Win { vole: true } => "vole",
                    BidderResult::Win { vole: false } => "win",
                    BidderResult::Null => "null",
                    BidderResult::Lose { .. } => "lose",
                };
                // Step 1: the bidders' result.
                match (pr, c.zip(cr)) {
                    (BidderResult::Win { .. }, _) => self.take_winnings(ctx, p),
                    (BidderResult::Lose { .. }, Some((c, BidderResult::Win { .. }))) => {
                        self.take_winnings(ctx, c);
                        // B32: P pays W directly to C.
                        Self::pay(ctx, p, w);
                        ctx.balances[c.index()] += w;
                        self.betes_made.push(Bete {
                            payer: p,
                            amount: w,
                        });
                        self.won.push(Won {
                            pool: "declarer_bete",
                            seat: c,
                            amount: w,
                        });
                    }
                    (BidderResult::Lose { .. }, _) => self.queue_bete(ctx, p, w),
                    (BidderResult::Null, _) => {}
                }
                // Step 2: vole and dévole.
                for (s, r) in [(Some(p), Some(pr)), (c, cr)] {
                    match (s, r) {
                        (Some(s), Some(BidderResult::Win { vole: true })) => self.vole(ctx, s),
                        (Some(s), Some(BidderResult::Lose { devole: true })) => self.devole(ctx, s),
                        _ => {}
                    }
                }
                // Step 3: the contrer's bête of 2W.
                if let (Some(c), Some(BidderResult::Lose { .. })) = (c, cr) {
                    self.queue_bete(ctx, c, 2 * w);
                }
                if let BidderResult::Lose { .. } = pr {
                    losers[0] = Some(p);
                }
                if let (Some(c), Some(BidderResult::Lose { .. })) = (c, cr) {
                    losers[1] = Some(c);
                }
                DealResult::Bidders {
                    declarer: p,
                    declarer_result: pr,
                    contrer: c.zip(cr),
                }
            }
        };
        // Step 4: revokes in lenient mode, in the order they happened (B35).
        for i in 0..self.revoke_count as usize {
            let s = self.revokes[i];
            self.queue_bete(ctx, s, w);
        }
        // A bête waits to be staked at the next deal's start (B31); the end test looks at both.
        let queue_empty = self.staked.is_none() && self.queue.is_empty();
        let last = ctx.is_last_settlement(queue_empty);
        // Step 5: the top pool (B33, AH2) and its refill (B10).
        let top = Card::new(self.variant.top_rank, self.trump);
        // At most one seat holds it; a scan without a branch per seat (who holds it is random).
        let holder = (0..self.seats).fold(None, |h, s| {
            std::hint::select_unpredictable(
                self.dealt[usize::from(s)].contains(top),
                Some(Seat(s)),
                h,
            )
        });
        if let Some(h) = holder
            && !losers.contains(&Some(h))
            && self.king_pool > 0
        {
            let amount = self.king_pool;
            ctx.balances[h.index()] += amount;
            self.king_pool = 0;
            self.won.push(Won {
                pool: self.variant.top_pool,
                seat: h,
                amount,
            });
            if !last {
                for s in 0..self.seats {
                    Self::pay(ctx, Seat(s), 1);
                }
                self.king_pool += self.seats as i64;
            }
        }
        self.stage = Stage::Settled;
        let mut net = [0; MAX_SEATS];
        for i in 0..self.n_us() {
            net[i] = ctx.balances[i] - before[i];
        }
        self.net = net;
        self.emit_settled(ctx, result, net, out);
        if last {
            self.end_match(ctx, out);
        }
    }

    /// `DealSettled` with the spectators' `Reveal` (built only by a sink that keeps events).
    pub(super) fn emit_settled(
        &self,
        ctx: &Ctx,
        result: DealResult,
        net: Amounts,
        out: &mut impl Sink,
    ) {
        out.emit(|| Event {
            public: PublicEvent::DealSettled(Box::new(Settlement {
                betes: self.betes_made.iter().fold([0; MAX_SEATS], |mut betes, b| {
                    betes[b.payer.index()] += b.amount;
                    betes
                }),
                deal: self.deal_no,
                result,
                tricks: self.tricks,
                net,
                hidden_revealed: CardSet::EMPTY,
                pools: self.pools(),
                balances: *ctx.balances,
            })),
            private: Privates::None,
            reveal: Some(Box::new(Reveal {
                deal: self.deal_no,
                hands: self.dealt,
                deck: self.deck[..self.deck_len as usize].to_vec(),
            })),
        });
    }

    /// 0.4 item 17: everything on the table goes back.
    pub(super) fn end_match(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        let n = self.seats as i64;
        let mut returned = [0; MAX_SEATS];
        for b in self.staked.take().into_iter().chain(self.queue.drain(..)) {
            returned[b.payer.index()] += b.amount;
        }
        // The top pool holds nothing or one jeton a seat; the pot and dish are shared with the
        // odd jetons going from the last deal's eldest on.
        let shared = [self.king_pool, self.pot + self.fiches * self.fiche_value];
        self.king_pool = 0;
        self.pot = 0;
        self.fiches = 0;
        let eldest = self.eldest();
        for total in shared {
            let (each, odd) = (total / n, total % n);
            for k in 0..self.seats {
                let s = eldest.offset(k, self.seats);
                returned[s.index()] += each + i64::from((k as i64) < odd);
            }
        }
        for (b, r) in ctx.balances.iter_mut().zip(returned).take(self.n_us()) {
            *b += r;
        }
        self.match_over = true;
        out.emit(|| {
            Event::public(PublicEvent::MatchEnded {
                returned: Box::new(returned),
                balances: Box::new(*ctx.balances),
            })
        });
    }
}
