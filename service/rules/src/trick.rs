//! Trick play of Bête, Ace-high and Beast (0.4 items 4–5): follow, head in suit, trump,
//! overtrump, with every test a few bit operations on 64-bit masks.

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::game::ActionError;
use crate::ruleset::MAX_SEATS;
use crate::seat::Seat;

/// A playing order: for each card bit, the cards of the same suit that beat it.
#[derive(Debug)]
pub(crate) struct Ranking {
    above: [u64; 64],
}

/// Écarté strength of each rank (index = `Rank` discriminant): K Q J A 10 9 … 2 (B3, BS2).
const ECARTE: [u8; 13] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 9];
/// Ace high: A K Q J 10 … 2 (AH1).
const ACE_HIGH: [u8; 13] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

const fn above_table(strength: &[u8; 13]) -> [u64; 64] {
    let mut t = [0u64; 64];
    let mut s = 0;
    while s < 4 {
        let mut r = 0;
        while r < 13 {
            let mut m = 0u64;
            let mut r2 = 0;
            while r2 < 13 {
                if strength[r2] > strength[r] {
                    m |= 1 << (s * 16 + r2);
                }
                r2 += 1;
            }
            t[s * 16 + r] = m;
            r += 1;
        }
        s += 1;
    }
    t
}

pub(crate) static ECARTE_RANKING: Ranking = Ranking {
    above: above_table(&ECARTE),
};
pub(crate) static ACE_HIGH_RANKING: Ranking = Ranking {
    above: above_table(&ACE_HIGH),
};

impl Ranking {
    /// The cards of `c`'s suit that beat it.
    #[inline]
    pub fn above(&self, c: Card) -> u64 {
        self.above[c.bit() as usize]
    }

    /// `a` beats `b` (same suit).
    #[inline]
    pub fn beats(&self, a: Card, b: Card) -> bool {
        self.above(b) & (1 << a.bit()) != 0
    }

    /// The rank order of this ranking for comparing triplets etc.: a higher value is stronger.
    pub fn strength(&self, r: Rank) -> u32 {
        // Count the cards of one suit below r's card: below = 12 - |above|.
        12 - self.above(Card::new(r, Suit::Spades)).count_ones()
    }
}

/// The trick in progress.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Trick {
    pub leader: Seat,
    /// Cards in play order from the leader.
    pub cards: [Card; MAX_SEATS],
    pub len: u8,
    /// The suit led (meaningful once `len > 0`).
    led: Suit,
    /// The card winning so far (meaningful once `len > 0`). It is always of the suit led or a
    /// trump, so it is both the "highest card of the suit led" of 0.4 item 4 while the trick is
    /// not trumped (a trump lead included) and the "highest trump" once it is.
    best: Card,
    /// A trump was played to a plain-suit lead (0.4 item 4).
    trumped: bool,
    pub winner: Seat,
}

impl Trick {
    #[inline]
    pub fn new(leader: Seat) -> Trick {
        let two = Card::new(Rank::Two, Suit::Spades);
        Trick {
            leader,
            cards: [two; MAX_SEATS],
            len: 0,
            led: Suit::Spades,
            best: two,
            trumped: false,
            winner: leader,
        }
    }

    #[inline]
    pub fn led(&self) -> Option<Suit> {
        if self.len == 0 { None } else { Some(self.led) }
    }

    /// The cards of `hand` that may be played now (0.4 item 4; Beast: `must_head = false`).
    #[inline]
    pub fn legal(&self, hand: CardSet, trump: Suit, ranking: &Ranking, must_head: bool) -> CardSet {
        if self.len == 0 {
            return hand;
        }
        let h = hand.bits();
        let in_suit = h & CardSet::suit(self.led).bits();
        if in_suit != 0 {
            if must_head && !self.trumped {
                // Not trumped: `best` is the highest card of the suit led.
                let higher = in_suit & ranking.above(self.best);
                if higher != 0 {
                    return CardSet(higher);
                }
            }
            return CardSet(in_suit);
        }
        let trumps = h & CardSet::suit(trump).bits();
        if trumps == 0 {
            return hand;
        }
        if !self.trumped {
            return CardSet(trumps);
        }
        // Trumped: `best` is the highest trump.
        let over = trumps & ranking.above(self.best);
        if over != 0 { CardSet(over) } else { hand }
    }

    /// Why `card` (in `hand`, not in `legal`) may not be played.
    pub fn why_illegal(&self, hand: CardSet, card: Card, trump: Suit) -> ActionError {
        let led = self.led().unwrap_or(card.suit());
        if !hand.of_suit(led).is_empty() {
            if card.suit() != led {
                ActionError::MustFollowSuit(format!("{card} does not follow {led}"))
            } else {
                ActionError::MustHead(format!(
                    "{card} does not head the highest {led} in the trick"
                ))
            }
        } else if !self.trumped {
            ActionError::MustTrump(format!("void in {led}, {card} is not a trump ({trump})"))
        } else {
            ActionError::MustOvertrump(format!(
                "{card} does not beat the highest trump in the trick"
            ))
        }
    }

    /// Adds `seat`'s card and updates the winner.
    #[inline]
    pub fn play(&mut self, seat: Seat, card: Card, trump: Suit, ranking: &Ranking) {
        self.cards[self.len as usize] = card;
        self.len += 1;
        let s = card.suit();
        if self.len == 1 {
            self.led = s;
            self.best = card;
            self.winner = seat;
            return;
        }
        // `best` is of the suit led or a trump: a card of its suit wins by rank, a trump on a
        // plain card wins outright, anything else (a discard) never does.
        let wins = if s == self.best.suit() {
            ranking.beats(card, self.best)
        } else {
            s == trump
        };
        if s == trump && self.led != trump {
            self.trumped = true;
        }
        if wins {
            self.best = card;
            self.winner = seat;
        }
    }
}
