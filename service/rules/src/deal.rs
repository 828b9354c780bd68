//! Dealing a deck order into hands, turn-up and talon (11.2), and the inverse for tests.

use crate::card::Card;
use crate::cardset::CardSet;
use crate::config::DealPattern;
use crate::ruleset::MAX_SEATS;
use crate::seat::Seat;

impl DealPattern {
    /// Packet sizes, in order.
    pub const fn packets(self) -> &'static [u8] {
        match self {
            DealPattern::ThreeTwo => &[3, 2],
            DealPattern::TwoThree => &[2, 3],
            DealPattern::TwoTwoOne => &[2, 2, 1],
            DealPattern::TwoOneTwo => &[2, 1, 2],
            DealPattern::OneEach => &[1, 1, 1, 1, 1],
        }
    }
}

/// A dealt deck: five cards a seat, the turn-up, and the talon (top first) as deck indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dealt {
    pub hands: [CardSet; MAX_SEATS],
    pub turn_up: Card,
    /// Index in the deck of the talon's top card; the talon is `deck[talon_start..]`.
    pub talon_start: usize,
}

/// Deals `deck`: each packet round goes from eldest (dealer + 1) around to the dealer.
/// The deck must hold at least `5 * seats + 1` cards (checked by the match against the pack).
pub fn deal_hands(deck: &[Card], seats: u8, dealer: Seat, pattern: DealPattern) -> Dealt {
    DealPlan::new(seats, pattern).deal(deck, dealer)
}

/// Where the cards of a deck go for one seat count and deal pattern, worked out once per
/// match: dealing is then five loads and ORs a hand, with no seat arithmetic (it runs on every
/// simulated deal).
#[derive(Clone, Debug)]
pub struct DealPlan {
    seats: u8,
    /// For each hand by position, from eldest (0) round to the dealer (`seats - 1`), the deck
    /// indices of its five cards.
    indices: [[u8; 5]; MAX_SEATS],
}

impl DealPlan {
    pub fn new(seats: u8, pattern: DealPattern) -> DealPlan {
        let n = seats.min(MAX_SEATS as u8);
        let mut indices = [[0; 5]; MAX_SEATS];
        let mut dealt = [0usize; MAX_SEATS];
        let mut i = 0;
        for &packet in pattern.packets() {
            for position in 0..usize::from(n) {
                for _ in 0..packet {
                    indices[position][dealt[position]] = i;
                    dealt[position] += 1;
                    i += 1;
                }
            }
        }
        DealPlan { seats: n, indices }
    }

    /// Deals `deck` (at least `5 * seats + 1` cards) with `dealer` dealing.
    pub fn deal(&self, deck: &[Card], dealer: Seat) -> Dealt {
        let n = usize::from(self.seats);
        let mut hands = [CardSet::EMPTY; MAX_SEATS];
        let mut seat = dealer;
        for ix in &self.indices[..n] {
            // Five independent loads and shifts, one OR chain: no store-to-load round trip
            // per card, as accumulating card by card in memory had.
            let hand = ix
                .iter()
                .fold(0u64, |h, &i| h | 1 << deck[usize::from(i)].bit());
            seat = seat.next(self.seats);
            hands[seat.index()] = CardSet(hand);
        }
        Dealt {
            hands,
            turn_up: deck[5 * n],
            talon_start: 5 * n + 1,
        }
    }
}

/// The inverse of `deal_hands`, for tests: a deck order that deals `hands` (one per seat, in
/// seat order), then `turn_up`, then `talon` on top of the talon, then the rest of `pack` in
/// canonical order. Panics if the cards are not distinct cards of the pack (tests only).
pub fn stack_deck(
    pack: &[Card],
    seats: u8,
    dealer: Seat,
    pattern: DealPattern,
    hands: &[CardSet],
    turn_up: Card,
    talon: &[Card],
) -> Vec<Card> {
    assert_eq!(hands.len(), seats as usize, "one hand per seat");
    let mut used = CardSet::EMPTY;
    let mut take = |c: Card| {
        assert!(pack.contains(&c), "{c} is not in the pack");
        assert!(!used.contains(c), "{c} used twice");
        used.insert(c);
        c
    };
    let mut deck = Vec::with_capacity(pack.len());
    let mut rest: Vec<Vec<Card>> = hands.iter().map(|h| h.iter().collect()).collect();
    for h in &rest {
        assert_eq!(h.len(), 5, "a hand has five cards");
    }
    for &packet in pattern.packets() {
        for k in 1..=seats {
            let seat = dealer.offset(k, seats);
            for _ in 0..packet {
                let c = rest[seat.index()].remove(0);
                deck.push(take(c));
            }
        }
    }
    deck.push(take(turn_up));
    for &c in talon {
        deck.push(take(c));
    }
    for &c in pack {
        if !used.contains(c) {
            deck.push(c);
        }
    }
    deck
}

/// Parses space-separated card codes into a set (tests and tools). Panics on a bad token.
pub fn cards(s: &str) -> CardSet {
    s.split_whitespace()
        .map(|t| t.parse::<Card>().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{Rank, Suit};

    #[test]
    fn stack_then_deal_round_trips() {
        let pack: Vec<Card> = Suit::ALL
            .iter()
            .flat_map(|&s| Rank::ALL[5..].iter().map(move |&r| Card::new(r, s)))
            .collect();
        let hands = [
            cards("7S 8S 9S TS JS"),
            cards("7H 8H 9H TH JH"),
            cards("7D 8D 9D TD JD"),
        ];
        for pattern in [DealPattern::ThreeTwo, DealPattern::TwoOneTwo] {
            let deck = stack_deck(
                &pack,
                3,
                Seat(1),
                pattern,
                &hands,
                "AC".parse().unwrap(),
                &["KC".parse().unwrap()],
            );
            assert_eq!(deck.len(), 32);
            let d = deal_hands(&deck, 3, Seat(1), pattern);
            assert_eq!(&d.hands[..3], &hands);
            assert_eq!(d.turn_up.to_string(), "AC");
            assert_eq!(deck[d.talon_start].to_string(), "KC");
        }
    }

    #[test]
    fn eldest_gets_the_first_packet() {
        let pack: Vec<Card> = Suit::ALL
            .iter()
            .flat_map(|&s| Rank::ALL[5..].iter().map(move |&r| Card::new(r, s)))
            .collect();
        let d = deal_hands(&pack, 5, Seat(0), DealPattern::ThreeTwo);
        // seat 1 is eldest: the first three cards of the deck (7S 8S 9S)
        assert!(d.hands[1].contains("7S".parse().unwrap()));
        assert!(d.hands[1].contains("9S".parse().unwrap()));
        // the dealer (seat 0) gets the fifth packet of three
        assert!(d.hands[0].contains("JH".parse().unwrap()));
    }
}
