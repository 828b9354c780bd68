//! Steps 2 and 3 of a sample (see the module above): one history that leads to the proposed
//! hidden places (which cards each exchanging seat drew and set aside, the deck stacked to
//! deal them), replayed through the engine with the view's actions and kept only if every
//! action is legal and the seat's view of the result is the given view.

use super::*;

impl Determinizer {
    /// One proposal, replayed and checked; None if it does not agree with the view.
    // The per-seat arrays (hands, leads, gone, after, dealt) are indexed together by seat.
    #[allow(clippy::needless_range_loop)]
    pub(super) fn try_once(
        &self,
        rng: &mut impl RngCore,
        challenger: bool,
        probe: Option<&mut [CardSet; MAX_SEATS]>,
    ) -> Option<Game> {
        let n = self.view.seats as usize;
        let me = self.me.index();
        let dealer = self.view.dealer.index();
        let turn_up = *self.turn_ups.last()?;
        let exchange = self.view.ruleset.is_exchange_family();
        let pool = self.view.ruleset.is_pool_family();
        let mut hands = [CardSet::EMPTY; MAX_SEATS];
        let mut free = [FILLER; MAX_CARDS];
        // Where the placed turn-up goes: 0..hand its hand, then each lead, then the discard.
        let placed = self.turn_up_place.as_ref().map(|p| {
            let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let at = if u < p.odds[0] {
                0
            } else if u < p.odds[1] && p.leads > 0 {
                p.hand + uniform_index(rng, p.leads)
            } else {
                p.hand + p.leads
            };
            (p, at)
        });
        let dealing = match placed {
            Some((p, at)) if at < p.hand => p.with_it_in_hand.as_deref().unwrap_or(&self.dealer),
            _ => &self.dealer,
        };
        let free_len = dealing.deal(rng, &mut hands, &mut free);
        let in_place = |s: usize, part: usize| -> usize {
            match placed {
                Some((p, at)) if s == dealer => {
                    let (lo, hi) = match part {
                        0 => (0, p.hand),
                        1 => (p.hand, p.hand + p.leads),
                        _ => (p.hand + p.leads, p.hand + p.leads + 1),
                    };
                    usize::from((lo..hi).contains(&at))
                }
                _ => 0,
            }
        };
        let mut constrained = [false; MAX_SEATS];
        for s in dealing.constrained() {
            constrained[s] = true;
        }
        // The free cards come shuffled: laying them out in order is uniform.
        let mut next = free[..free_len].iter().copied();
        let mut h = Hidden::default();
        let mut gone = [CardSet::EMPTY; MAX_SEATS];
        for s in 0..n {
            h.hands[s] = if s == me {
                self.known[s]
            } else {
                let mut hand = if constrained[s] {
                    hands[s]
                } else {
                    next.by_ref()
                        .take(self.hand_len[s] - in_place(s, 0))
                        .collect()
                };
                if let (1, Some((p, _))) = (in_place(s, 0), placed) {
                    hand.insert(p.card);
                }
                hand
            };
            // In the shuffled order, so which hidden card led which trick is uniform too.
            let k = self.hidden_leads[s] - in_place(s, 1);
            h.leads[s] = next.by_ref().take(k).collect();
            if let (1, Some((p, at))) = (in_place(s, 1), placed) {
                h.leads[s].insert(at - p.hand, p.card);
            }
            let k = self.gone_len[s] - in_place(s, 2);
            gone[s] = next.by_ref().take(k).collect();
            if let (1, Some((p, _))) = (in_place(s, 2), placed) {
                gone[s].insert(p.card);
            }
        }
        // Each seat's five cards after the exchanges and the discard.
        let mut after = [CardSet::EMPTY; MAX_SEATS];
        for s in 0..n {
            let mut f = h.hands[s].union(self.known[s]);
            for &c in &h.leads[s] {
                f.insert(c);
            }
            after[s] = f;
        }
        if self.own_turn_up_gone {
            gone[me].insert(turn_up);
        }
        if self.dealer_took {
            // The dealer held five cards and the turn-up, and discarded one of the six.
            let discard = match (self.own_discard, placed) {
                (Some(c), _) if dealer == me => c,
                // The placed turn-up among his gone cards is his discard.
                (_, Some((p, at))) if at == p.hand + p.leads => {
                    gone[dealer].remove(p.card);
                    p.card
                }
                _ => {
                    let c = pick(gone[dealer], 1, rng).first()?;
                    gone[dealer].remove(c);
                    c
                }
            };
            h.discard = Some(discard);
        }
        // Rams: the widow, which its taker holds now instead of the five he threw in.
        let mut widow = CardSet::EMPTY;
        if let Some(t) = self.widow_taker {
            let t = t.index();
            widow = after[t];
            after[t] = match self.own_old_hand {
                Some(old) if t == me => old,
                _ => std::mem::take(&mut gone[t]),
            };
        } else if self.widow_len > 0 {
            widow = next.by_ref().take(self.widow_len).collect();
        }
        if widow.contains(turn_up) {
            return None;
        }
        if let Some(discard) = h.discard {
            let mut six = after[dealer];
            six.insert(discard);
            if !six.contains(turn_up) {
                return None;
            }
            six.remove(turn_up);
            after[dealer] = six;
        }
        if after.iter().any(|a| a.contains(turn_up)) && (exchange || pool) {
            // Only the dealer's discard swap above may hold the turn-up.
            return None;
        }
        // Which cards each seat set aside and drew, round by round, backwards from `after`.
        let mut dealt = [CardSet::EMPTY; MAX_SEATS];
        for s in 0..n {
            let ex = self.exchanged[s];
            let mut hand = after[s];
            let mut g = gone[s];
            for r in (0..2).rev() {
                let k = ex[r] as usize;
                if k == 0 {
                    continue;
                }
                let (known_aside, known_drawn) = if s == me {
                    (self.own_aside[r], self.own_drawn[r])
                } else {
                    (None, None)
                };
                let aside = known_aside.unwrap_or_else(|| pick(g, k, rng));
                g = g.minus(aside);
                let drawn = known_drawn.unwrap_or_else(|| pick(hand, k, rng));
                if !drawn.is_subset(hand) || aside.len() as usize != k {
                    return None;
                }
                h.set_aside[s][r] = aside;
                h.drawn[s][r] = drawn;
                hand = hand.minus(drawn).union(aside);
            }
            dealt[s] = hand;
        }
        // The deck: dealt hands, the turn-ups, the talon in the order it is drawn.
        let mut deck = [turn_up; MAX_CARDS];
        for s in 0..n {
            if dealt[s].len() as usize != self.dealt_at[s].len() {
                return None;
            }
            for (c, &at) in dealt[s].iter().zip(&self.dealt_at[s]) {
                *deck.get_mut(at)? = c;
            }
        }
        if widow.len() as usize != self.widow_at.len() {
            return None;
        }
        for (c, &at) in widow.iter().zip(&self.widow_at) {
            *deck.get_mut(at)? = c;
        }
        let mut at = self.turn_up_at;
        let mut put = |c: Card| -> Option<()> {
            *deck.get_mut(at)? = c;
            at += 1;
            Some(())
        };
        for &c in &self.turn_ups {
            put(c)?;
        }
        if exchange || pool {
            for r in 0..2 {
                for k in 1..=n as u8 {
                    let s = self.view.dealer.offset(k, n as u8);
                    for c in h.drawn[s.index()][r].iter() {
                        put(c)?;
                    }
                }
            }
        }
        for c in next.take(self.talon_len) {
            put(c)?;
        }
        if at != self.pack_len {
            return None;
        }
        let deck = &deck[..self.pack_len];

        let mut g = self.template.clone();
        g.play_deck(deck).ok()?;
        self.replay(&mut g, &h, challenger, probe)?;
        g.restore_carried(&self.view);
        (g.view(Viewer::Seat(self.me)) == self.view).then_some(g)
    }

    /// Plays the view's actions on `g`, filling in the sample's hidden cards, until the view's
    /// decision point. None if an action is refused.
    pub(super) fn replay(
        &self,
        g: &mut Game,
        h: &Hidden,
        challenger: bool,
        mut probe: Option<&mut [CardSet; MAX_SEATS]>,
    ) -> Option<()> {
        // Only a probe asks the engine, so only a probe allocates.
        let mut buf = Vec::new();
        let mut bids = self.bids.iter();
        let mut plays = self.plays.iter();
        let mut leads: [usize; MAX_SEATS] = [0; MAX_SEATS];
        let hidden_challenger = self.hidden_challenger.filter(|_| challenger);
        loop {
            let seat = g.to_act()?;
            let i = seat.index();
            let action = match g.phase() {
                Phase::Bidding => match bids.next() {
                    Some(&(s, a)) if s == seat => a,
                    Some(_) => return None,
                    None => break,
                },
                Phase::Exchange { round } => {
                    let r = usize::from(round.clamp(1, 2) - 1);
                    let word = if r == 0 && hidden_challenger == Some(seat) {
                        Some(Word::Drop)
                    } else {
                        self.round_words[r][i]
                    };
                    match word {
                        None => break,
                        Some(Word::Stand) => Action::Stand,
                        Some(Word::Drop) => Action::Drop,
                        Some(Word::Exchange(_)) => Action::Exchange(h.set_aside[i][r]),
                        Some(Word::Widow) => Action::Widow,
                        Some(Word::General) => Action::General,
                    }
                }
                Phase::Challenge => {
                    if hidden_challenger == Some(seat) {
                        Action::Challenge
                    } else {
                        match self.challenge_words[i] {
                            Some(a) => a,
                            None => break,
                        }
                    }
                }
                Phase::DealerDiscard => match h.discard {
                    Some(c) if self.dealer_took => Action::Discard(c),
                    _ => break,
                },
                Phase::Trick { .. } => match plays.next() {
                    Some(&(s, pc)) if s == seat => match pc {
                        PlayedCard::FaceUp(c) => Action::Card(c),
                        PlayedCard::FaceDown(Some(c)) => Action::Hidden(c),
                        PlayedCard::FaceDown(None) => {
                            let c = *h.leads[i].get(leads[i])?;
                            leads[i] += 1;
                            Action::Hidden(c)
                        }
                    },
                    Some(_) => return None,
                    None => break,
                },
                Phase::AwaitingDeck | Phase::MatchOver => return None,
            };
            if let (Some(masks), Phase::Trick { .. }) = (probe.as_deref_mut(), g.phase())
                && seat != self.me
            {
                for &c in &self.unseen {
                    let (hand, asked) = match action {
                        Action::Card(x) if x != c => {
                            (CardSet::single(x).union(CardSet::single(c)), action)
                        }
                        Action::Hidden(_) => (CardSet::single(c), Action::Hidden(c)),
                        _ => continue,
                    };
                    if !g.legal_with_hand(seat, hand, asked, &mut buf) {
                        masks[i].insert(c);
                    }
                }
            }
            g.play(seat, action).ok()?;
        }
        (bids.next().is_none() && plays.next().is_none()).then_some(())
    }
}

/// A uniformly random `k`-card subset of `set` (all of it if it has at most `k` cards).
pub(super) fn pick(set: CardSet, k: usize, rng: &mut impl RngCore) -> CardSet {
    if set.len() as usize <= k {
        return set;
    }
    // A partial Fisher–Yates over the set's bit indices.
    let mut bits = [0u8; 64];
    let mut n = 0;
    let mut rest = set.bits();
    while rest != 0 {
        bits[n] = rest.trailing_zeros() as u8;
        n += 1;
        rest &= rest - 1;
    }
    let mut out = 0u64;
    for t in 0..k {
        let j = t + uniform_index(rng, n - t);
        bits.swap(t, j);
        out |= 1 << bits[t];
    }
    CardSet(out)
}

/// Part II: the deck indices of each seat's dealt hand, of Rams's widow, and of the turn-up,
/// dealt as the table deals them: packet rounds from eldest to the dealer, the widow's packet
/// just before the dealer's (19, RA4).
pub(super) fn packet_layout(
    seats: u8,
    dealer: Seat,
    pattern: DealPattern,
    rams: bool,
) -> (Vec<Vec<usize>>, Vec<usize>, usize) {
    let mut hands = vec![Vec::with_capacity(5); seats as usize];
    let mut widow = Vec::new();
    let mut i = 0;
    for &packet in pattern.packets() {
        for p in 0..seats {
            let seat = dealer.offset(p + 1, seats);
            if rams && seat == dealer {
                widow.extend(i..i + packet as usize);
                i += packet as usize;
            }
            if let Some(h) = hands.get_mut(seat.index()) {
                h.extend(i..i + packet as usize);
            }
            i += packet as usize;
        }
    }
    (hands, widow, i)
}
