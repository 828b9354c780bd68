//! The playing order of a Part II deal: the trump suit, the permanent top trump (Mistigri,
//! MI2; Pam, LO2), the rank order of the ruleset (MO3, LO2, RA2), and mouches and flushes
//! (MO8, MI4, LO9).

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::config::{Config, MistigriFlush, Pam, RamsRanking, TopLaws};
use crate::ruleset::RulesetId;

/// Écarté strength of each rank (index = `Rank` discriminant): K Q J A 10 9 … 2 (MO3, RA2).
const ECARTE: [u8; 13] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 9];
/// Ace high: A K Q J 10 … 2 (LO2, RA2).
const ACE_HIGH: [u8; 13] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

/// Power of the top card: above every trump (MI2, LO2).
const TOP_POWER: u8 = 100;
/// Trumps rank from here up, above every plain card.
const TRUMP_BASE: u8 = 50;

/// How the cards of one deal rank and which suit each belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Order {
    pub trump: Suit,
    /// Mistigri or Pam: the highest card of the pack, a trump (MI2, LO2). None in Mouche, Rams.
    pub top: Option<Card>,
    /// The top card is "subject to no laws" (MI3 and LO3 `"free"`).
    pub free: bool,
    /// Mistigri under `mistigri_flush = "trump_only"`: J♣ never completes a plain mouche (MI4).
    top_trump_only: bool,
    strength: [u8; 13],
}

impl Order {
    pub fn new(ruleset: RulesetId, config: &Config, trump: Suit) -> Order {
        let jack_of_clubs = Card::new(Rank::Jack, Suit::Clubs);
        let (top, free) = match ruleset {
            RulesetId::Mistigri => (Some(jack_of_clubs), config.mistigri_laws == TopLaws::Free),
            RulesetId::Loo => (
                Some(match config.pam {
                    Pam::JackOfClubs => jack_of_clubs,
                    Pam::TrumpJack => Card::new(Rank::Jack, trump),
                }),
                config.pam_laws == TopLaws::Free,
            ),
            _ => (None, false),
        };
        let strength = match ruleset {
            RulesetId::Loo => ACE_HIGH,
            RulesetId::Rams if config.ranking == RamsRanking::AceHigh => ACE_HIGH,
            _ => ECARTE,
        };
        Order {
            trump,
            top,
            free,
            top_trump_only: ruleset == RulesetId::Mistigri
                && config.mistigri_flush == MistigriFlush::TrumpOnly,
            strength,
        }
    }

    pub fn is_top(&self, c: Card) -> bool {
        self.top == Some(c)
    }

    /// The suit a card belongs to for following and trumping: the top card is a trump (MI2,
    /// MI3, LO3: a J♣ lead is a trump lead, J♣ on a plain lead trumps it).
    pub fn suit_of(&self, c: Card) -> Suit {
        if self.is_top(c) { self.trump } else { c.suit() }
    }

    pub fn is_trump(&self, c: Card) -> bool {
        self.suit_of(c) == self.trump
    }

    /// The cards of `hand` that belong to `suit` (a seat whose only club is J♣ is void in
    /// clubs when clubs are not trumps, MI3).
    pub fn members(&self, hand: CardSet, suit: Suit) -> CardSet {
        let mut m = hand.of_suit(suit);
        if let Some(top) = self.top {
            m.remove(top);
            if suit == self.trump && hand.contains(top) {
                m.insert(top);
            }
        }
        m
    }

    /// Strength: the top card above every trump, every trump above every plain card.
    pub fn power(&self, c: Card) -> u8 {
        if self.is_top(c) {
            TOP_POWER
        } else if c.suit() == self.trump {
            TRUMP_BASE + self.strength[c.rank().index()]
        } else {
            1 + self.strength[c.rank().index()]
        }
    }

    /// What a card counts for in a trick whose lead belongs to `led`: 0 if it cannot win.
    pub fn trick_key(&self, c: Card, led: Suit) -> u8 {
        if self.is_trump(c) || self.suit_of(c) == led {
            self.power(c)
        } else {
            0
        }
    }

    /// The suit of a five-card mouche or flush in `hand`, if it is one (MO8, MI4, LO9): five
    /// cards of one suit, or (with a top card that completes flushes) four of a suit plus the
    /// top card, which then belongs to the suit of the other four.
    pub fn flush_suit(&self, hand: CardSet) -> Option<Suit> {
        if hand.len() != 5 {
            return None;
        }
        if self.top_trump_only {
            // MI4 "trump_only": J♣ is only a trump
            let s = self.suit_of(hand.first()?);
            return hand.iter().all(|c| self.suit_of(c) == s).then_some(s);
        }
        let rest = match self.top {
            Some(top) if hand.contains(top) => hand.minus(CardSet::single(top)),
            _ => hand,
        };
        let s = rest.first()?.suit();
        (rest.of_suit(s) == rest).then_some(s)
    }

    /// A comparable key of the mouche or flush in `hand` (None if it is none): a trump one
    /// beats a plain one; within a class the cards compare from the top, the top card highest
    /// (MO8, MI4, LO9).
    pub fn flush_key(&self, hand: CardSet) -> Option<u64> {
        let suit = self.flush_suit(hand)?;
        let mut powers = [0u8; 5];
        for (i, c) in hand.iter().take(5).enumerate() {
            // Compared within the flush's suit: a plain card by its rank alone.
            powers[i] = self.power(c);
        }
        powers.sort_unstable_by(|a, b| b.cmp(a));
        let mut key = u64::from(suit == self.trump) << 48;
        for (i, p) in powers.iter().enumerate() {
            key |= u64::from(*p) << (32 - 8 * i);
        }
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deal::cards;

    fn card(s: &str) -> Card {
        s.parse().expect("test card")
    }

    #[test]
    fn mistigri_is_the_top_trump_and_clubs_lose_their_jack() {
        let c = Config::defaults(RulesetId::Mistigri, 4);
        let o = Order::new(RulesetId::Mistigri, &c, Suit::Hearts);
        assert!(o.power(card("JC")) > o.power(card("KH")));
        assert!(o.power(card("KH")) > o.power(card("QH")));
        assert!(o.power(card("JH")) > o.power(card("AH")), "Écarté order");
        assert_eq!(o.members(cards("JC 7S"), Suit::Clubs), CardSet::EMPTY);
        assert_eq!(o.members(cards("JC 7S"), Suit::Hearts), cards("JC"));
    }

    #[test]
    fn mouches_with_mistigri() {
        let c = Config::defaults(RulesetId::Mistigri, 4);
        let o = Order::new(RulesetId::Mistigri, &c, Suit::Spades);
        assert_eq!(o.flush_suit(cards("JC AH KH QH 9H")), Some(Suit::Hearts));
        assert_eq!(o.flush_suit(cards("JC AC KC QC 9C")), Some(Suit::Clubs));
        assert_eq!(o.flush_suit(cards("JC AS KH QH 9H")), None);
        let mut t = c.clone();
        t.mistigri_flush = MistigriFlush::TrumpOnly;
        let o = Order::new(RulesetId::Mistigri, &t, Suit::Spades);
        assert_eq!(o.flush_suit(cards("JC AH KH QH 9H")), None);
        assert_eq!(o.flush_suit(cards("JC AC KC QC 9C")), None);
        assert_eq!(o.flush_suit(cards("JC AS KS QS 9S")), Some(Suit::Spades));
    }
}
