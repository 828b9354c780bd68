//! The fixed numeric encodings the research environments (`bete_engine.pettingzoo`,
//! `bete_engine.openspiel`) share: action ids and the observation tensor, both built only from
//! one seat's `View` (docs/research.md documents them; the layout below is the reference).
//!
//! Action ids (196 in all, the same for every ruleset):
//! - `0..52`    `card C`     (C = suit * 13 + rank, suits S H D C, ranks 2 … A)
//! - `52..104`  `hidden C`   (a face-down lead)
//! - `104..156` `discard C`  (the dealer's discard after taking the turn-up)
//! - `156..165` the words: pass, play, contre, drop, stand, challenge, decline, widow, general
//! - `165..196` `exchange`   of a non-empty subset of the hand: id = 165 + mask - 1, where bit i
//!   of mask is the i-th card of the seat's hand in canonical order (S H D C, 2 … A).

use bete_rules::view::{PlayedCard, SeatPublic};
use bete_rules::{Action, Card, CardSet, MAX_SEATS, Phase, Rank, RulesetId, Seat, Suit, View};
use bete_rules::{Viewer, game::ActionError};

/// Cards in the full pack.
pub const CARDS: usize = 52;
/// The most cards a hand holds when it exchanges (every ruleset deals five).
pub const HAND: usize = 5;
const WORD_BASE: usize = 3 * CARDS;
const EXCHANGE_BASE: usize = WORD_BASE + Action::WORDS.len();
/// The number of action ids.
pub const ACTIONS: usize = EXCHANGE_BASE + (1 << HAND) - 1;

/// The card's index in 0..52: suit * 13 + rank.
pub fn card_index(c: Card) -> usize {
    c.suit().index() * 13 + c.rank().index()
}

fn card_at(i: usize) -> Card {
    Card::new(Rank::from_index(i % 13), Suit::from_index(i / 13))
}

/// The id of `action` for a seat holding `hand` (needed for an exchange only).
pub fn action_id(action: Action, hand: CardSet) -> Option<usize> {
    Some(match action {
        Action::Card(c) => card_index(c),
        Action::Hidden(c) => CARDS + card_index(c),
        Action::Discard(c) => 2 * CARDS + card_index(c),
        Action::Exchange(set) => {
            let mut mask = 0usize;
            for (i, c) in hand.iter().enumerate() {
                if set.contains(c) {
                    mask |= 1 << i;
                }
            }
            // A set the hand does not hold, or an empty one, has no id.
            if mask == 0
                || i64::from(set.len()) != i64::from(mask.count_ones())
                || mask >> HAND != 0
            {
                return None;
            }
            EXCHANGE_BASE + mask - 1
        }
        word => WORD_BASE + Action::WORDS.iter().position(|w| *w == word)?,
    })
}

/// The action an id stands for, for a seat holding `hand`; None for an id out of range or an
/// exchange of positions the hand does not have.
pub fn action_of(id: usize, hand: CardSet) -> Option<Action> {
    Some(match id {
        i if i < CARDS => Action::Card(card_at(i)),
        i if i < 2 * CARDS => Action::Hidden(card_at(i - CARDS)),
        i if i < WORD_BASE => Action::Discard(card_at(i - 2 * CARDS)),
        i if i < EXCHANGE_BASE => Action::WORDS[i - WORD_BASE],
        i if i < ACTIONS => {
            let mask = i - EXCHANGE_BASE + 1;
            let cards: Vec<Card> = hand.iter().collect();
            if mask >> cards.len() != 0 {
                return None;
            }
            Action::Exchange(
                cards
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| mask & (1 << k) != 0)
                    .map(|(_, c)| *c)
                    .collect(),
            )
        }
        _ => return None,
    })
}

/// Whether an id is an exchange's (names positions in the hand).
pub fn is_exchange(id: usize) -> bool {
    (EXCHANGE_BASE..ACTIONS).contains(&id)
}

/// Whether an exchange needs the hand to be named by id (only then is a view built).
pub fn needs_hand(actions: &[Action]) -> bool {
    actions.iter().any(|a| matches!(a, Action::Exchange(_)))
}

/// The ids of `actions`, ascending (OpenSpiel's and the masks' order).
pub fn ids(actions: &[Action], hand: CardSet) -> Vec<usize> {
    let mut ids: Vec<usize> = actions.iter().filter_map(|&a| action_id(a, hand)).collect();
    ids.sort_unstable();
    ids
}

/// Why an id is refused: out of range, or not among the seat's legal actions.
pub fn refuse(id: i64, text: Option<Action>, legal: &[Action], why: Option<ActionError>) -> String {
    match (text, why) {
        (None, _) => format!(
            "action id {id} is not legal now: it names no action for this hand (ids are 0..{ACTIONS})"
        ),
        (Some(a), Some(e)) => format!("action id {id} ({a}) is not legal now: {e}"),
        (Some(a), None) => format!(
            "action id {id} ({a}) is not legal now: legal are {}",
            legal
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

// The observation tensor: offsets of its blocks (docs/research.md has the table).
/// The seat's hand.
pub const OBS_HAND: usize = 0;
/// Cards each seat (relative: 0 = me, 1 = next in turn, …) has played this deal, 10 × 52.
pub const OBS_PLAYED: usize = OBS_HAND + CARDS;
/// The current trick's cards by relative seat, 10 × 52.
pub const OBS_TRICK: usize = OBS_PLAYED + MAX_SEATS * CARDS;
/// The current trick: relative seat led face down (a card hidden from the viewer), 10.
pub const OBS_FACE_DOWN: usize = OBS_TRICK + MAX_SEATS * CARDS;
/// The turn-up, one-hot.
pub const OBS_TURN_UP: usize = OBS_FACE_DOWN + MAX_SEATS;
/// Turn-ups set aside by a Curieuse.
pub const OBS_SET_ASIDE: usize = OBS_TURN_UP + CARDS;
/// Trump suit, one-hot (S H D C).
pub const OBS_TRUMP: usize = OBS_SET_ASIDE + CARDS;
/// Phase, one-hot: bidding, exchange round 1, round 2, dealer_discard, challenge, trick,
/// match_over.
pub const OBS_PHASE: usize = OBS_TRUMP + 4;
/// Trick index (0..5), one-hot.
pub const OBS_TRICK_INDEX: usize = OBS_PHASE + 7;
/// Per relative seat, `SEAT_FEATURES` each.
pub const OBS_SEATS: usize = OBS_TRICK_INDEX + 5;
/// Per seat: present, dealer, to act, leads the trick, hand/5, tricks/5, declarer, contrer,
/// dropped, exchanged round 1 /5, round 2 /5, balance/100, then its last spoken action one-hot
/// (pass, play, contre, drop, stand, challenge, decline, widow, general, exchange).
pub const SEAT_FEATURES: usize = 12 + 10;
/// Table scalars: talon/52, muss, turn-up taken, deal/32, pot/100, dish (fiches × value)/100,
/// king pool/100, staked bête/100, bête queue sum/100, queue length/10, three heaps/100, bête
/// streak/10, deals since won/10.
pub const OBS_TABLE: usize = OBS_SEATS + MAX_SEATS * SEAT_FEATURES;
const TABLE_FEATURES: usize = 16;
/// The ruleset, one-hot in `RULESETS` order.
pub const OBS_RULESET: usize = OBS_TABLE + TABLE_FEATURES;
/// The tensor's length.
pub const OBS_LEN: usize = OBS_RULESET + RulesetId::ALL.len();

/// Seat `s` relative to the viewer `me` (0 = the viewer, 1 = the next seat, …).
fn rel(s: Seat, me: Seat, seats: u8) -> usize {
    (usize::from(s.0) + usize::from(seats) - usize::from(me.0)) % usize::from(seats.max(1))
}

/// The observation tensor of a seat's view (a spectator's is encoded from seat 0's position
/// with no hand).
pub fn observation(view: &View) -> Vec<f32> {
    let mut o = vec![0f32; OBS_LEN];
    let me = match view.viewer {
        Viewer::Seat(s) => s,
        Viewer::Spectator => Seat(0),
    };
    let seats = view.seats;
    if let Some(hand) = view.hand {
        for c in hand.iter() {
            o[OBS_HAND + card_index(c)] = 1.0;
        }
    }
    let current = view.tricks.len().saturating_sub(1);
    for (t, trick) in view.tricks.iter().enumerate() {
        let open = t == current && trick.winner.is_none();
        for &(s, played) in &trick.cards {
            let r = rel(s, me, seats);
            let card = match played {
                PlayedCard::FaceUp(c) | PlayedCard::FaceDown(Some(c)) => Some(c),
                PlayedCard::FaceDown(None) => None,
            };
            if let Some(c) = card {
                o[OBS_PLAYED + r * CARDS + card_index(c)] = 1.0;
                if open {
                    o[OBS_TRICK + r * CARDS + card_index(c)] = 1.0;
                }
            }
            if open && matches!(played, PlayedCard::FaceDown(_)) {
                o[OBS_FACE_DOWN + r] = 1.0;
            }
        }
    }
    if let Some(c) = view.turn_up {
        o[OBS_TURN_UP + card_index(c)] = 1.0;
    }
    for &c in &view.set_aside_turn_ups {
        o[OBS_SET_ASIDE + card_index(c)] = 1.0;
    }
    if let Some(t) = view.trump {
        o[OBS_TRUMP + t.index()] = 1.0;
    }
    let phase = match view.phase {
        Phase::Bidding => Some(0),
        Phase::Exchange { round } => Some(if round <= 1 { 1 } else { 2 }),
        Phase::DealerDiscard => Some(3),
        Phase::Challenge => Some(4),
        Phase::Trick { trick } => {
            o[OBS_TRICK_INDEX + usize::from(trick).min(4)] = 1.0;
            Some(5)
        }
        Phase::MatchOver => Some(6),
        Phase::AwaitingDeck => None,
    };
    if let Some(p) = phase {
        o[OBS_PHASE + p] = 1.0;
    }
    let leader = view
        .tricks
        .last()
        .filter(|t| t.winner.is_none())
        .map(|t| t.leader);
    for st in &view.seat_states {
        seat_features(&mut o, st, me, view, leader);
    }
    let p = &view.pools;
    let table = [
        f32::from(view.talon_len) / 52.0,
        f32::from(u8::from(view.muss)),
        f32::from(u8::from(view.turn_up_taken)),
        view.deal as f32 / 32.0,
        p.pot as f32 / 100.0,
        (p.fiches * p.fiche_value) as f32 / 100.0,
        p.king_pool as f32 / 100.0,
        p.staked_bete.unwrap_or(0) as f32 / 100.0,
        p.bete_queue.iter().sum::<i64>() as f32 / 100.0,
        p.bete_queue.len() as f32 / 10.0,
        p.heaps[0] as f32 / 100.0,
        p.heaps[1] as f32 / 100.0,
        p.heaps[2] as f32 / 100.0,
        p.bete_streak as f32 / 10.0,
        p.deals_since_won as f32 / 10.0,
        f32::from(seats) / 10.0,
    ];
    o[OBS_TABLE..OBS_TABLE + TABLE_FEATURES].copy_from_slice(&table);
    if let Some(r) = RulesetId::ALL.iter().position(|r| *r == view.ruleset) {
        o[OBS_RULESET + r] = 1.0;
    }
    o
}

fn seat_features(o: &mut [f32], st: &SeatPublic, me: Seat, view: &View, leader: Option<Seat>) {
    let base = OBS_SEATS + rel(st.seat, me, view.seats) * SEAT_FEATURES;
    let flag = |b: bool| f32::from(u8::from(b));
    let f = [
        1.0,
        flag(view.dealer == st.seat),
        flag(view.to_act == Some(st.seat)),
        flag(leader == Some(st.seat)),
        f32::from(st.hand_len) / 5.0,
        f32::from(st.tricks) / 5.0,
        flag(st.declarer),
        flag(st.contrer),
        flag(st.dropped),
        f32::from(st.exchanged[0]) / 5.0,
        f32::from(st.exchanged[1]) / 5.0,
        st.balance as f32 / 100.0,
    ];
    o[base..base + f.len()].copy_from_slice(&f);
    let spoke = match st.last_spoke {
        Some(Action::Exchange(_)) => Some(9),
        Some(a) => Action::WORDS.iter().position(|w| *w == a),
        None => None,
    };
    if let Some(k) = spoke {
        o[base + f.len() + k] = 1.0;
    }
}

/// The observation tensor as the bytes of little-endian f32s.
pub fn tensor_bytes<'py>(
    py: pyo3::Python<'py>,
    view: &View,
) -> pyo3::Bound<'py, pyo3::types::PyBytes> {
    let bytes: Vec<u8> = observation(view)
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    pyo3::types::PyBytes::new(py, &bytes)
}
