//! The five tricks: duties of play in tricks 1–2 (0.4 items 7 and 12, BO5/BO6, BB9/BB10, LL7),
//! following in tricks 3–5 (BO7, LL8, BB12), the face-down lead (A23) and lenient revokes
//! (0.4 item 19).

use super::{ExchangeTable, Play, Stage, settle};
use crate::action::Action;
use crate::card::Card;
use crate::cardset::CardSet;
use crate::event::{Event, PrivateEvent, Privates, PublicEvent};
use crate::family::Ctx;
use crate::game::ActionError;
use crate::ruleset::RulesetId;
use crate::seat::Seat;
use crate::sink::Sink;

/// Which duty limits a seat's cards now; it chooses the error for a card outside them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Duty {
    Free,
    LeadTopBower,
    LeadSecondBower,
    LeadTrump,
    LeadHidden,
    PlayBower(Card),
    FollowTrump,
    AnswerHidden,
    FollowSuit,
}

/// The strictly legal cards of the seat to play: face up, face down, and the duty behind them.
#[derive(Copy, Clone, Debug)]
struct Legal {
    face_up: CardSet,
    face_down: CardSet,
    duty: Duty,
}

impl ExchangeTable {
    /// Whether the trump obligations of tricks 1–2 apply to the current trick (0.4 item 12):
    /// not in Lanterlui with exactly two active seats (LL7).
    fn duties(&self) -> bool {
        self.trick < 2 && !(self.lanterlui() && self.inn.count_ones() == 2)
    }

    /// Whether a follower must follow the suit led in the current trick (outside the trump
    /// answers of tricks 1–2): Beste Boer only in tricks 3–5 with `follow_after_trick2` (BO7);
    /// Lanterlui and Bester Bube always in tricks 1–2, and in 3–5 with `follow_suit`.
    fn must_follow(&self) -> bool {
        match self.ruleset {
            RulesetId::BesteBoer => self.trick >= 2 && self.config.follow_after_trick2,
            _ => self.trick < 2 || self.config.follow_suit,
        }
    }

    fn current(&self) -> &[Play] {
        let t = self.trick as usize;
        &self.plays[t][..self.lens[t] as usize]
    }

    /// The suit a lead asks for: trumps for a face-down lead (A23).
    fn led_suit(&self, lead: &Play) -> crate::card::Suit {
        if lead.hidden {
            self.trumps.suit
        } else {
            self.trumps.suit_of(lead.card)
        }
    }

    /// The seat holding the current trick so far: the first play of the best key (a face-down
    /// card's key is the same whatever the card, so this tells nobody anything hidden); `None`
    /// before the first card and once the trick is complete.
    pub(super) fn holder(&self) -> Option<Seat> {
        let plays = self.current();
        let first = plays.first()?;
        if self.winners[self.trick as usize].is_some() {
            return None;
        }
        let led = self.led_suit(first);
        let mut best = *first;
        for p in plays {
            if self.trumps.trick_key(p.card, p.hidden, led)
                > self.trumps.trick_key(best.card, best.hidden, led)
            {
                best = *p;
            }
        }
        Some(best.seat)
    }

    /// The best key in the trick so far.
    fn best_key(&self) -> u8 {
        let plays = self.current();
        let led = self.led_suit(&plays[0]);
        plays
            .iter()
            .map(|p| self.trumps.trick_key(p.card, p.hidden, led))
            .max()
            .unwrap_or(0)
    }

    fn legal(&self, seat: Seat) -> Legal {
        let hand = self.hands[seat.index()];
        let tr = &self.trumps;
        let trumps = hand.intersect(tr.mask);
        let free = Legal {
            face_up: hand,
            face_down: CardSet::EMPTY,
            duty: Duty::Free,
        };
        let only = |c: Card, duty| Legal {
            face_up: CardSet::single(c),
            face_down: CardSet::EMPTY,
            duty,
        };
        let plays = self.current();
        let duties = self.duties();
        if plays.is_empty() {
            if !duties {
                return free;
            }
            if hand.contains(tr.top) {
                return only(tr.top, Duty::LeadTopBower);
            }
            if self.trick == 1 && hand.contains(tr.second) {
                return only(tr.second, Duty::LeadSecondBower);
            }
            if !trumps.is_empty() {
                return Legal {
                    face_up: trumps,
                    face_down: CardSet::EMPTY,
                    duty: Duty::LeadTrump,
                };
            }
            return Legal {
                face_up: CardSet::EMPTY,
                face_down: hand,
                duty: Duty::LeadHidden,
            };
        }
        let lead = plays[0];
        if duties {
            // 0.4 item 7: the bower of this trick must be played, except by the last player
            let bower = if self.trick == 0 { tr.top } else { tr.second };
            if hand.contains(bower) {
                let mut cards = CardSet::single(bower);
                let last = plays.len() + 1 == self.inn.count_ones() as usize;
                if last {
                    let best = self.best_key();
                    let led = self.led_suit(&lead);
                    for c in hand {
                        if tr.trick_key(c, false, led) > best {
                            cards.insert(c);
                        }
                    }
                }
                return Legal {
                    face_up: cards,
                    face_down: CardSet::EMPTY,
                    duty: Duty::PlayBower(bower),
                };
            }
            if lead.hidden || tr.is_trump(lead.card) {
                if trumps.is_empty() {
                    return free;
                }
                return Legal {
                    face_up: trumps,
                    face_down: CardSet::EMPTY,
                    duty: if lead.hidden {
                        Duty::AnswerHidden
                    } else {
                        Duty::FollowTrump
                    },
                };
            }
        }
        if self.must_follow() {
            let suit = tr.follow(hand, self.led_suit(&lead));
            if !suit.is_empty() {
                return Legal {
                    face_up: suit,
                    face_down: CardSet::EMPTY,
                    duty: Duty::FollowSuit,
                };
            }
        }
        free
    }

    /// Whether playing `action` now breaks a duty of play (strict legality).
    pub(super) fn breaks_duty(&self, seat: Seat, action: Action) -> bool {
        let l = self.legal(seat);
        match action {
            Action::Card(c) => !l.face_up.contains(c),
            Action::Hidden(c) => !l.face_down.contains(c),
            _ => false,
        }
    }

    pub(super) fn play_actions(&self, seat: Seat, out: &mut Vec<Action>) {
        let hand = self.hands[seat.index()];
        if self.lenient() {
            // every card of the hand stands; a broken duty is a revoke (0.4 item 19)
            out.extend(hand.iter().map(Action::Card));
            if self.current().is_empty() {
                out.extend(hand.iter().map(Action::Hidden));
            }
            return;
        }
        let l = self.legal(seat);
        out.extend(l.face_up.iter().map(Action::Card));
        out.extend(l.face_down.iter().map(Action::Hidden));
    }

    fn duty_error(&self, l: &Legal, hidden: bool) -> ActionError {
        let trump = self.trumps.suit;
        match l.duty {
            Duty::LeadHidden => ActionError::MustLeadHidden,
            _ if hidden => ActionError::HiddenNotAllowed(if self.duties() {
                "you hold a trump".to_string()
            } else {
                "only a trick-1 or trick-2 leader without a trump may lead face down".to_string()
            }),
            Duty::LeadTopBower => ActionError::MustLeadBower(format!("lead {}", self.trumps.top)),
            Duty::LeadSecondBower => {
                ActionError::MustLeadBower(format!("lead {}", self.trumps.second))
            }
            Duty::LeadTrump => ActionError::MustLeadTrump(format!("you hold a trump ({trump})")),
            Duty::PlayBower(b) => ActionError::MustPlayBower(format!(
                "play {b} (or, as the last player, a card that wins the trick)"
            )),
            Duty::FollowTrump => ActionError::MustFollowSuit(format!("trumps ({trump}) were led")),
            Duty::AnswerHidden => {
                ActionError::MustTrump("a face-down lead must be answered with a trump".to_string())
            }
            Duty::FollowSuit => ActionError::MustFollowSuit(format!(
                "{} was led",
                self.led_suit(&self.current()[0])
            )),
            Duty::Free => ActionError::Other("not a legal card".to_string()),
        }
    }

    pub(super) fn apply_play(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        card: Card,
        hidden: bool,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        let action = if hidden {
            Action::Hidden(card)
        } else {
            Action::Card(card)
        };
        if self.stage != Stage::Trick {
            return Err(self.wrong_phase(&action));
        }
        if !self.hands[seat.index()].contains(card) {
            return Err(ActionError::NotInHand(card));
        }
        let leading = self.current().is_empty();
        if hidden && !leading {
            return Err(ActionError::HiddenNotAllowed(
                "only a leader may play face down".to_string(),
            ));
        }
        let l = self.legal(seat);
        let ok = if hidden {
            l.face_down.contains(card)
        } else {
            l.face_up.contains(card)
        };
        if !ok {
            if !self.lenient() {
                return Err(self.duty_error(&l, hidden));
            }
            self.revokes[self.revoke_len as usize] = seat;
            self.revoke_len += 1;
        }
        self.hands[seat.index()].remove(card);
        let t = self.trick as usize;
        self.plays[t][self.lens[t] as usize] = Play { seat, card, hidden };
        self.lens[t] += 1;
        if hidden {
            self.hidden.insert(card);
            out.emit(|| Event {
                public: PublicEvent::HiddenLead { seat },
                private: Privates::One((seat, PrivateEvent::HiddenCard(card))),
                reveal: None,
            });
        } else {
            out.emit(|| Event::public(PublicEvent::CardPlayed { seat, card }));
        }
        if self.lens[t] as u32 == self.inn.count_ones() {
            let plays = self.current();
            let led = self.led_suit(&plays[0]);
            let mut winner = plays[0];
            for p in plays {
                if self.trumps.trick_key(p.card, p.hidden, led)
                    > self.trumps.trick_key(winner.card, winner.hidden, led)
                {
                    winner = *p;
                }
            }
            self.winners[t] = Some(winner.seat);
            self.tricks_won[winner.seat.index()] += 1;
            out.emit(|| {
                Event::public(PublicEvent::TrickWon {
                    trick: self.trick,
                    winner: winner.seat,
                })
            });
            if self.trick == 4 {
                self.settle(ctx, settle::End::Played, out);
            } else {
                self.trick += 1;
                self.turn = winner.seat;
            }
        } else {
            let mut next = seat.next(self.seats);
            while !self.is_in(next) {
                next = next.next(self.seats);
            }
            self.turn = next;
        }
        Ok(())
    }
}
