//! Events: what happened, split by who may see it.
//!
//! Every event has a public part that every seat and every spectator may see, and private
//! parts for single seats. A server projects an event for a recipient with [`Event::project`]
//! and never needs to know the rules. `reveal` parts go to spectators only (0.4 item 18: a
//! settled deal's hidden cards may be shown to spectators, never to seats before the match ends).

use crate::action::Action;
use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::ruleset::MAX_SEATS;
use crate::seat::Seat;
use crate::view::{Pools, Viewer};

/// Per-seat amounts in jetons (index = seat). Fixed-size so events never allocate.
pub type Amounts = [i64; MAX_SEATS];

/// The outcome of a settled deal, for the deal summary and the `DealSettled` event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DealResult {
    /// Bête: the declarer (and contrer, if any) and how each fared.
    Bidders {
        declarer: Seat,
        declarer_result: BidderResult,
        contrer: Option<(Seat, BidderResult)>,
    },
    /// Bête: everyone passed and no Curieuse followed (B18).
    AllPassed,
    /// Beast: the heaps went where BS6–BS8 say (None = the heap stays).
    Heaps {
        king: Option<Seat>,
        play: Option<Seat>,
        triolet: Option<Seat>,
    },
    /// Exchange family: tricks were played; `stayers` played them.
    Played { stayers: SeatSet },
    /// Exchange family: one seat stayed after round 1 and took the pot (0.4 item 11).
    LoneStayer(Seat),
    /// Exchange family: nobody stayed; the pot carries (0.4 item 11).
    Carried,
    /// Lanterlui: a flush settled the deal (0.4 item 8).
    Flush { seat: Seat, dealt: bool },
    /// Lanterlui: every non-dealer dropped and all declined (0.4 item 9).
    DealerTakesPot(Seat),
}

/// A set of seats as a bit mask (bit i = seat i).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeatSet(pub u16);

impl SeatSet {
    pub fn contains(self, s: Seat) -> bool {
        self.0 & (1 << s.0) != 0
    }
    pub fn insert(&mut self, s: Seat) {
        self.0 |= 1 << s.0;
    }
    pub fn iter(self) -> impl Iterator<Item = Seat> {
        (0..16u8).filter(move |i| self.0 & (1 << i) != 0).map(Seat)
    }
}

/// How a Bête bidder fared (B24–B32).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BidderResult {
    Win { vole: bool },
    Null,
    Lose { devole: bool },
}

/// The part of an event every seat and spectator sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublicEvent {
    /// A deal began: antes were taken and the cards dealt (hands are private). Boxed, like
    /// every once-a-deal payload, so that the per-card events stay small.
    DealStarted(Box<DealStart>),
    /// A bid, drop, stand, challenge or decline: the whole action is public.
    Spoke { seat: Seat, action: Action },
    /// Bête: everyone passed and a Curieuse turned a new trump (B17).
    Curieuse {
        set_aside: Card,
        turn_up: Card,
        trump: Suit,
        paid: Box<Amounts>,
    },
    /// A seat exchanged `count` cards (which ones is private).
    Exchanged { seat: Seat, count: u8 },
    /// The dealer took up the turn-up and discarded one card face down.
    TookTurnUp { seat: Seat, turn_up: Card },
    /// Lanterlui, Loo: a flush was shown and settles the deal; Mouche, Mistigri: a mouche shown
    /// (every mouche in the comparison, the best last); Loo under `flush_rule = "hoyle"`: also
    /// the Pam that exempts its holder (`cards` is then that one card).
    FlushShown { seat: Seat, cards: CardSet },
    /// A card played face up.
    CardPlayed { seat: Seat, card: Card },
    /// A card led face down with "Trumpf!" (A23); the card is private until settlement.
    HiddenLead { seat: Seat },
    /// A trick is complete.
    TrickWon { trick: u8, winner: Seat },
    /// The deal is settled: who won what, the money that moved, the hidden leads revealed.
    DealSettled(Box<Settlement>),
    /// The match is over; everything left on the table has gone back (0.4 item 17).
    MatchEnded {
        returned: Box<Amounts>,
        balances: Box<Amounts>,
    },
}

/// The payload of [`PublicEvent::DealStarted`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DealStart {
    pub deal: u32,
    pub dealer: Seat,
    /// Antes, stakes and re-antes paid by each seat at the start (0.4 item 2).
    pub paid: Amounts,
    pub turn_up: Card,
    pub trump: Suit,
    /// Exchange family: this deal is a Muss (0.4 item 13).
    pub muss: bool,
    pub pools: Pools,
}

/// The payload of [`PublicEvent::DealSettled`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    pub deal: u32,
    pub result: DealResult,
    pub tricks: [u8; MAX_SEATS],
    /// Net change of each seat's balance by this settlement.
    pub net: Amounts,
    /// Bêtes paid in this deal, per seat (into the queue, the next pot, or to a contrer).
    pub betes: Amounts,
    /// Cards led face down in this deal, now public (0.4 item 18).
    pub hidden_revealed: CardSet,
    pub pools: Pools,
    pub balances: Amounts,
}

/// A part of an event only one seat sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrivateEvent {
    /// The seat's dealt hand.
    Hand(CardSet),
    /// The cards this seat set aside and drew.
    Exchange { set_aside: CardSet, drawn: CardSet },
    /// The card the dealer discarded when taking up the turn-up.
    Discarded(Card),
    /// The card this seat led face down.
    HiddenCard(Card),
}

/// What spectators learn once a deal is settled: every dealt hand and the whole deck order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reveal {
    pub deal: u32,
    pub hands: [CardSet; MAX_SEATS],
    pub deck: Vec<Card>,
}

/// The private parts of an event, at most one per seat: none, one seat's (held inline, so an
/// exchange, a discard or a face-down lead allocates nothing), or several (the dealt hands).
/// Reads as a slice of `(seat, part)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Privates {
    #[default]
    None,
    One((Seat, PrivateEvent)),
    Many(Vec<(Seat, PrivateEvent)>),
}

impl Privates {
    pub fn as_slice(&self) -> &[(Seat, PrivateEvent)] {
        match self {
            Privates::None => &[],
            Privates::One(p) => std::slice::from_ref(p),
            Privates::Many(v) => v,
        }
    }
}

impl std::ops::Deref for Privates {
    type Target = [(Seat, PrivateEvent)];
    fn deref(&self) -> &Self::Target {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a Privates {
    type Item = &'a (Seat, PrivateEvent);
    type IntoIter = std::slice::Iter<'a, (Seat, PrivateEvent)>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<Vec<(Seat, PrivateEvent)>> for Privates {
    fn from(v: Vec<(Seat, PrivateEvent)>) -> Privates {
        Privates::Many(v)
    }
}

impl FromIterator<(Seat, PrivateEvent)> for Privates {
    fn from_iter<I: IntoIterator<Item = (Seat, PrivateEvent)>>(it: I) -> Privates {
        Privates::Many(it.into_iter().collect())
    }
}

impl PartialEq<Vec<(Seat, PrivateEvent)>> for Privates {
    fn eq(&self, other: &Vec<(Seat, PrivateEvent)>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// One event as the engine emits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub public: PublicEvent,
    /// At most one private part per seat.
    pub private: Privates,
    /// Spectators only; set on `DealSettled`.
    pub reveal: Option<Box<Reveal>>,
}

/// An event as one recipient may see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projected<'a> {
    pub public: &'a PublicEvent,
    pub private: Option<&'a PrivateEvent>,
    pub reveal: Option<&'a Reveal>,
}

impl Event {
    pub fn public(public: PublicEvent) -> Event {
        Event {
            public,
            private: Privates::None,
            reveal: None,
        }
    }

    /// The only way an event should leave the engine for a recipient.
    pub fn project(&self, viewer: Viewer) -> Projected<'_> {
        match viewer {
            Viewer::Seat(s) => Projected {
                public: &self.public,
                private: self.private.iter().find(|(p, _)| *p == s).map(|(_, e)| e),
                reveal: None,
            },
            Viewer::Spectator => Projected {
                public: &self.public,
                private: None,
                reveal: self.reveal.as_deref(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not a speed test: per-card events are pushed ~30 times a deal, so the once-a-deal
    /// payloads stay boxed and an `Event` small (it was 328 bytes with them inline).
    #[test]
    fn events_stay_small() {
        assert!(
            std::mem::size_of::<PublicEvent>() <= 64,
            "{}",
            std::mem::size_of::<PublicEvent>()
        );
        assert!(
            std::mem::size_of::<Event>() <= 112,
            "{}",
            std::mem::size_of::<Event>()
        );
    }
}
