//! A set of cards as a 64-bit mask: hands, tricks, packs. Bit `suit * 16 + rank`.

use std::fmt;

use crate::card::{Card, Suit};

#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct CardSet(pub u64);

/// The 13 rank bits of one suit.
const SUIT_MASK: u64 = 0x1fff;

impl CardSet {
    pub const EMPTY: CardSet = CardSet(0);

    pub const fn single(c: Card) -> CardSet {
        CardSet(1 << c.bit())
    }

    pub const fn bits(self) -> u64 {
        self.0
    }

    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn contains(self, c: Card) -> bool {
        self.0 & (1 << c.bit()) != 0
    }

    pub fn insert(&mut self, c: Card) {
        self.0 |= 1 << c.bit();
    }

    pub fn remove(&mut self, c: Card) {
        self.0 &= !(1 << c.bit());
    }

    pub const fn union(self, o: CardSet) -> CardSet {
        CardSet(self.0 | o.0)
    }

    pub const fn intersect(self, o: CardSet) -> CardSet {
        CardSet(self.0 & o.0)
    }

    pub const fn minus(self, o: CardSet) -> CardSet {
        CardSet(self.0 & !o.0)
    }

    pub const fn is_subset(self, o: CardSet) -> bool {
        self.0 & !o.0 == 0
    }

    /// Every card of a printed suit (whatever ranks exist in the pack).
    pub const fn suit(s: Suit) -> CardSet {
        CardSet(SUIT_MASK << (s as u32 * 16))
    }

    /// The cards of this set in a printed suit.
    pub const fn of_suit(self, s: Suit) -> CardSet {
        self.intersect(CardSet::suit(s))
    }

    /// The lowest card by bit index (suit order S H D C, then rank 2..A), if any.
    pub fn first(self) -> Option<Card> {
        if self.0 == 0 {
            None
        } else {
            Card::from_bit(self.0.trailing_zeros())
        }
    }

    /// This set (of at most `N` ≤ 5 cards: a Bête hand) with its lowest 0, 1, … `N - 1` cards
    /// removed: both its size and its `k`-th card then come without a branch or a bit count. A
    /// playout draws `k` at random, and a loop of `k` steps mispredicts its exit on most cards
    /// (the default x86-64 target has no POPCNT, and a software count is a dozen instructions on
    /// a playout's every card).
    #[inline]
    pub(crate) fn peel<const N: usize>(self) -> Peeled<N> {
        let mut b = [0; N];
        let mut bits = self.0;
        for slot in &mut b {
            *slot = bits;
            bits &= bits.wrapping_sub(1);
        }
        Peeled(b)
    }

    /// The `k`-th card in bit order (the order of `iter`), counted from 0.
    #[inline]
    pub fn nth_card(self, k: u32) -> Option<Card> {
        let mut bits = self.0;
        for _ in 0..k {
            bits &= bits.wrapping_sub(1);
        }
        if bits == 0 {
            None
        } else {
            Card::from_bit(bits.trailing_zeros())
        }
    }

    pub fn iter(self) -> CardSetIter {
        CardSetIter(self.0)
    }
}

/// Iterates in bit order: S, H, D, C, each rank 2 up to A. Allocation-free.
#[derive(Clone, Debug)]
pub struct CardSetIter(u64);

impl Iterator for CardSetIter {
    type Item = Card;

    fn next(&mut self) -> Option<Card> {
        while self.0 != 0 {
            let bit = self.0.trailing_zeros();
            self.0 &= self.0 - 1;
            if let Some(c) = Card::from_bit(bit) {
                return Some(c);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl IntoIterator for CardSet {
    type Item = Card;
    type IntoIter = CardSetIter;
    fn into_iter(self) -> CardSetIter {
        self.iter()
    }
}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(it: I) -> CardSet {
        let mut s = CardSet::EMPTY;
        for c in it {
            s.insert(c);
        }
        s
    }
}

impl fmt::Display for CardSet {
    /// Space-separated card codes in canonical order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for c in self.iter() {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{self}}}")
    }
}

/// A set of at most `N` cards with its lowest 0..N cards removed (`CardSet::peel`).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Peeled<const N: usize>([u64; N]);

impl<const N: usize> Peeled<N> {
    /// The set's size, if it has at most `N` cards (`N` otherwise).
    #[inline]
    pub fn len(&self) -> usize {
        self.0.iter().map(|&b| usize::from(b != 0)).sum()
    }

    /// The `k`-th card in bit order, counted from 0; `None` past the set's end or for `k` ≥ `N`.
    #[inline]
    pub fn nth(&self, k: usize) -> Option<Card> {
        let bits = self.0.get(k).copied().unwrap_or(0);
        // A set's bits are cards' bits (`CardSet`'s bits come from cards, save a hand-built
        // mask, which `from_bit` would refuse): no check of the rank nibble per card.
        (bits != 0).then(|| Card::of_set_bit(bits.trailing_zeros()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::Rank;

    /// A peeled set's `k`-th card is `nth_card`'s for every set of up to five cards and every
    /// `k`, and its size is the set's size.
    #[test]
    fn peel_agrees_with_nth_card_and_len() {
        let pack: Vec<Card> = Card::all().collect();
        // A cheap deterministic walk over many sets of 0..=5 cards of the 52.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let size = (x % 6) as usize;
            let mut set = CardSet::EMPTY;
            for i in 0..size {
                set.insert(pack[((x >> (8 + 6 * i)) % 52) as usize]);
            }
            assert_eq!(set.peel::<5>().len(), set.len() as usize, "{set:?}");
            for k in 0..8 {
                assert_eq!(
                    set.peel::<5>().nth(k),
                    set.nth_card(k as u32),
                    "{set:?}, k = {k}"
                );
            }
        }
    }

    #[test]
    fn set_operations() {
        let ks = Card::new(Rank::King, Suit::Spades);
        let th = Card::new(Rank::Ten, Suit::Hearts);
        let mut s = CardSet::EMPTY;
        s.insert(th);
        s.insert(ks);
        assert_eq!(s.len(), 2);
        assert!(s.contains(ks));
        assert_eq!(s.to_string(), "KS TH");
        assert_eq!(s.of_suit(Suit::Hearts), CardSet::single(th));
        s.remove(ks);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![th]);
    }
}
