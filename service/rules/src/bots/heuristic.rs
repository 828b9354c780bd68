//! The `heuristic` house bot: simple card sense, from the seat's view alone.
//!
//! Hand strength is an estimate of tricks: each trump is worth more the fewer unseen trumps
//! outrank it, plain top cards count a little, long trumps a little more. Seen cards are the
//! viewer's hand, the cards played face up, and (Bête, Beast) the turn-ups nobody holds.

use crate::action::Action;
use crate::card::Card;
use crate::cardset::CardSet;
use crate::ruleset::RulesetId;
use crate::view::{Phase, PlayedCard, View, Viewer};

use super::strength::{CardOrder, HIDDEN_POWER};

/// Bête: declare with this many likely tricks (three win the deal, B24).
const PLAY_AT: f32 = 2.0;
/// Bête: contre only with a clearly better hand (the contrer stakes a double bête, B32).
const CONTRE_AT: f32 = 2.8;
/// Exchange family: stay in with at least this many likely tricks (a trickless stayer is bête).
const STAY_AT: f32 = 1.0;
/// Lanterlui: challenge the dealer heads-up with this many likely tricks.
const CHALLENGE_AT: f32 = 1.8;
/// Rams: announce General Rams only with a near-certain five tricks.
const GENERAL_AT: f32 = 4.6;
/// Rams: below this, the unseen widow is likely better than the hand.
const WIDOW_BELOW: f32 = 0.6;

/// Whether the dealer takes up the turn-up: the exchange family (0.4 item 6), Mouche and
/// Mistigri (MO11), Rams (RA5).
fn dealer_takes_turn_up(r: RulesetId) -> bool {
    r.is_exchange_family() || matches!(r, RulesetId::Mouche | RulesetId::Mistigri | RulesetId::Rams)
}

/// The heuristic's action for the seat whose view this is; always one of `view.legal_actions`
/// (or `Action::Pass` if there is none, which callers never ask for).
pub fn heuristic_action(view: &View) -> Action {
    let legal = &view.legal_actions;
    let (Some(&first), Viewer::Seat(_), Some(trump)) = (legal.first(), view.viewer, view.trump)
    else {
        return legal.first().copied().unwrap_or(Action::Pass);
    };
    if legal.len() == 1 {
        return first;
    }
    let ctx = Ctx::new(view, CardOrder::new(view.ruleset, trump));
    let wanted = match view.phase {
        Phase::Bidding => ctx.bid(),
        Phase::Exchange { .. } => ctx.exchange_turn(),
        Phase::DealerDiscard => ctx.discard(),
        Phase::Challenge => ctx.challenge(),
        Phase::Trick { .. } => ctx.play_card(),
        Phase::AwaitingDeck | Phase::MatchOver => None,
    };
    match wanted {
        Some(a) if legal.contains(&a) => a,
        // Never reached by construction (each rule picks from `legal`), but a bot must not
        // make an illegal move if a rule and the engine ever disagree.
        _ => first,
    }
}

struct Ctx<'a> {
    view: &'a View,
    order: CardOrder,
    hand: CardSet,
    /// Cards the seat knows are not in any other hand.
    seen: CardSet,
}

impl<'a> Ctx<'a> {
    fn new(view: &'a View, order: CardOrder) -> Ctx<'a> {
        let hand = view.hand.unwrap_or_default();
        let mut seen = hand;
        for t in &view.tricks {
            for (_, p) in &t.cards {
                if let PlayedCard::FaceUp(c) = p {
                    seen.insert(*c);
                }
            }
        }
        for &c in &view.set_aside_turn_ups {
            seen.insert(c);
        }
        if let Some(t) = view.turn_up {
            // In Bête, Beast and Loo nobody ever holds the turn-up; where the dealer takes it
            // up, it is only "out" for the dealer himself.
            if !dealer_takes_turn_up(view.ruleset) || view.viewer == Viewer::Seat(view.dealer) {
                seen.insert(t);
            }
        }
        Ctx {
            view,
            order,
            hand,
            seen,
        }
    }

    fn is_dealer(&self) -> bool {
        self.view.viewer == Viewer::Seat(self.view.dealer)
    }

    /// Unseen cards of `c`'s suit (trumps counting as one suit) that outrank it.
    fn higher_unseen(&self, c: Card) -> u32 {
        let suit = self.order.suit_of(c);
        let p = self.order.power(c);
        let mut n = 0;
        for o in CardSet(u64::MAX).iter() {
            if !self.seen.contains(o) && self.order.suit_of(o) == suit && self.order.power(o) > p {
                n += 1;
            }
        }
        n
    }

    /// Expected tricks of a hand (the dealer of the exchange family counts the turn-up he will
    /// take up instead of his weakest card).
    fn strength(&self, hand: CardSet) -> f32 {
        let trump_values: [f32; 4] = [1.0, 0.75, 0.5, 0.3];
        let plain_top = if self.view.seats <= 4 { 0.6 } else { 0.45 };
        let mut est = 0.0;
        let mut trumps = 0;
        for c in hand {
            if self.order.is_trump(c) {
                trumps += 1;
                est += trump_values[(self.higher_unseen(c) as usize).min(3)];
            } else if self.higher_unseen(c) == 0 {
                est += plain_top;
            } else if self.higher_unseen(c) == 1 {
                est += 0.15;
            }
        }
        if trumps >= 3 {
            est += 0.3 * (trumps - 2) as f32;
        }
        est
    }

    fn hand_with_turn_up(&self) -> CardSet {
        let mut h = self.hand;
        if dealer_takes_turn_up(self.view.ruleset)
            && self.is_dealer()
            && !self.view.turn_up_taken
            && let Some(t) = self.view.turn_up
        {
            if let Some(worst) = h.iter().min_by_key(|&c| self.keep_value(c)) {
                h.remove(worst);
            }
            h.insert(t);
        }
        h
    }

    /// How much the seat wants to keep a card: trumps first, then top plain cards.
    fn keep_value(&self, c: Card) -> (u8, u8) {
        let master = (self.higher_unseen(c) == 0) as u8;
        (
            self.order.is_trump(c) as u8 * 2 + master,
            self.order.power(c),
        )
    }

    fn legal_has(&self, a: Action) -> bool {
        self.view.legal_actions.contains(&a)
    }

    fn bid(&self) -> Option<Action> {
        let est = self.strength(self.hand);
        if self.legal_has(Action::Play) && est >= PLAY_AT {
            Some(Action::Play)
        } else if self.legal_has(Action::Contre) && est >= CONTRE_AT {
            Some(Action::Contre)
        } else {
            Some(Action::Pass)
        }
    }

    fn lanterlui_flush_suit_count(&self) -> u32 {
        let mut best = 0;
        for s in crate::card::Suit::ALL {
            let n = self
                .hand
                .iter()
                .filter(|&c| self.order.suit_of(c) == s)
                .count() as u32;
            best = best.max(n);
        }
        best
    }

    /// Rams (RA6): General Rams with a hand that should take every trick, the widow instead of
    /// a weak hand, dropping where allowed, else stand.
    fn rams_turn(&self) -> Option<Action> {
        let est = self.strength(self.hand);
        if self.legal_has(Action::General) && est >= GENERAL_AT {
            return Some(Action::General);
        }
        if est < STAY_AT {
            if self.legal_has(Action::Widow) && est < WIDOW_BELOW {
                return Some(Action::Widow);
            }
            if self.legal_has(Action::Drop) {
                return Some(Action::Drop);
            }
        }
        Some(Action::Stand)
    }

    fn exchange_turn(&self) -> Option<Action> {
        if self.view.ruleset == RulesetId::Rams {
            return self.rams_turn();
        }
        // Lanterlui, Loo: a flush takes the pot; Mouche, Mistigri: a mouche takes the basket.
        let flushish = matches!(
            self.view.ruleset,
            RulesetId::Lanterlui | RulesetId::Loo | RulesetId::Mouche | RulesetId::Mistigri
        ) && self.lanterlui_flush_suit_count() >= 4;
        if self.legal_has(Action::Drop)
            && !flushish
            && self.strength(self.hand_with_turn_up()) < STAY_AT
        {
            return Some(Action::Drop);
        }
        let talon = self.view.talon_len as usize;
        if talon == 0 || self.hand.len() == 5 && self.lanterlui_flush_suit_count() == 5 && flushish
        {
            return Some(Action::Stand);
        }
        let mut give: Vec<Card> = if flushish {
            // Four of a suit: change the odd card and hope for the flush (LL9).
            let suit = crate::card::Suit::ALL
                .into_iter()
                .max_by_key(|&s| {
                    self.hand
                        .iter()
                        .filter(|&c| self.order.suit_of(c) == s)
                        .count()
                })
                .unwrap_or(self.order.trump);
            self.hand
                .iter()
                .filter(|&c| self.order.suit_of(c) != suit)
                .collect()
        } else {
            self.hand
                .iter()
                .filter(|&c| !self.order.is_trump(c) && self.higher_unseen(c) > 0)
                .collect()
        };
        give.sort_by_key(|&c| self.keep_value(c));
        give.truncate(talon.min(5));
        if give.is_empty() {
            return Some(Action::Stand);
        }
        let set: CardSet = give.into_iter().collect();
        let a = Action::Exchange(set);
        Some(if self.legal_has(a) { a } else { Action::Stand })
    }

    fn discard(&self) -> Option<Action> {
        self.view
            .legal_actions
            .iter()
            .filter_map(|&a| match a {
                Action::Discard(c) => Some((self.keep_value(c), a)),
                _ => None,
            })
            .min_by_key(|(k, _)| *k)
            .map(|(_, a)| a)
    }

    fn challenge(&self) -> Option<Action> {
        if self.legal_has(Action::Challenge) && self.strength(self.hand) >= CHALLENGE_AT {
            Some(Action::Challenge)
        } else {
            Some(Action::Decline)
        }
    }

    /// The trick in progress: its cards so far (empty when the seat leads).
    fn current_trick(&self) -> &[(crate::seat::Seat, PlayedCard)] {
        match self.view.tricks.last() {
            Some(t) if t.winner.is_none() => &t.cards,
            _ => &[],
        }
    }

    /// Whether `c` would win the trick as it stands.
    fn wins_now(&self, c: Card) -> bool {
        let cards = self.current_trick();
        let Some((_, lead)) = cards.first() else {
            return true;
        };
        let led = match lead {
            PlayedCard::FaceUp(l) => self.order.suit_of(*l),
            PlayedCard::FaceDown(_) => self.order.trump,
        };
        let mut best = 0;
        for (_, p) in cards {
            let power = match p {
                PlayedCard::FaceUp(x)
                    if self.order.is_trump(*x) || self.order.suit_of(*x) == led =>
                {
                    self.order.power(*x)
                }
                PlayedCard::FaceUp(_) => 0,
                PlayedCard::FaceDown(_) => HIDDEN_POWER,
            };
            best = best.max(power);
        }
        (self.order.is_trump(c) || self.order.suit_of(c) == led) && self.order.power(c) > best
    }

    fn play_card(&self) -> Option<Action> {
        let legal = &self.view.legal_actions;
        // A face-down lead (A23): give up the least useful card.
        if let Some(a) = legal
            .iter()
            .filter_map(|&a| match a {
                Action::Hidden(c) => Some((self.keep_value(c), a)),
                _ => None,
            })
            .min_by_key(|(k, _)| *k)
            .map(|(_, a)| a)
        {
            return Some(a);
        }
        let cards: Vec<Card> = legal
            .iter()
            .filter_map(|a| match a {
                Action::Card(c) => Some(*c),
                _ => None,
            })
            .collect();
        let lowest = |cs: &mut dyn Iterator<Item = Card>| {
            cs.min_by_key(|&c| (self.order.is_trump(c), self.order.power(c)))
        };
        let pick = if self.current_trick().is_empty() {
            // Lead a card nobody can beat (a master trump first, to draw trumps), else the
            // lowest plain card.
            let mut by_power = cards.clone();
            by_power.sort_by_key(|&c| std::cmp::Reverse(self.order.power(c)));
            by_power
                .iter()
                .copied()
                .find(|&c| self.higher_unseen(c) == 0)
                .or_else(|| lowest(&mut cards.iter().copied()))
        } else {
            // Win as cheaply as possible, else throw the cheapest card. A bower the seat may
            // withhold (0.4 item 7) is the strongest card, so a cheaper winner keeps it.
            let winning = cards.iter().copied().filter(|&c| self.wins_now(c));
            winning
                .min_by_key(|&c| self.order.power(c))
                .or_else(|| lowest(&mut cards.iter().copied()))
        };
        pick.map(Action::Card)
    }
}
