//! Cards, suits and ranks, and their two-character notation (RULES.md 11.2).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// A suit. The discriminants are the canonical pack order of RULES.md 11.5 (S, H, D, C).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    Spades = 0,
    Hearts = 1,
    Diamonds = 2,
    Clubs = 3,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn from_index(i: usize) -> Suit {
        Suit::ALL[i & 3]
    }

    pub const fn is_red(self) -> bool {
        matches!(self, Suit::Hearts | Suit::Diamonds)
    }

    /// The other suit of the same colour: whose Jack is the second bower (A21).
    pub const fn same_colour(self) -> Suit {
        match self {
            Suit::Spades => Suit::Clubs,
            Suit::Clubs => Suit::Spades,
            Suit::Hearts => Suit::Diamonds,
            Suit::Diamonds => Suit::Hearts,
        }
    }

    pub const fn letter(self) -> char {
        match self {
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
            Suit::Diamonds => 'D',
            Suit::Clubs => 'C',
        }
    }

    pub const fn symbol(self) -> char {
        match self {
            Suit::Spades => '♠',
            Suit::Hearts => '♥',
            Suit::Diamonds => '♦',
            Suit::Clubs => '♣',
        }
    }

    pub fn from_letter(c: char) -> Option<Suit> {
        match c.to_ascii_uppercase() {
            'S' => Some(Suit::Spades),
            'H' => Some(Suit::Hearts),
            'D' => Some(Suit::Diamonds),
            'C' => Some(Suit::Clubs),
            _ => None,
        }
    }
}

impl fmt::Display for Suit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A rank. The discriminants are the canonical ascending order of RULES.md 11.5
/// (2 … A); each ruleset has its own playing order on top of this.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    Two = 0,
    Three = 1,
    Four = 2,
    Five = 3,
    Six = 4,
    Seven = 5,
    Eight = 6,
    Nine = 7,
    Ten = 8,
    Jack = 9,
    Queen = 10,
    King = 11,
    Ace = 12,
}

impl Rank {
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn from_index(i: usize) -> Rank {
        Rank::ALL[if i < 13 { i } else { 12 }]
    }

    pub const fn letter(self) -> char {
        match self {
            Rank::Two => '2',
            Rank::Three => '3',
            Rank::Four => '4',
            Rank::Five => '5',
            Rank::Six => '6',
            Rank::Seven => '7',
            Rank::Eight => '8',
            Rank::Nine => '9',
            Rank::Ten => 'T',
            Rank::Jack => 'J',
            Rank::Queen => 'Q',
            Rank::King => 'K',
            Rank::Ace => 'A',
        }
    }

    pub fn from_letter(c: char) -> Option<Rank> {
        Rank::ALL
            .iter()
            .copied()
            .find(|r| r.letter() == c.to_ascii_uppercase())
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A card: a `Copy` byte, `suit * 16 + rank`, so that a set of cards fits a 64-bit mask.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

impl Card {
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card((suit as u8) << 4 | rank as u8)
    }

    /// The 52 cards in canonical order: suits S, H, D, C, each rank 2 up to A.
    pub fn all() -> impl Iterator<Item = Card> {
        Suit::ALL
            .into_iter()
            .flat_map(|s| Rank::ALL.into_iter().map(move |r| Card::new(r, s)))
    }

    /// Appends the two-character code of RULES.md 11.2 (`"KS"`), exactly as `Display` writes
    /// it, without the formatting machinery (a server writes dozens for every decision).
    pub fn push_code(self, out: &mut String) {
        out.push(self.rank().letter());
        out.push(self.suit().letter());
    }

    pub const fn rank(self) -> Rank {
        Rank::from_index((self.0 & 15) as usize)
    }

    pub const fn suit(self) -> Suit {
        Suit::from_index((self.0 >> 4) as usize)
    }

    /// The bit index of this card in a [`crate::CardSet`] (0..64).
    pub const fn bit(self) -> u32 {
        self.0 as u32
    }

    /// The card at a bit index, if the index names one (rank nibble 0..=12).
    pub const fn from_bit(bit: u32) -> Option<Card> {
        if bit < 64 && (bit & 15) < 13 {
            Some(Card(bit as u8))
        } else {
            None
        }
    }

    /// The card at a bit index taken from a `CardSet` of real cards (a dealt hand or a subset
    /// of one), without `from_bit`'s check: a playout picks 25 cards a deal this way.
    #[inline]
    pub(crate) const fn of_set_bit(bit: u32) -> Card {
        debug_assert!(bit < 64 && (bit & 15) < 13, "not a card's bit");
        Card((bit & 63) as u8)
    }

    /// The card with its suit symbol, for terminals: `K♠`, `10♥`.
    pub fn pretty(self) -> String {
        let r = match self.rank() {
            Rank::Ten => "10".to_string(),
            r => r.letter().to_string(),
        };
        format!("{}{}", r, self.suit().symbol())
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank().letter(), self.suit().letter())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A token that is not a card code. The token is kept so the message can name it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "not a card: {token:?} (a card is a rank 2-9, T, J, Q, K, A followed by a suit S, H, D, C, e.g. KS or TH)"
)]
pub struct ParseCardError {
    pub token: String,
}

impl FromStr for Card {
    type Err = ParseCardError;

    fn from_str(s: &str) -> Result<Card, ParseCardError> {
        let err = || ParseCardError {
            token: s.to_string(),
        };
        let mut chars = s.chars();
        let (Some(r), Some(su), None) = (chars.next(), chars.next(), chars.next()) else {
            return Err(err());
        };
        let rank = Rank::from_letter(r).ok_or_else(err)?;
        let suit = Suit::from_letter(su).ok_or_else(err)?;
        Ok(Card::new(rank, suit))
    }
}

impl serde::Serialize for Card {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Card {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Card, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_is_case_insensitive_and_display_upper() {
        let c: Card = "ks".parse().unwrap();
        assert_eq!(c, Card::new(Rank::King, Suit::Spades));
        assert_eq!(c.to_string(), "KS");
        assert_eq!("tH".parse::<Card>().unwrap().to_string(), "TH");
    }

    #[test]
    fn parse_errors_name_the_token() {
        for bad in ["", "K", "KSS", "1S", "KX", "10H", "♠K"] {
            let e = bad.parse::<Card>().unwrap_err();
            assert_eq!(e.token, bad);
            assert!(e.to_string().contains(&format!("{bad:?}")));
        }
    }

    #[test]
    fn every_card_round_trips() {
        for s in Suit::ALL {
            for r in Rank::ALL {
                let c = Card::new(r, s);
                assert_eq!(c.rank(), r);
                assert_eq!(c.suit(), s);
                assert_eq!(c.to_string().parse::<Card>().unwrap(), c);
                assert_eq!(Card::from_bit(c.bit()), Some(c));
            }
        }
    }

    #[test]
    fn same_colour_jacks() {
        assert_eq!(Suit::Spades.same_colour(), Suit::Clubs);
        assert_eq!(Suit::Hearts.same_colour(), Suit::Diamonds);
        assert_eq!(Suit::Diamonds.same_colour(), Suit::Hearts);
        assert_eq!(Suit::Clubs.same_colour(), Suit::Spades);
    }
}
