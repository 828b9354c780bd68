//! Exact constrained dealing: the unseen cards dealt uniformly at random to hidden places of
//! fixed sizes, where some places (the hands of seats whose plays showed what they cannot
//! hold) refuse some cards, and the others (free places) take any card.
//!
//! ## Why every allowed deal is equally likely
//!
//! Cards are grouped into classes by which constrained hands may hold them. A deal is fixed by
//! a table `x` (how many cards of class `j` go to constrained hand `i`), then by which cards of
//! each class each hand gets, then by how the rest is laid out in the free places. With `r_j`
//! cards of class `j` left before hand `i`, let `N_i(r)` be the number of ways to fill hands
//! `i..` from `r` (`N` past the last hand is 1):
//! `N_i(r) = Σ_x Π_j C(r_j, x_j) · N_{i+1}(r − x)`, over the `x` that fit hand `i`'s size and
//! use only classes it may hold. The dealer draws hand `i`'s class counts `x` with probability
//! `Π_j C(r_j, x_j) · N_{i+1}(r − x) / N_i(r)`, then `x_j` cards of each class uniformly among
//! the `r_j` left; the free cards are shuffled into the free places. A given allowed deal
//! therefore has probability `Π_i [Π_j C · N_{i+1} / N_i] · Π_i Π_j 1/C · 1/M = 1 / (N_0 · M)`
//! (the binomials cancel, the `N` telescope; `M`, the layouts of the free cards, is the same
//! for every deal): the same for all of them. The counts are `f64` (they pass 2^64 at ten
//! seats); their relative error, about 1e-15, is the only departure from exact uniformity.
//!
//! The tables `N` and the draw distributions are worked out once per decision (`new`); a draw
//! (`deal`) then walks one choice per constrained hand and allocates nothing.

use std::collections::HashMap;

use rand_chacha::rand_core::RngCore;

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::playout::uniform_index;
use crate::ruleset::MAX_SEATS;

/// Classes beyond this (or more draw states than `MAX_NODES`) fall back to free dealing: the
/// caller's replay still rejects what the hands cannot hold, so the samples stay uniform.
const MAX_CLASSES: usize = 12;
const MAX_NODES: usize = 50_000;
/// Room for the largest pack (52 cards).
pub(super) const MAX_CARDS: usize = 64;
const LEAF: u32 = u32::MAX;
/// What fills the unused end of the card arrays (never read).
pub(super) const FILLER: Card = Card::new(Rank::Two, Suit::Spades);

/// One way to fill a hand: the cumulative probability, the class counts, the next state.
#[derive(Clone, Debug)]
struct Choice {
    cumulative: f64,
    take: [u8; MAX_CLASSES],
    next: u32,
}

#[derive(Clone, Debug)]
pub(super) struct ConstrainedDeal {
    /// The unseen cards, class by class.
    cards: [Card; MAX_CARDS],
    len: usize,
    /// First index and size of each class in `cards`.
    starts: [u8; MAX_CLASSES],
    sizes: [u8; MAX_CLASSES],
    /// How many classes there are.
    classes: usize,
    /// The constrained hands in dealing order: (seat index, cards).
    hands: Vec<(usize, u8)>,
    /// Draw states: the choices of each, in `choices[from..to]`.
    nodes: Vec<(u32, u32)>,
    choices: Vec<Choice>,
    /// The state of the first hand (states are stored children first).
    root: u32,
    /// No allowed deal at all (a hand's duties rule out more cards than are left).
    impossible: bool,
    /// `N_0`, the number of ways to fill the constrained hands; 0 when it is not worked out
    /// (free dealing).
    count: f64,
}

impl ConstrainedDeal {
    /// `unseen`: the cards to deal; `hands`: per seat, the size of its constrained hand and the
    /// cards it cannot hold (seats with nothing ruled out are free places).
    pub(super) fn new(unseen: &[Card], hands: &[(usize, usize, CardSet)]) -> ConstrainedDeal {
        let mut d = ConstrainedDeal {
            cards: [FILLER; MAX_CARDS],
            len: unseen.len().min(MAX_CARDS),
            starts: [0; MAX_CLASSES],
            sizes: [0; MAX_CLASSES],
            classes: 0,
            hands: Vec::new(),
            nodes: Vec::new(),
            choices: Vec::new(),
            root: LEAF,
            impossible: false,
            count: 0.0,
        };
        let constrained: Vec<(usize, usize, CardSet)> = hands
            .iter()
            .copied()
            .filter(|&(_, k, no)| k > 0 && unseen.iter().any(|&c| no.contains(c)))
            .collect();
        // A card's class: the constrained hands that may hold it (bit i = hand i).
        let class_of = |c: Card| -> u32 {
            constrained
                .iter()
                .enumerate()
                .filter(|(_, (_, _, no))| !no.contains(c))
                .fold(0, |m, (i, _)| m | 1 << i)
        };
        let mut masks: Vec<u32> = unseen.iter().map(|&c| class_of(c)).collect();
        masks.sort_unstable();
        masks.dedup();
        if constrained.is_empty() && unseen.len() <= MAX_CARDS {
            // Nothing to count: one way to fill no hands.
            d.free_only(unseen);
            d.count = 1.0;
            return d;
        }
        if masks.len() > MAX_CLASSES || unseen.len() > MAX_CARDS {
            d.free_only(unseen);
            return d;
        }
        let mut at = 0;
        for (j, &m) in masks.iter().enumerate() {
            d.starts[j] = at as u8;
            for &c in unseen.iter().filter(|&&c| class_of(c) == m) {
                d.cards[at] = c;
                at += 1;
            }
            d.sizes[j] = at as u8 - d.starts[j];
        }
        d.classes = masks.len();
        d.hands = constrained.iter().map(|&(s, k, _)| (s, k as u8)).collect();
        let allowed: Vec<Vec<usize>> = (0..d.hands.len())
            .map(|i| {
                (0..masks.len())
                    .filter(|&j| masks[j] >> i & 1 == 1)
                    .collect()
            })
            .collect();
        let mut memo = HashMap::new();
        let root = d.build(0, d.sizes, &allowed, &mut memo);
        match root {
            Some((id, count)) if count > 0.0 => {
                d.root = id;
                d.count = count;
            }
            Some(_) => d.impossible = true,
            None => d.free_only(unseen),
        }
        d
    }

    /// No constraint worth modelling: every card is free.
    fn free_only(&mut self, unseen: &[Card]) {
        self.hands.clear();
        self.nodes.clear();
        self.choices.clear();
        self.starts = [0; MAX_CLASSES];
        self.sizes = [0; MAX_CLASSES];
        self.len = unseen.len().min(MAX_CARDS);
        self.cards[..self.len].copy_from_slice(&unseen[..self.len]);
        self.sizes[0] = self.len as u8;
        self.classes = 1;
    }

    /// The state of hand `level` with `left` cards per class: its node and `N_level(left)`.
    /// None if the states pass `MAX_NODES`.
    // The per-class arrays (left, take, rest) are indexed together by class.
    #[allow(clippy::needless_range_loop)]
    fn build(
        &mut self,
        level: usize,
        left: [u8; MAX_CLASSES],
        allowed: &[Vec<usize>],
        memo: &mut HashMap<(usize, [u8; MAX_CLASSES]), (u32, f64)>,
    ) -> Option<(u32, f64)> {
        if level == self.hands.len() {
            return Some((LEAF, 1.0));
        }
        if let Some(&found) = memo.get(&(level, left)) {
            return Some(found);
        }
        if self.nodes.len() >= MAX_NODES {
            return None;
        }
        let size = self.hands[level].1 as usize;
        let mut takes = Vec::new();
        compositions(
            &allowed[level],
            &left,
            size,
            &mut [0; MAX_CLASSES],
            &mut takes,
        );
        let mut options = Vec::with_capacity(takes.len());
        let mut total = 0.0;
        for take in takes {
            let mut rest = left;
            let mut ways = 1.0;
            for j in 0..MAX_CLASSES {
                ways *= binomial(left[j], take[j]);
                rest[j] -= take[j];
            }
            let (next, count) = self.build(level + 1, rest, allowed, memo)?;
            if count > 0.0 {
                total += ways * count;
                options.push(Choice {
                    cumulative: total,
                    take,
                    next,
                });
            }
        }
        for o in &mut options {
            o.cumulative /= total;
        }
        if let Some(last) = options.last_mut() {
            // Exactly 1, so a draw below 1 always lands on a choice.
            last.cumulative = 1.0;
        }
        let from = self.choices.len() as u32;
        self.choices.extend(options);
        let id = self.nodes.len() as u32;
        self.nodes.push((from, self.choices.len() as u32));
        memo.insert((level, left), (id, total));
        Some((id, total))
    }

    /// `N_0` and the number of free places, when the constraints were worked out exactly
    /// (None when the dealing fell back to free dealing, or no hand is constrained).
    pub(super) fn completions(&self) -> Option<(f64, usize)> {
        let held: usize = self.hands.iter().map(|&(_, k)| k as usize).sum();
        (self.count > 0.0).then(|| (self.count, self.len - held))
    }

    /// Whether no deal respects the constraints.
    pub(super) fn impossible(&self) -> bool {
        self.impossible
    }

    /// The seats whose hands `deal` fills.
    pub(super) fn constrained(&self) -> impl Iterator<Item = usize> + '_ {
        self.hands.iter().map(|&(s, _)| s)
    }

    /// One uniform deal: the constrained hands into `hands` (by seat), the other cards
    /// shuffled into `free`; returns how many are free.
    // The per-class arrays (starts, left, take) are indexed together by class.
    #[allow(clippy::needless_range_loop)]
    pub(super) fn deal(
        &self,
        rng: &mut impl RngCore,
        hands: &mut [CardSet; MAX_SEATS],
        free: &mut [Card; MAX_CARDS],
    ) -> usize {
        let mut cards = self.cards;
        let mut left = self.sizes;
        let mut node = self.root;
        for &(seat, _) in &self.hands {
            let Some(&(from, to)) = self.nodes.get(node as usize) else {
                break;
            };
            let options = &self.choices[from as usize..to as usize];
            let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let Some(choice) = options.iter().find(|o| u < o.cumulative).or(options.last()) else {
                break;
            };
            let mut hand = CardSet::EMPTY;
            for j in 0..self.classes {
                let start = self.starts[j] as usize;
                for _ in 0..choice.take[j] {
                    // Partial Fisher–Yates within the class: the drawn card goes past the end.
                    let n = left[j] as usize;
                    let k = start + uniform_index(rng, n);
                    hand.insert(cards[k]);
                    cards.swap(k, start + n - 1);
                    left[j] -= 1;
                }
            }
            hands[seat] = hand;
            node = choice.next;
        }
        let mut n = 0;
        for j in 0..self.classes {
            let start = self.starts[j] as usize;
            for &c in &cards[start..start + left[j] as usize] {
                free[n] = c;
                n += 1;
            }
        }
        for i in (1..n).rev() {
            free.swap(i, uniform_index(rng, i + 1));
        }
        n
    }
}

/// Every way to put `size` cards in the classes `allowed`, at most `left[j]` of class `j`.
fn compositions(
    allowed: &[usize],
    left: &[u8; MAX_CLASSES],
    size: usize,
    current: &mut [u8; MAX_CLASSES],
    out: &mut Vec<[u8; MAX_CLASSES]>,
) {
    let Some((&j, rest)) = allowed.split_first() else {
        if size == 0 {
            out.push(*current);
        }
        return;
    };
    for x in 0..=size.min(left[j] as usize) {
        current[j] = x as u8;
        compositions(rest, left, size - x, current, out);
    }
    current[j] = 0;
}

/// C(n, k) as a float.
fn binomial(n: u8, k: u8) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;
    use std::collections::BTreeMap;

    fn cards(n: usize) -> Vec<Card> {
        Card::all().take(n).collect()
    }

    /// Exact enumeration: 7 cards, two constrained hands of 2 (one refuses 3 cards, the other
    /// 2, overlapping in one) and 3 free cards; every allowed deal turns up about equally
    /// often (chi-square against the uniform law).
    #[test]
    fn every_allowed_deal_is_equally_likely() {
        let pack = cards(7);
        let no_a: CardSet = pack[..3].iter().copied().collect();
        let no_b: CardSet = pack[2..4].iter().copied().collect();
        let d = ConstrainedDeal::new(&pack, &[(1, 2, no_a), (2, 2, no_b), (3, 0, CardSet::EMPTY)]);
        assert!(!d.impossible());
        // All allowed deals by enumeration: two disjoint pairs that respect the refusals.
        let subset = |m: u32| -> CardSet {
            (0..7)
                .filter(|i| m >> i & 1 == 1)
                .map(|i| pack[i])
                .collect()
        };
        let mut expected = 0u32;
        for a in 0u32..128 {
            for b in 0u32..128 {
                if a.count_ones() == 2
                    && b.count_ones() == 2
                    && a & b == 0
                    && subset(a).intersect(no_a).is_empty()
                    && subset(b).intersect(no_b).is_empty()
                {
                    expected += 1;
                }
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let draws = 200 * expected;
        let mut seen: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut free = [pack[0]; MAX_CARDS];
        for _ in 0..draws {
            let mut hands = [CardSet::EMPTY; MAX_SEATS];
            let n = d.deal(&mut rng, &mut hands, &mut free);
            assert_eq!(n, 3);
            assert!(hands[1].intersect(no_a).is_empty() && hands[2].intersect(no_b).is_empty());
            let all = free[..n].iter().fold(hands[1].union(hands[2]), |s, &c| {
                let mut s = s;
                s.insert(c);
                s
            });
            assert_eq!(all.len(), 7);
            *seen.entry((hands[1].bits(), hands[2].bits())).or_default() += 1;
        }
        assert_eq!(seen.len(), expected as usize, "every allowed deal appears");
        let mean = f64::from(draws) / f64::from(expected);
        let chi2: f64 = seen
            .values()
            .map(|&o| (f64::from(o) - mean).powi(2) / mean)
            .sum();
        // df = expected - 1; the 99.9 % quantile is below df + 4.4·sqrt(2·df) for these sizes.
        let df = f64::from(expected - 1);
        assert!(
            chi2 < df + 4.4 * (2.0 * df).sqrt(),
            "chi2 {chi2} for {df} df"
        );
    }

    /// Duties that leave too few cards: no deal.
    #[test]
    fn an_impossible_constraint_is_told() {
        let pack = cards(4);
        let no: CardSet = pack[..3].iter().copied().collect();
        let d = ConstrainedDeal::new(&pack, &[(0, 2, no)]);
        assert!(d.impossible());
    }
}
