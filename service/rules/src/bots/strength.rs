//! How strong a card is for the bots: which cards are trumps and the order of play of each
//! ruleset (B3, AH1, BS2, BO2, LL2, BB2), worked out from public facts only (the trump suit).

use crate::card::{Card, Rank, Suit};
use crate::ruleset::RulesetId;

/// The trump suit and card order of a deal, as a seat can know them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CardOrder {
    pub ruleset: RulesetId,
    pub trump: Suit,
}

/// Power of the face-down "Trumpf!" lead: below every real trump (A23), above every plain card.
pub(crate) const HIDDEN_POWER: u8 = 99;

impl CardOrder {
    pub fn new(ruleset: RulesetId, trump: Suit) -> CardOrder {
        CardOrder { ruleset, trump }
    }

    /// Whether the exchange family's second bower (the same-colour Jack) exists here.
    fn has_bowers(self) -> bool {
        self.ruleset.is_exchange_family()
    }

    fn second_bower(self) -> Card {
        Card::new(Rank::Jack, self.trump.same_colour())
    }

    pub fn top_bower(self) -> Card {
        Card::new(Rank::Jack, self.trump)
    }

    /// A bower of the exchange family (top or second).
    pub fn is_bower(self, c: Card) -> bool {
        self.has_bowers() && (c == self.top_bower() || c == self.second_bower())
    }

    /// Mistigri and Pam (J♣, the default `pam`): the top trump of Mistigri and Loo (MI2, LO2).
    pub fn top(self) -> Option<Card> {
        matches!(self.ruleset, RulesetId::Mistigri | RulesetId::Loo)
            .then(|| Card::new(Rank::Jack, Suit::Clubs))
    }

    /// Trumps: the trump suit, plus the second bower in the exchange family (A21) and
    /// Mistigri or Pam (MI2, LO2).
    pub fn is_trump(self, c: Card) -> bool {
        c.suit() == self.trump
            || (self.has_bowers() && c == self.second_bower())
            || self.top() == Some(c)
    }

    /// The suit a card belongs to for following: the second bower belongs to trumps.
    pub fn suit_of(self, c: Card) -> Suit {
        if self.is_trump(c) {
            self.trump
        } else {
            c.suit()
        }
    }

    /// Strength within the card's own suit (higher beats lower); trumps get 100 on top, so
    /// any trump outranks any plain card.
    pub fn power(self, c: Card) -> u8 {
        let r = c.rank();
        let within = match self.ruleset {
            // Mistigri and Pam above every trump (MI2, LO2).
            _ if self.top() == Some(c) => 30,
            // K > Q > J > A > 10 > 9 … (the Écarté order of B3, BS2 and MO3).
            RulesetId::Bete | RulesetId::Beast | RulesetId::Mouche | RulesetId::Mistigri => match r
            {
                Rank::King => 12,
                Rank::Queen => 11,
                Rank::Jack => 10,
                Rank::Ace => 9,
                other => other.index() as u8,
            },
            // A > K > Q > J > 10 … (AH1, LO2, RA2's default).
            RulesetId::BeteAceHigh | RulesetId::Loo | RulesetId::Rams => r.index() as u8,
            // Bowers on top of trumps, then A K Q 10 …; plain suits A K Q J 10 ….
            _ if self.is_trump(c) => {
                if c == self.top_bower() {
                    20
                } else if c == self.second_bower() {
                    19
                } else {
                    r.index() as u8
                }
            }
            _ => r.index() as u8,
        };
        if self.is_trump(c) {
            100 + within
        } else {
            within
        }
    }

    /// 0 for the top trump, 1 for the next, …: how many trumps of the pack outrank `c`
    /// (whatever the pack's lowest rank, the higher trumps are always in it).
    pub fn trump_rank_from_top(self, c: Card) -> u8 {
        let p = self.power(c);
        let mut above = 0;
        for r in Rank::ALL {
            for s in [self.trump, self.trump.same_colour()] {
                let o = Card::new(r, s);
                if self.is_trump(o) && self.power(o) > p {
                    above += 1;
                }
            }
        }
        above
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    #[test]
    fn orders_of_each_ruleset() {
        let bete = CardOrder::new(RulesetId::Bete, Suit::Hearts);
        assert!(bete.power(c("KH")) > bete.power(c("QH")));
        assert!(bete.power(c("JH")) > bete.power(c("AH")));
        assert!(bete.power(c("7H")) > bete.power(c("KS")));
        assert_eq!(bete.trump_rank_from_top(c("KH")), 0);
        assert_eq!(bete.trump_rank_from_top(c("AH")), 3);

        let ace = CardOrder::new(RulesetId::BeteAceHigh, Suit::Hearts);
        assert!(ace.power(c("AH")) > ace.power(c("KH")));

        let bb = CardOrder::new(RulesetId::BesterBube, Suit::Diamonds);
        assert!(bb.is_trump(c("JH")));
        assert_eq!(bb.suit_of(c("JH")), Suit::Diamonds);
        assert!(bb.power(c("JD")) > bb.power(c("JH")));
        assert!(bb.power(c("JH")) > bb.power(c("AD")));
        assert!(bb.power(c("AS")) > bb.power(c("JS")));
        assert_eq!(bb.trump_rank_from_top(c("AD")), 2);
        assert!(!CardOrder::new(RulesetId::Bete, Suit::Diamonds).is_trump(c("JH")));

        let loo = CardOrder::new(RulesetId::Loo, Suit::Hearts);
        assert!(loo.is_trump(c("JC")));
        assert!(loo.power(c("JC")) > loo.power(c("AH")));
        assert!(loo.power(c("AH")) > loo.power(c("KH")));
        let mistigri = CardOrder::new(RulesetId::Mistigri, Suit::Spades);
        assert!(mistigri.power(c("JC")) > mistigri.power(c("KS")));
        assert!(mistigri.power(c("KS")) > mistigri.power(c("AS")));
    }
}
