//! Trick play of Bête, Ace-high and Beast (0.4 items 4–5): follow, head in suit, trump,
//! overtrump, with every test a few bit operations on 64-bit masks.

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::game::ActionError;
use crate::ruleset::MAX_SEATS;
use crate::seat::Seat;
use std::hint::select_unpredictable as select;

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

/// What a playout's trick loop keeps of the table's rules: the trump suit and whether a
/// follower must head the trick in the suit led, as masks.
#[derive(Copy, Clone, Debug)]
pub(crate) struct FollowRules {
    trump: Suit,
    trump_mask: u64,
    /// All ones when a follower must head the trick in suit (0.4 item 4), else 0 (Beast).
    head: u64,
    ranking: &'static Ranking,
}

impl FollowRules {
    pub fn new(trump: Suit, must_head: bool, ranking: &'static Ranking) -> FollowRules {
        FollowRules {
            trump,
            trump_mask: CardSet::suit(trump).bits(),
            head: if must_head { !0 } else { 0 },
            ranking,
        }
    }
}

/// A trick that has been led, as a playout plays it: the rules of `Trick::legal` and
/// `Trick::play` for the followers, but each card a fixed sequence of masks and selects. A
/// playout's followers choose at random, so whether one holds the suit led and whether a card
/// wins are coin tosses that a branch predictor cannot learn; here they are data, not branches.
/// `finish` gives back the `Trick` that `Trick::play` would have built.
#[derive(Copy, Clone, Debug)]
pub(crate) struct MaskTrick {
    leader: Seat,
    led: Suit,
    len: u8,
    best: Card,
    winner: Seat,
    /// The cards of the suit led.
    led_mask: u64,
    /// The cards that beat the winning card (all of its suit).
    above: u64,
    /// The winning card is a trump: then a void follower must overtrump, if he can.
    best_is_trump: bool,
    /// The cards played, in order from the leader's. Last, and only written per card, so that
    /// the compiler can keep the fields above in registers.
    cards: [Card; MAX_SEATS],
}

impl MaskTrick {
    /// `seat` leads `card` to a new trick.
    #[inline]
    pub fn lead(seat: Seat, card: Card, rules: &FollowRules) -> MaskTrick {
        let mut trick = Trick::new(seat);
        trick.play(seat, card, rules.trump, rules.ranking);
        MaskTrick::resume(trick, rules)
    }

    /// Carries on a trick that has been led.
    #[inline]
    pub fn resume(trick: Trick, rules: &FollowRules) -> MaskTrick {
        debug_assert!(trick.len > 0);
        MaskTrick {
            leader: trick.leader,
            led: trick.led,
            len: trick.len,
            best: trick.best,
            winner: trick.winner,
            led_mask: CardSet::suit(trick.led).bits(),
            above: rules.ranking.above(trick.best),
            best_is_trump: trick.best.suit() == rules.trump,
            cards: trick.cards,
        }
    }

    /// Cards played so far.
    #[inline]
    pub fn len(&self) -> u8 {
        self.len
    }

    /// `Trick::legal` for a follower.
    #[inline]
    pub fn legal(&self, hand: CardSet, rules: &FollowRules) -> CardSet {
        let hand = hand.bits();
        let in_suit = hand & self.led_mask;
        // `above` holds only cards of the winning card's suit: once the trick is trumped (the
        // winner a trump, the suit led not) no card of the suit led heads it.
        let higher = in_suit & self.above & rules.head;
        let follow = select(higher != 0, higher, in_suit);
        // Void in the suit led: a trump, or a higher trump once the winner is one.
        let wanted = select(self.best_is_trump, self.above, !0);
        let trumps = hand & rules.trump_mask & wanted;
        let void = select(trumps != 0, trumps, hand);
        CardSet(select(in_suit != 0, follow, void))
    }

    /// `Trick::play` for a follower.
    #[inline]
    pub fn follow(&mut self, seat: Seat, card: Card, rules: &FollowRules) {
        self.cards[usize::from(self.len)] = card;
        self.len += 1;
        let bit = 1u64 << card.bit();
        let is_trump = bit & rules.trump_mask != 0;
        // A card of the winning card's suit wins by rank; a trump on a plain winner wins
        // outright; a discard never does.
        let wins = (self.above & bit != 0) | (is_trump & !self.best_is_trump);
        self.best = select(wins, card, self.best);
        self.winner = select(wins, seat, self.winner);
        self.above = select(wins, rules.ranking.above(card), self.above);
        // A trump that does not win falls under a higher trump.
        self.best_is_trump |= is_trump;
    }

    /// The trick as `Trick::play` leaves it.
    #[inline]
    pub fn finish(self, rules: &FollowRules) -> Trick {
        Trick {
            leader: self.leader,
            cards: self.cards,
            len: self.len,
            led: self.led,
            best: self.best,
            trumped: self.best_is_trump && self.led != rules.trump,
            winner: self.winner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `MaskTrick` and `Trick` agree card by card: the same legal cards for every follower,
    /// the same winner after every card, the same finished trick, over many random tricks of
    /// two to seven hands of five, for both rankings, both heading rules and every trump suit.
    #[test]
    fn mask_trick_agrees_with_trick() {
        let pack: Vec<Card> = Card::all().collect();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut tricked = 0;
        for round in 0..20_000 {
            let ranking = if round % 2 == 0 {
                &ECARTE_RANKING
            } else {
                &ACE_HIGH_RANKING
            };
            let must_head = round % 3 != 0;
            let trump = Suit::ALL[next(4)];
            let rules = FollowRules::new(trump, must_head, ranking);
            let mut deck = pack.clone();
            for i in (1..deck.len()).rev() {
                deck.swap(i, next(i + 1));
            }
            let seats = 2 + next(6);
            let mut hands: Vec<CardSet> = deck
                .chunks(5)
                .take(seats)
                .map(|c| c.iter().copied().collect())
                .collect();
            let leader = Seat(next(seats) as u8);
            let mut plain = Trick::new(leader);
            let mut seat = leader;
            let lead = hands[seat.index()]
                .nth_card(next(5) as u32)
                .expect("five cards");
            hands[seat.index()].remove(lead);
            plain.play(seat, lead, trump, ranking);
            let mut masked = MaskTrick::lead(seat, lead, &rules);
            for _ in 1..seats {
                seat = seat.next(seats as u8);
                let hand = hands[seat.index()];
                let legal = plain.legal(hand, trump, ranking, must_head);
                assert_eq!(masked.legal(hand, &rules), legal, "{plain:?}, hand {hand}");
                // A trick resumed here (a playout that starts mid-trick) agrees too.
                let resumed = MaskTrick::resume(plain, &rules);
                assert_eq!(resumed.legal(hand, &rules), legal, "resumed {plain:?}");
                let card = legal
                    .nth_card(next(legal.len() as usize) as u32)
                    .expect("legal");
                hands[seat.index()].remove(card);
                plain.play(seat, card, trump, ranking);
                masked.follow(seat, card, &rules);
                assert_eq!(masked.winner, plain.winner, "{plain:?}");
                assert_eq!(masked.len(), plain.len);
            }
            tricked += usize::from(plain.trumped);
            let finished = masked.finish(&rules);
            assert_eq!(format!("{finished:?}"), format!("{plain:?}"));
        }
        // The walk reaches the trumped tricks, where overtrumping applies.
        assert!(tricked > 1_000, "{tricked} trumped tricks");
    }
}
