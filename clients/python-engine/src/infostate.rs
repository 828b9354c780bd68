//! The information-state tensor's memory block: what a seat remembers of the current deal that
//! its view (and so the observation tensor) no longer shows. The information-state tensor is the
//! observation tensor followed by this block (docs/research.md has the table).

use bete_rules::view::PlayedCard;
use bete_rules::{Action, CardSet, MAX_SEATS, Seat, Seen, View};

use crate::encode::{CARDS, OBS_LEN, card_index};

/// Tricks in a deal.
const TRICKS: usize = 5;
/// The spoken actions of the deal kept, in order (later ones are left out).
pub const SPOKEN_SLOTS: usize = 32;
/// Per spoken action: the relative seat one-hot, then the word one-hot (the nine words of
/// `Action::WORDS`, then exchange).
const SPOKEN_FEATURES: usize = MAX_SEATS + Action::WORDS.len() + 1;

/// The seat's hand as dealt.
pub const MEM_DEALT: usize = 0;
/// The cards it set aside in its first and second exchange, 2 × 52.
pub const MEM_SET_ASIDE: usize = MEM_DEALT + CARDS;
/// The cards it drew in its first and second exchange, 2 × 52.
pub const MEM_DRAWN: usize = MEM_SET_ASIDE + 2 * CARDS;
/// Its discard after taking up the turn-up.
pub const MEM_DISCARD: usize = MEM_DRAWN + 2 * CARDS;
/// Trick t (0..5), relative seat r: the card it played, if the seat may know it;
/// 5 × 10 × 52.
pub const MEM_TRICKS: usize = MEM_DISCARD + CARDS;
/// The deal's spoken actions (words and exchanges), in order: `SPOKEN_SLOTS` × 20.
pub const MEM_SPOKEN: usize = MEM_TRICKS + TRICKS * MAX_SEATS * CARDS;
/// The block's length.
pub const MEM_LEN: usize = MEM_SPOKEN + SPOKEN_SLOTS * SPOKEN_FEATURES;
/// The information-state tensor's length: the observation tensor, then the memory block.
pub const INFOSTATE_LEN: usize = OBS_LEN + MEM_LEN;

/// Whether an action is spoken (a word or an exchange) rather than a card put down.
pub fn is_spoken(a: Action) -> bool {
    !matches!(a, Action::Card(_) | Action::Hidden(_) | Action::Discard(_))
}

fn rel(s: Seat, me: Seat, seats: u8) -> usize {
    (usize::from(s.0) + usize::from(seats) - usize::from(me.0)) % usize::from(seats.max(1))
}

fn set_cards(m: &mut [f32], at: usize, cards: CardSet) {
    for c in cards.iter() {
        m[at + card_index(c)] = 1.0;
    }
}

/// The memory block of seat `me`, from its view of the deal, what it saw of its own moves and
/// the deal's spoken actions in order (every seat's words are public; an exchange's cards are
/// not in it).
pub fn memory(
    view: &View,
    me: Seat,
    seen: &Seen,
    spoken: impl Iterator<Item = (Seat, Action)>,
) -> Vec<f32> {
    let mut m = vec![0f32; MEM_LEN];
    if let Some(dealt) = seen.dealt {
        set_cards(&mut m, MEM_DEALT, dealt);
    }
    for (k, x) in seen.exchanges.iter().enumerate() {
        if let Some((set_aside, drawn)) = x {
            set_cards(&mut m, MEM_SET_ASIDE + k * CARDS, *set_aside);
            set_cards(&mut m, MEM_DRAWN + k * CARDS, *drawn);
        }
    }
    if let Some(c) = seen.discarded {
        m[MEM_DISCARD + card_index(c)] = 1.0;
    }
    for (t, trick) in view.tricks.iter().take(TRICKS).enumerate() {
        for &(s, played) in &trick.cards {
            if let PlayedCard::FaceUp(c) | PlayedCard::FaceDown(Some(c)) = played {
                let r = rel(s, me, view.seats);
                m[MEM_TRICKS + (t * MAX_SEATS + r) * CARDS + card_index(c)] = 1.0;
            }
        }
    }
    for (k, (s, a)) in spoken.take(SPOKEN_SLOTS).enumerate() {
        let base = MEM_SPOKEN + k * SPOKEN_FEATURES;
        m[base + rel(s, me, view.seats)] = 1.0;
        let word = match a {
            Action::Exchange(_) => Some(Action::WORDS.len()),
            a => Action::WORDS.iter().position(|w| *w == a),
        };
        if let Some(w) = word {
            m[base + MAX_SEATS + w] = 1.0;
        }
    }
    m
}
