//! Settlement of a deal in one step (0.4 item 16): trick pay-outs from the start-of-deal pot
//! (BO8, BB13, 0.4 item 14), bêtes and their growth (BO9, BB14, 0.4 item 10), flush payments
//! (0.4 item 8), revokes (0.4 item 19), and the end of the match (0.4 item 17).

use super::{ExchangeTable, FIVE, Stage};
use crate::config::{BeteGrowth, PerTrick};
use crate::event::{DealResult, Event, Privates, PublicEvent, Reveal, SeatSet, Settlement};
use crate::family::{Ctx, Family};
use crate::ruleset::{MAX_SEATS, RulesetId};
use crate::seat::Seat;
use crate::sink::Sink;
use crate::summary::SummaryHead;

/// How a deal ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum End {
    /// Five tricks were played.
    Played,
    /// One seat stayed after round 1 (0.4 item 11).
    LoneStayer(Seat),
    /// Nobody stayed: the pot carries (0.4 item 11).
    Carried,
    /// Lanterlui: a flush won the pot (0.4 item 8).
    Flush { seat: Seat, dealt: bool },
    /// Lanterlui: every non-dealer dropped and all declined (0.4 item 9).
    DealerTakesPot,
}

impl ExchangeTable {
    /// The next bête charged in this deal (0.4 item 10, A2, BB14).
    fn next_bete(&mut self) -> i64 {
        match self.growth() {
            BeteGrowth::Pot => self.start_pot,
            BeteGrowth::Plus5 => FIVE * (self.streak as i64 + 1),
            BeteGrowth::Plus5PerBete => {
                self.last_charged += FIVE;
                self.last_charged
            }
        }
    }

    /// Seats in play order from Vorhand to the dealer.
    fn play_order(&self) -> impl Iterator<Item = Seat> + use<> {
        let (dealer, n) = (self.dealer, self.seats);
        (1..=n).map(move |k| dealer.offset(k, n))
    }

    pub(super) fn settle(&mut self, ctx: &mut Ctx, end: End, out: &mut impl Sink) {
        let mut gains = [0i64; MAX_SEATS];
        // bêtes and flush payments, in the order they are charged
        self.payments.clear();
        self.won.clear();
        match end {
            End::Played => {
                let per = if self.ruleset == RulesetId::BesterBube
                    && self.config.per_trick == PerTrick::One
                {
                    1
                } else {
                    self.start_pot / 5 // floor; a remainder stays in the pot (0.4 item 14)
                };
                for s in self.play_order() {
                    gains[s.index()] = per * self.tricks_won[s.index()] as i64;
                }
                for s in self.play_order() {
                    if self.is_in(s) && self.tricks_won[s.index()] == 0 {
                        let amount = self.next_bete();
                        self.payments.push((s, amount));
                    }
                }
            }
            End::LoneStayer(s) => gains[s.index()] = self.pot,
            End::Carried => {}
            End::DealerTakesPot => gains[self.dealer.index()] = self.pot,
            End::Flush { seat, dealt } => {
                gains[seat.index()] = self.pot;
                if dealt {
                    for s in self.play_order() {
                        if s == seat {
                            continue;
                        }
                        // in a Muss everyone pays 5; outside, a stayer pays the bête amount
                        let stayed = self.stayed1 & Self::bit(s) != 0;
                        let amount = if !self.muss && stayed {
                            self.next_bete()
                        } else {
                            FIVE
                        };
                        self.payments.push((s, amount));
                    }
                }
            }
        }
        // revokes: one bête each, after the deal's own bêtes (0.4 item 19)
        for i in 0..self.revoke_len as usize {
            let amount = self.next_bete();
            self.payments.push((self.revokes[i], amount));
        }

        let mut net = [0i64; MAX_SEATS];
        let mut betes = [0i64; MAX_SEATS];
        for s in self.play_order() {
            let g = gains[s.index()];
            if g > 0 {
                self.pot -= g;
                ctx.balances[s.index()] += g;
                net[s.index()] += g;
                self.won.push((s, g));
            }
        }
        let fifo = self.fifo();
        for i in 0..self.payments.len() {
            let (s, amount) = self.payments[i];
            ctx.balances[s.index()] -= amount;
            net[s.index()] -= amount;
            betes[s.index()] += amount;
            if fifo {
                self.queue.push((s, amount));
            } else {
                self.pot += amount;
            }
        }
        debug_assert!(self.pot >= 0);
        let any_bete = !self.payments.is_empty();
        if any_bete {
            self.streak += 1;
        } else {
            self.streak = 0;
            self.last_charged = 0;
        }
        self.prev_bete = any_bete;
        self.stage = Stage::Settled;

        let result = match end {
            End::Played => DealResult::Played {
                stayers: SeatSet(self.inn.into()),
            },
            End::LoneStayer(s) => DealResult::LoneStayer(s),
            End::Carried => DealResult::Carried,
            End::Flush { seat, dealt } => DealResult::Flush { seat, dealt },
            End::DealerTakesPot => DealResult::DealerTakesPot(self.dealer),
        };
        let mut tricks = [0u8; MAX_SEATS];
        tricks.copy_from_slice(&self.tricks_won);
        out.emit(|| Event {
            public: PublicEvent::DealSettled(Box::new(Settlement {
                deal: self.deal,
                result,
                tricks,
                net,
                betes,
                hidden_revealed: self.hidden,
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
        let mut stayers = SeatSet::default();
        for s in (0..self.seats).map(Seat).filter(|&s| self.is_in(s)) {
            stayers.insert(s);
        }
        self.summary = Some(SummaryHead {
            deal: self.deal,
            dealer: self.dealer,
            declarer: None,
            contrer: None,
            stayers,
            seats: self.seats,
            tricks,
            outcome: match end {
                End::Played => "played",
                End::LoneStayer(_) => "lone_stayer",
                End::Carried => "carried",
                End::Flush { .. } => "flush",
                End::DealerTakesPot => "dealer_takes_pot",
            },
            net,
        });

        // 0.4 item 17: the pot is empty (and no bête queued) after the settlement
        let end_test = self.pot == 0 && self.queue.is_empty();
        if ctx.is_last_settlement(end_test) {
            self.return_stakes(ctx, out);
        }
    }

    /// The match's last settlement: the pot split equally, the odd jetons one each from the
    /// last deal's eldest in play order; queued bêtes back to their payers (0.4 item 17).
    fn return_stakes(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        let n = self.seats as i64;
        let mut returned = [0i64; MAX_SEATS];
        let share = self.pot / n;
        let mut rem = self.pot % n;
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
        self.pot = 0;
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
