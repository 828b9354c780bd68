//! Trump ranking with the two bowers (BO2, LL2, BB2, A21) and the Lanterlui flush (0.4 item 8).

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;

/// The trump suit of a deal and its two bowers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trumps {
    pub suit: Suit,
    /// Troef-Boer / Beste Boer / Bester Bube: the trump Jack.
    pub top: Card,
    /// Tweede Boer / Unterbube: the Jack of the same colour, a trump for every purpose (A21).
    pub second: Card,
    /// Every trump, the second bower included.
    pub mask: CardSet,
}

/// A face-down "Trumpf!" lead ranks below every trump and above every plain card (A23).
pub(crate) const HIDDEN_POWER: u8 = 31;

impl Trumps {
    pub fn new(suit: Suit) -> Trumps {
        let top = Card::new(Rank::Jack, suit);
        let second = Card::new(Rank::Jack, suit.same_colour());
        Trumps {
            suit,
            top,
            second,
            mask: CardSet::suit(suit).union(CardSet::single(second)),
        }
    }

    pub fn is_trump(&self, c: Card) -> bool {
        self.mask.contains(c)
    }

    /// The suit a card belongs to for following: the second bower is a trump (A21).
    pub fn suit_of(&self, c: Card) -> Suit {
        if c == self.second {
            self.suit
        } else {
            c.suit()
        }
    }

    /// The cards of `hand` that follow `suit`; a player whose only card of the printed
    /// same-colour suit is the second bower is void in that suit (A21).
    pub fn follow(&self, hand: CardSet, suit: Suit) -> CardSet {
        if suit == self.suit {
            hand.intersect(self.mask)
        } else {
            hand.of_suit(suit).minus(CardSet::single(self.second))
        }
    }

    /// Strength of a card: every trump (32..=63) above every plain card (1..=13). Within trumps
    /// the two bowers, then A K Q 10 … 2; within a plain suit A K Q J 10 … 2 (natural order).
    pub fn power(&self, c: Card) -> u8 {
        if c == self.top {
            63
        } else if c == self.second {
            62
        } else if c.suit() == self.suit {
            32 + c.rank().index() as u8
        } else {
            1 + c.rank().index() as u8
        }
    }

    /// What a card counts for in a trick whose lead has suit `led`: 0 if it cannot win.
    pub fn trick_key(&self, c: Card, hidden: bool, led: Suit) -> u8 {
        if hidden {
            HIDDEN_POWER
        } else if self.is_trump(c) || self.suit_of(c) == led {
            self.power(c)
        } else {
            0
        }
    }

    /// The best flush in a hand (0.4 item 8), as a comparable key and its cards. Classes, best
    /// first: five-card trump, five-card plain, four-card trump, four-card plain (the last two
    /// only with `four_card_flush`). Within a class the cards compare from the top.
    pub fn best_flush(&self, hand: CardSet, four_card_flush: bool) -> Option<(u64, CardSet)> {
        let mut best: Option<(u64, CardSet)> = None;
        for s in Suit::ALL {
            let cards = self.follow(hand, s);
            let trump = s == self.suit;
            let class = match (cards.len(), trump) {
                (5, true) => 3u64,
                (5, false) => 2,
                (4, true) if four_card_flush => 1,
                (4, false) if four_card_flush => 0,
                _ => continue,
            };
            let mut powers = [0u8; 5];
            for (i, c) in cards.iter().enumerate() {
                powers[i] = self.power(c);
            }
            powers.sort_unstable_by(|a, b| b.cmp(a));
            let mut key = class << 40;
            for (i, p) in powers.iter().enumerate() {
                key |= (*p as u64) << (32 - 8 * i);
            }
            if best.is_none_or(|(k, _)| key > k) {
                best = Some((key, cards));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deal::cards;

    #[test]
    fn bowers_and_ranking() {
        let t = Trumps::new(Suit::Diamonds);
        assert_eq!(t.top.to_string(), "JD");
        assert_eq!(t.second.to_string(), "JH");
        let order = ["JD", "JH", "AD", "KD", "QD", "TD", "9D", "7D"];
        for w in order.windows(2) {
            assert!(
                t.power(w[0].parse().expect("test value"))
                    > t.power(w[1].parse().expect("test value")),
                "{w:?}"
            );
        }
        assert!(t.power("7D".parse().expect("test value")) > HIDDEN_POWER);
        assert!(HIDDEN_POWER > t.power("AS".parse().expect("test value")));
        // A21: JH follows trumps only; a heart holder with only JH is void in hearts
        assert_eq!(t.follow(cards("JH 7S"), Suit::Hearts), CardSet::EMPTY);
        assert_eq!(t.follow(cards("JH 7S"), Suit::Diamonds), cards("JH"));
    }

    #[test]
    fn flush_classes() {
        let t = Trumps::new(Suit::Spades);
        let five_trump = t
            .best_flush(cards("JC 7S 8S 9S TS"), false)
            .expect("test value");
        let five_plain = t
            .best_flush(cards("AH KH QH JH TH"), false)
            .expect("test value");
        assert!(five_trump.0 > five_plain.0);
        assert_eq!(five_trump.1, cards("JC 7S 8S 9S TS"));
        assert!(t.best_flush(cards("AH KH QH JH 7S"), false).is_none());
        let four = t
            .best_flush(cards("AH KH QH JH 7S"), true)
            .expect("test value");
        assert!(four.0 < five_plain.0);
        // JC counts for trumps, so clubs without it are only four
        assert!(t.best_flush(cards("JC AC KC QC TC"), false).is_none());
    }
}
