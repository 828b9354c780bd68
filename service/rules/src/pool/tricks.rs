//! The five tricks of Part II: RULES.md 0.4 item 4 (follow, head, trump, overtrump) with
//! `must_head_in_suit` (MO15, LO10, RA8), Mistigri's and Pam's laws (MI3, LO3), "Pam be civil"
//! (LO4), Loo's lead of the Ace of trumps (LO11) and Rams's undertrumping (RA8).

use super::{PoolTable, Stage, settle};
use crate::card::{Card, Rank};
use crate::cardset::CardSet;
use crate::config::{AceLead, Undertrump};
use crate::event::{Event, PublicEvent};
use crate::family::Ctx;
use crate::game::ActionError;
use crate::seat::Seat;
use crate::sink::Sink;

/// Which duty limits a seat's cards now; it chooses the error for a card outside them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Duty {
    Free,
    LeadAce(Card),
    Head,
    Follow,
    Trump,
    Overtrump,
    Undertrump,
    /// LO4: Pam may not be played to a led Ace of trumps.
    Civil,
}

impl PoolTable {
    /// The seat holding the current trick so far (the first card of the best key); `None`
    /// before the first card and once the trick is complete.
    pub(super) fn holder(&self) -> Option<Seat> {
        let plays = self.current();
        let &(_, lead) = plays.first()?;
        if self.winners[self.trick as usize].is_some() {
            return None;
        }
        let o = self.order;
        let led = o.suit_of(lead);
        let mut best = plays[0];
        for &p in plays {
            if o.trick_key(p.1, led) > o.trick_key(best.1, led) {
                best = p;
            }
        }
        Some(best.0)
    }

    fn current(&self) -> &[(Seat, Card)] {
        let t = self.trick as usize;
        &self.plays[t][..self.lens[t] as usize]
    }

    /// The strictly legal cards of the seat to play, and the duty behind them.
    pub(super) fn legal(&self, seat: Seat) -> (CardSet, Duty) {
        let hand = self.hands[seat.index()];
        let o = &self.order;
        let top = o.top.filter(|t| hand.contains(*t));
        let plays = self.current();
        let Some(&(_, lead)) = plays.first() else {
            // LO11: the trick-1 leader leads the Ace of trumps (the King if the Ace is turned
            // up); a free Pam stays an additional legal lead
            if self.loo() && self.trick == 0 && self.config.ace_lead == AceLead::FirstTrick {
                let ace = Card::new(Rank::Ace, o.trump);
                let due = if self.turn_up == ace {
                    Card::new(Rank::King, o.trump)
                } else {
                    ace
                };
                if hand.contains(due) {
                    let mut legal = CardSet::single(due);
                    if let Some(t) = top.filter(|_| o.free) {
                        legal.insert(t);
                    }
                    return (legal, Duty::LeadAce(due));
                }
            }
            return (hand, Duty::Free);
        };
        // LO4: Pam be civil to a led Ace of trumps, unless it is the last card
        let civil = self.loo()
            && self.config.pam_be_civil
            && lead == Card::new(Rank::Ace, o.trump)
            && !o.is_top(lead);
        let mut h = hand;
        if let Some(t) = top
            && (o.free || civil)
        {
            // MI3, LO3 "free": duties are computed as if the top card were not in the hand
            h.remove(t);
        }
        if h.is_empty() {
            return (hand, Duty::Free);
        }
        let (mut legal, duty) = self.follow_duties(h, plays);
        if let Some(t) = top
            && o.free
            && !civil
        {
            legal.insert(t);
        }
        (legal, duty)
    }

    /// 0.4 item 4 (with RA8's undertrump) for the cards `h` of a follower.
    fn follow_duties(&self, h: CardSet, plays: &[(Seat, Card)]) -> (CardSet, Duty) {
        let o = &self.order;
        let led = o.suit_of(plays[0].1);
        let trumped = led != o.trump && plays.iter().any(|&(_, c)| o.is_trump(c));
        let best = plays
            .iter()
            .map(|&(_, c)| o.trick_key(c, led))
            .max()
            .unwrap_or(0);
        let above =
            |cards: CardSet| -> CardSet { cards.iter().filter(|&c| o.power(c) > best).collect() };
        let in_suit = o.members(h, led);
        if !in_suit.is_empty() {
            if self.config.must_head_in_suit && !trumped {
                let higher = above(in_suit);
                if !higher.is_empty() {
                    return (higher, Duty::Head);
                }
            }
            return (in_suit, Duty::Follow);
        }
        let trumps = o.members(h, o.trump);
        if trumps.is_empty() {
            return (h, Duty::Free);
        }
        if !trumped {
            return (trumps, Duty::Trump);
        }
        let over = above(trumps);
        if !over.is_empty() {
            return (over, Duty::Overtrump);
        }
        if self.rams() && self.config.undertrump == Undertrump::Required {
            return (trumps, Duty::Undertrump);
        }
        (h, Duty::Free)
    }

    fn duty_error(&self, duty: Duty, card: Card) -> ActionError {
        let o = &self.order;
        let led = self
            .current()
            .first()
            .map(|&(_, c)| o.suit_of(c))
            .unwrap_or(o.trump);
        // A card outside the suit led breaks the duty to follow, whatever else applies.
        let duty = match duty {
            Duty::Head if o.suit_of(card) != led => Duty::Follow,
            d => d,
        };
        match duty {
            Duty::LeadAce(due) => ActionError::MustLeadTrump(format!(
                "the leader of trick 1 who holds {due} must lead it (LO11)"
            )),
            Duty::Head => ActionError::MustHead(format!(
                "{card} does not head the highest {led} in the trick"
            )),
            Duty::Follow => ActionError::MustFollowSuit(format!("{card} does not follow {led}")),
            Duty::Trump => ActionError::MustTrump(format!(
                "void in {led}, {card} is not a trump ({})",
                o.trump
            )),
            Duty::Overtrump => ActionError::MustOvertrump(format!(
                "{card} does not beat the highest trump in the trick"
            )),
            Duty::Undertrump => ActionError::MustTrump(format!(
                "void in {led} and unable to overtrump, {card} is not a trump: undertrump (RA8)"
            )),
            Duty::Civil => ActionError::Other(format!(
                "Pam be civil: {card} may not be played to the led Ace of trumps (LO4)"
            )),
            Duty::Free => ActionError::Other("not a legal card".to_string()),
        }
    }

    pub(super) fn apply_play(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        card: Card,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        if self.stage != Stage::Trick {
            return Err(self.wrong_phase(&crate::action::Action::Card(card)));
        }
        if !self.hands[seat.index()].contains(card) {
            return Err(ActionError::NotInHand(card));
        }
        let (legal, duty) = self.legal(seat);
        if !legal.contains(card) {
            // A refused Pam on a led Ace of trumps is refused by LO4, whatever else applies.
            let civil_lead = self
                .current()
                .first()
                .is_some_and(|&(_, lead)| lead == Card::new(Rank::Ace, self.order.trump));
            let duty = if self.loo() && self.order.is_top(card) && civil_lead {
                Duty::Civil
            } else {
                duty
            };
            return Err(self.duty_error(duty, card));
        }
        self.hands[seat.index()].remove(card);
        let t = self.trick as usize;
        self.plays[t][self.lens[t] as usize] = (seat, card);
        self.lens[t] += 1;
        out.emit(|| Event::public(PublicEvent::CardPlayed { seat, card }));
        if u32::from(self.lens[t]) == self.inn.count_ones() {
            let o = self.order;
            let plays = self.current();
            let led = o.suit_of(plays[0].1);
            let mut winner = plays[0];
            for &p in plays {
                if o.trick_key(p.1, led) > o.trick_key(winner.1, led) {
                    winner = p;
                }
            }
            let winner = winner.0;
            self.winners[t] = Some(winner);
            self.tricks_won[winner.index()] += 1;
            out.emit(|| {
                Event::public(PublicEvent::TrickWon {
                    trick: self.trick,
                    winner,
                })
            });
            if self.trick == 4 {
                self.settle(ctx, settle::End::Played, out);
            } else {
                self.trick += 1;
                self.turn = winner;
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
