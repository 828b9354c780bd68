//! Settlement of a Part II deal in one step (RC3): trick pay-outs of a fifth of the start pool
//! (MO17, LO12, RA9), mouches, loos and rams (MO18, LO13, RA10), dealt mouches (MO8–MO9), Loo
//! flushes (LO9), General Rams (RA11), and the end of the match (RC4).

use super::{FIVE, PoolTable, Stage};
use crate::config::{DealtMouchePenalty, FlushRule, LooAmount, RamsPenalty};
use crate::event::{DealResult, Event, Privates, PublicEvent, Reveal, SeatSet, Settlement};
use crate::family::{Ctx, Family};
use crate::ruleset::MAX_SEATS;
use crate::seat::Seat;
use crate::sink::Sink;
use crate::summary::SummaryHead;

/// How a deal ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum End {
    /// Five tricks were played.
    Played,
    /// One seat stayed in: it takes the pool without play (MO13, LO8, RA7).
    LoneStayer(Seat),
    /// Every non-dealer dropped: the dealer takes the pool without a turn (MO12, LO8, RA7).
    DealerTakesPool,
    /// A dealt (MO8) or exchanged (MO13) mouche took the basket.
    Mouche { seat: Seat, dealt: bool },
    /// Loo: a flush swept the board (LO9).
    Flush(Seat),
}

impl PoolTable {
    /// What a seat that stayed in and took no trick pays (MO18, LO13, RA10).
    fn penalty(&self) -> i64 {
        let p = self.start_pool;
        if self.mouche_like() {
            p
        } else if self.loo() {
            match self.config.loo_amount {
                LooAmount::Limited => FIVE,
                LooAmount::Unlimited => p,
                LooAmount::Mixed => p.min(self.config.loo_limit),
            }
        } else {
            match self.config.rams_penalty {
                RamsPenalty::Five => FIVE,
                RamsPenalty::Pool => p,
            }
        }
    }

    pub(super) fn settle(&mut self, ctx: &mut Ctx, end: End, out: &mut impl Sink) {
        let mut gains = [0i64; MAX_SEATS];
        // seat-to-seat payments: Loo `"pcg"` flushes, General Rams
        let mut direct = [0i64; MAX_SEATS];
        // penalties into the next pool (or the mouche queue), in the order they are charged
        self.payments.clear();
        self.won.clear();
        // Play order from eldest, without allocating (a playout settles thousands of deals).
        let mut order = [Seat(0); MAX_SEATS];
        for (slot, s) in order.iter_mut().zip(self.play_order()) {
            *slot = s;
        }
        let seats = &order[..usize::from(self.seats)];
        match end {
            End::Played => {
                let per = self.start_pool / 5; // floor; a remainder stays (RC2)
                for &s in seats {
                    gains[s.index()] = per * i64::from(self.tricks_won[s.index()]);
                }
                if let Some(a) = self.general {
                    // RA11: ± general_stake with every other seat, and no rams
                    let stake = self.config.general_stake;
                    let sign = if self.tricks_won[a.index()] == 5 {
                        1
                    } else {
                        -1
                    };
                    for &s in seats.iter().filter(|&&s| s != a) {
                        direct[a.index()] += sign * stake;
                        direct[s.index()] -= sign * stake;
                    }
                } else {
                    let amount = self.penalty();
                    for &s in seats {
                        if self.is_in(s) && self.tricks_won[s.index()] == 0 {
                            self.payments.push((s, amount));
                        }
                    }
                }
            }
            End::LoneStayer(s) => gains[s.index()] = self.pool,
            End::DealerTakesPool => gains[self.dealer.index()] = self.pool,
            End::Mouche { seat, dealt } => {
                gains[seat.index()] = self.pool;
                // MO9: every other seat makes the mouche
                if dealt && self.config.dealt_mouche_penalty == DealtMouchePenalty::OthersPay {
                    for &s in seats.iter().filter(|&&s| s != seat) {
                        self.payments.push((s, self.start_pool));
                    }
                }
            }
            End::Flush(holder) => {
                gains[holder.index()] = self.pool;
                let amount = self.penalty();
                for &s in seats.iter().filter(|&&s| s != holder) {
                    match self.config.flush_rule {
                        // LO9 "hoyle": stayers are looed, except Pam and inferior flushes
                        FlushRule::Hoyle => {
                            let hand = self.hands[s.index()];
                            let pam = self.order.top.is_some_and(|t| hand.contains(t));
                            let flush = self.order.flush_key(hand).is_some();
                            if self.is_in(s) && !pam && !flush {
                                self.payments.push((s, amount));
                            } else if self.is_in(s) && pam && !flush {
                                // RC1: the exempting Pam is shown
                                let cards = crate::cardset::CardSet::single(
                                    self.order.top.unwrap_or(self.turn_up),
                                );
                                out.emit(|| {
                                    Event::public(PublicEvent::FlushShown { seat: s, cards })
                                });
                            }
                        }
                        // LO9 "pcg": every other seat pays the holder directly
                        FlushRule::Pcg => {
                            direct[s.index()] -= amount;
                            direct[holder.index()] += amount;
                        }
                    }
                }
            }
        }

        let mut net = [0i64; MAX_SEATS];
        let mut penalties = [0i64; MAX_SEATS];
        for &s in seats {
            let g = gains[s.index()];
            if g > 0 {
                self.pool -= g;
                ctx.balances[s.index()] += g;
                net[s.index()] += g;
                self.won.push((s, g));
            }
            let d = direct[s.index()];
            ctx.balances[s.index()] += d;
            net[s.index()] += d;
            if d < 0 && matches!(end, End::Flush(_)) {
                penalties[s.index()] -= d;
            }
        }
        let queued = self.queued();
        for i in 0..self.payments.len() {
            let (s, amount) = self.payments[i];
            ctx.balances[s.index()] -= amount;
            net[s.index()] -= amount;
            penalties[s.index()] += amount;
            if queued {
                self.queue.push((s, amount));
            } else {
                self.pool += amount;
            }
        }
        debug_assert!(self.pool >= 0);
        self.stage = Stage::Settled;

        let result = match end {
            End::Played => DealResult::Played {
                stayers: SeatSet(self.inn),
            },
            End::LoneStayer(s) => DealResult::LoneStayer(s),
            End::DealerTakesPool => DealResult::DealerTakesPot(self.dealer),
            End::Mouche { seat, dealt } => DealResult::Flush { seat, dealt },
            End::Flush(seat) => DealResult::Flush {
                seat,
                dealt: self.hands[seat.index()] == self.dealt[seat.index()],
            },
        };
        let mut tricks = [0u8; MAX_SEATS];
        tricks.copy_from_slice(&self.tricks_won);
        out.emit(|| Event {
            public: PublicEvent::DealSettled(Box::new(Settlement {
                deal: self.deal,
                result,
                tricks,
                net,
                betes: penalties,
                hidden_revealed: crate::cardset::CardSet::EMPTY,
                pools: self.pools(),
                balances: *ctx.balances,
            })),
            private: Privates::None,
            reveal: Some(Box::new(Reveal {
                deal: self.deal,
                hands: self.dealt,
                deck: self.deck.clone(),
            })),
        });
        self.summary = Some(SummaryHead {
            deal: self.deal,
            dealer: self.dealer,
            declarer: self.general,
            contrer: None,
            stayers: SeatSet(self.inn),
            seats: self.seats,
            tricks,
            outcome: match end {
                End::Played if self.general.is_some() => "general",
                End::Played => "played",
                End::LoneStayer(_) => "lone_stayer",
                End::DealerTakesPool => "dealer_takes_pot",
                End::Mouche { .. } => "mouche",
                End::Flush(_) => "flush",
            },
            net,
        });

        // MO22, LO15, RA13: the pool (and the mouche queue) is empty after the settlement
        let end_test = self.pool == 0 && self.queue.is_empty();
        if ctx.is_last_settlement(end_test) {
            self.return_stakes(ctx, out);
        }
    }

    /// RC4: the pool split equally, the odd units one each from the last deal's eldest in play
    /// order; queued mouches back to their payers.
    fn return_stakes(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        let n = i64::from(self.seats);
        let mut returned = [0i64; MAX_SEATS];
        let share = self.pool / n;
        let mut rem = self.pool % n;
        for s in self.play_order() {
            returned[s.index()] += share;
            if rem > 0 {
                returned[s.index()] += 1;
                rem -= 1;
            }
        }
        for &(s, amount) in &self.queue {
            returned[s.index()] += amount;
        }
        self.pool = 0;
        self.queue.clear();
        for (b, r) in ctx.balances.iter_mut().zip(returned) {
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
