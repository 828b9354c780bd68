//! [`view_to_pb`](super::view_to_pb)'s message written straight to protobuf bytes.
//!
//! Why: a bot gets the whole `SeatView` with every decision, one per move. Building the
//! `pb::SeatView` (a `String` per card and action) and letting prost encode it (the length of
//! each nested message computed again at every level) was ≈ 5 µs of the server's ≈ 45 µs per
//! move. This writes the same bytes in one pass with no allocation but the output. The bytes
//! are prost's for `view_to_pb`'s message, field for field (fields in tag order, proto3
//! defaults left out, explicit-presence fields written when set, packed repeated scalars); a
//! test compares them over every decision of random matches of every ruleset, for every viewer.
//! The same guards apply: a spectator's bytes carry no hand, legal actions or deadline, and
//! another seat's exchange carries only its verb.

use std::time::SystemTime;

use bete_rules::view::{PlayedCard, SeatPublic, TrickView};
use bete_rules::{Action, Card, Pools, Seat, View, Viewer};
use prost::encoding::{WireType, encode_key, encode_varint};

use super::cards::{ruleset_to_pb, suit_to_pb};
use super::view::phase_to_pb;
use crate::pb;

/// Appends `view` to `buf` as the bytes of `view_to_pb(table_id, seq, view, deadline)`.
pub fn encode_seat_view(
    buf: &mut Vec<u8>,
    table_id: &str,
    seq: u64,
    view: &View,
    deadline: Option<SystemTime>,
) {
    let viewer_seat = match view.viewer {
        Viewer::Seat(s) => Some(s),
        Viewer::Spectator => None,
    };
    let viewer_acts = viewer_seat.is_some() && viewer_seat == view.to_act;
    let (phase, exchange_round, trick_index) = phase_to_pb(view.phase);
    string(buf, 1, table_id);
    uint64(buf, 2, seq);
    if let Some(s) = viewer_seat {
        present_uint(buf, 3, u64::from(s.0));
    }
    uint64(buf, 4, ruleset_to_pb(view.ruleset) as u64);
    uint64(buf, 5, u64::from(view.seats));
    uint64(buf, 6, u64::from(view.deal));
    uint64(buf, 7, u64::from(view.dealer.0));
    uint64(buf, 8, phase as u64);
    uint64(buf, 9, u64::from(exchange_round));
    uint64(buf, 10, u64::from(trick_index));
    if let Some(s) = view.to_act {
        present_uint(buf, 11, u64::from(s.0));
    }
    if let (Some(_), Some(hand)) = (viewer_seat, view.hand) {
        for c in hand.iter() {
            card_field(buf, 12, c);
        }
    }
    if let Some(c) = view.turn_up {
        card_field(buf, 13, c);
    }
    for &c in &view.set_aside_turn_ups {
        card_field(buf, 14, c);
    }
    if let Some(t) = view.trump {
        uint64(buf, 15, suit_to_pb(t) as u64);
    }
    uint64(buf, 16, u64::from(view.talon_len));
    boolean(buf, 17, view.muss);
    boolean(buf, 18, view.turn_up_taken);
    for s in &view.seat_states {
        message(buf, 19, |b| seat_state(b, s, viewer_seat));
    }
    for t in &view.tricks {
        message(buf, 20, |b| trick(b, t));
    }
    message(buf, 21, |b| pools(b, &view.pools));
    if viewer_acts {
        for &a in &view.legal_actions {
            message(buf, 22, |b| action(b, a));
        }
        if let Some(d) = deadline {
            let t = prost_types::Timestamp::from(d);
            message(buf, 23, |b| {
                int64(b, 1, t.seconds);
                int64(b, 2, i64::from(t.nanos));
            });
        }
    }
    boolean(buf, 24, view.match_over);
    if let Some(s) = view.trick_holder {
        present_uint(buf, 25, u64::from(s.0));
    }
}

/// Appends the `WatchBotResponse` that asks `view`'s seat to act: `table_id`, then `decision`
/// (a `DecisionRequest` of `table_id`, `seq` and the view), as prost writes that message.
pub fn encode_watch_bot_decision(
    buf: &mut Vec<u8>,
    table_id: &str,
    seq: u64,
    view: &View,
    deadline: Option<SystemTime>,
) {
    string(buf, 1, table_id);
    message(buf, 5, |b| {
        string(b, 1, table_id);
        uint64(b, 2, seq);
        message(b, 3, |b| encode_seat_view(b, table_id, seq, view, deadline));
    });
}

fn seat_state(buf: &mut Vec<u8>, s: &SeatPublic, viewer: Option<Seat>) {
    uint64(buf, 1, u64::from(s.seat.0));
    int64(buf, 2, s.balance);
    uint64(buf, 3, u64::from(s.hand_len));
    uint64(buf, 4, u64::from(s.tricks));
    boolean(buf, 5, s.declarer);
    boolean(buf, 6, s.contrer);
    boolean(buf, 7, s.dropped);
    packed(buf, 8, s.exchanged.iter().map(|&n| u64::from(n)));
    match s.last_spoke {
        // Which cards another seat exchanged is private to it: only the verb.
        Some(Action::Exchange(_)) if viewer != Some(s.seat) => message(buf, 9, |b| {
            uint64(b, 1, pb::ActionKind::Exchange as u64);
            string(b, 3, "exchange");
        }),
        Some(a) => message(buf, 9, |b| action(b, a)),
        None => {}
    }
}

fn trick(buf: &mut Vec<u8>, t: &TrickView) {
    uint64(buf, 1, u64::from(t.leader.0));
    for &(seat, played) in &t.cards {
        message(buf, 2, |b| {
            uint64(b, 1, u64::from(seat.0));
            let (card, face_down) = match played {
                PlayedCard::FaceUp(c) => (Some(c), false),
                PlayedCard::FaceDown(c) => (c, true),
            };
            if let Some(c) = card {
                card_field(b, 2, c);
            }
            boolean(b, 3, face_down);
        });
    }
    if let Some(w) = t.winner {
        present_uint(buf, 3, u64::from(w.0));
    }
}

fn pools(buf: &mut Vec<u8>, p: &Pools) {
    int64(buf, 1, p.pot);
    int64(buf, 2, p.fiches);
    uint64(buf, 3, u64::from(p.deals_since_won));
    int64(buf, 4, p.king_pool);
    if let Some(s) = p.staked_bete {
        encode_key(5, WireType::Varint, buf);
        encode_varint(s as u64, buf);
    }
    packed(buf, 6, p.bete_queue.iter().map(|&v| v as u64));
    int64(buf, 7, p.heaps[0]);
    int64(buf, 8, p.heaps[1]);
    int64(buf, 9, p.heaps[2]);
    uint64(buf, 10, u64::from(p.bete_streak));
    int64(buf, 11, p.fiche_value);
    int64(buf, 12, p.on_table());
}

/// As `action_to_pb` builds it: kind, its cards, its text.
fn action(buf: &mut Vec<u8>, a: Action) {
    let (kind, cards): (pb::ActionKind, &mut dyn Iterator<Item = Card>) = match a {
        Action::Pass => (pb::ActionKind::Pass, &mut std::iter::empty()),
        Action::Play => (pb::ActionKind::Play, &mut std::iter::empty()),
        Action::Contre => (pb::ActionKind::Contre, &mut std::iter::empty()),
        Action::Drop => (pb::ActionKind::Drop, &mut std::iter::empty()),
        Action::Stand => (pb::ActionKind::Stand, &mut std::iter::empty()),
        Action::Exchange(set) => (pb::ActionKind::Exchange, &mut set.iter()),
        Action::Discard(c) => (pb::ActionKind::Discard, &mut std::iter::once(c)),
        Action::Challenge => (pb::ActionKind::Challenge, &mut std::iter::empty()),
        Action::Decline => (pb::ActionKind::Decline, &mut std::iter::empty()),
        Action::Card(c) => (pb::ActionKind::Card, &mut std::iter::once(c)),
        Action::Hidden(c) => (pb::ActionKind::Hidden, &mut std::iter::once(c)),
        Action::Widow => (pb::ActionKind::Widow, &mut std::iter::empty()),
        Action::General => (pb::ActionKind::General, &mut std::iter::empty()),
    };
    uint64(buf, 1, kind as u64);
    for c in cards {
        card_field(buf, 2, c);
    }
    string(buf, 3, &a.text());
}

// ---- protobuf primitives (proto3: a zero scalar or an empty string is left out) ----

fn uint64(buf: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        present_uint(buf, field, v);
    }
}

/// An `optional` scalar: written whenever set, 0 included.
fn present_uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    encode_key(field, WireType::Varint, buf);
    encode_varint(v, buf);
}

/// int64 and int32 alike: a negative value is its two's complement, 10 bytes.
fn int64(buf: &mut Vec<u8>, field: u32, v: i64) {
    uint64(buf, field, v as u64);
}

fn boolean(buf: &mut Vec<u8>, field: u32, v: bool) {
    uint64(buf, field, u64::from(v));
}

fn string(buf: &mut Vec<u8>, field: u32, s: &str) {
    if !s.is_empty() {
        encode_key(field, WireType::LengthDelimited, buf);
        encode_varint(s.len() as u64, buf);
        buf.extend_from_slice(s.as_bytes());
    }
}

/// A card's code ("TH") as a string field, without a `String`.
fn card_field(buf: &mut Vec<u8>, field: u32, c: Card) {
    // The letters are ASCII (a test pins them to `push_code`).
    encode_key(field, WireType::LengthDelimited, buf);
    buf.extend_from_slice(&[2, c.rank().letter() as u8, c.suit().letter() as u8]);
}

/// A packed repeated varint field; left out when empty.
fn packed(buf: &mut Vec<u8>, field: u32, values: impl Iterator<Item = u64> + Clone) {
    let len: usize = values
        .clone()
        .map(prost::encoding::encoded_len_varint)
        .sum();
    if len > 0 {
        encode_key(field, WireType::LengthDelimited, buf);
        encode_varint(len as u64, buf);
        for v in values {
            encode_varint(v, buf);
        }
    }
}

/// A nested message (always written, even empty: it is set). Its length is not known before it
/// is written: one byte is kept for it, enough below 128 bytes, and the body moved along when
/// the length needs more.
fn message(buf: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    encode_key(field, WireType::LengthDelimited, buf);
    let at = buf.len();
    buf.push(0);
    body(buf);
    let len = buf.len() - at - 1;
    if len < 0x80 {
        buf[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(4);
        encode_varint(len as u64, &mut prefix);
        buf.splice(at..at + 1, prefix);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use bete_rules::{Config, Decks, Game, RulesetId, Seed, Setup};
    use prost::Message;

    use super::*;
    use crate::convert::view_to_pb;

    /// The bytes are prost's for `view_to_pb`'s message: at every step of random matches of
    /// every ruleset and seat count, for every seat and a spectator, with and without a
    /// deadline (before and after 1970, to cover negative seconds).
    #[test]
    fn the_bytes_are_prosts_for_every_view_of_random_matches() {
        let state = std::cell::Cell::new(0x9e37_79b9_7f4a_7c15u64);
        let next = || {
            let mut x = state.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            state.set(x);
            x
        };
        let mut views = 0;
        let mut ended = 0;
        let mut seen = Seen::default();
        let mut buf = Vec::new();
        for ruleset in RulesetId::ALL {
            let (min, max) = ruleset.seat_range();
            for seats in min..=max {
                for m in 0..3u8 {
                    let setup = Setup {
                        ruleset,
                        config: Config::defaults(ruleset, seats),
                        seats,
                        first_dealer: Seat(m % seats),
                        decks: Decks::Seed(Seed([m.wrapping_add(seats); 32])),
                    };
                    let (mut game, _) = Game::new(setup).unwrap();
                    let mut compare = |game: &Game| {
                        let viewers = (0..seats)
                            .map(|s| Viewer::Seat(Seat(s)))
                            .chain([Viewer::Spectator]);
                        for viewer in viewers {
                            let view = game.view(viewer);
                            seen.note(&view);
                            let deadline = match next() % 3 {
                                0 => None,
                                1 => Some(UNIX_EPOCH + Duration::from_millis(next() % (1 << 42))),
                                _ => Some(UNIX_EPOCH - Duration::from_millis(next() % (1 << 40))),
                            };
                            let seq = next() % 100_000;
                            let want = view_to_pb("t_0123456789abcdef", seq, &view, deadline)
                                .encode_to_vec();
                            buf.clear();
                            encode_seat_view(&mut buf, "t_0123456789abcdef", seq, &view, deadline);
                            assert_eq!(
                                buf, want,
                                "{ruleset:?} {seats} seats, {viewer:?}: {view:?}"
                            );
                            let whole = pb::WatchBotResponse {
                                table_id: "t_1".into(),
                                kind: Some(pb::watch_bot_response::Kind::Decision(
                                    pb::DecisionRequest {
                                        table_id: "t_1".into(),
                                        seq,
                                        view: Some(view_to_pb("t_1", seq, &view, deadline)),
                                    },
                                )),
                            };
                            buf.clear();
                            encode_watch_bot_decision(&mut buf, "t_1", seq, &view, deadline);
                            assert_eq!(buf, whole.encode_to_vec());
                            views += 1;
                        }
                    };
                    // Every step of the first deals, then the match played out (a short one
                    // by its config, the rest cut) and its last view, the match over.
                    let mut steps = 0;
                    while let Some(seat) = game.to_act() {
                        if steps < 200 {
                            compare(&game);
                        }
                        let legal = game.legal_actions(seat);
                        let a = legal[(next() % legal.len() as u64) as usize];
                        game.apply(seat, a).unwrap();
                        steps += 1;
                        if steps > 20_000 {
                            break;
                        }
                    }
                    compare(&game);
                    ended += u32::from(game.is_over());
                }
            }
        }
        assert!(views > 10_000, "{views} views compared");
        assert!(ended > 0, "no match ended");
        // The rarer parts of a view were among those compared.
        assert!(seen.all(), "{seen:?}");
    }

    /// Which rarer parts of a view the comparison met.
    #[derive(Debug, Default)]
    struct Seen {
        face_down: bool,
        staked_bete: bool,
        bete_queue_of_two: bool,
        set_aside_turn_up: bool,
        exchange_round_two: bool,
        others_exchange: bool,
        own_exchange: bool,
        negative_balance: bool,
    }

    impl Seen {
        fn note(&mut self, v: &View) {
            use bete_rules::Phase;
            self.face_down |= v.tricks.iter().any(|t| {
                t.cards
                    .iter()
                    .any(|(_, p)| matches!(p, PlayedCard::FaceDown(_)))
            });
            self.staked_bete |= v.pools.staked_bete.is_some();
            self.bete_queue_of_two |= v.pools.bete_queue.len() >= 2;
            self.set_aside_turn_up |= !v.set_aside_turn_ups.is_empty();
            self.exchange_round_two |= v.phase == Phase::Exchange { round: 2 };
            for s in &v.seat_states {
                if let Some(Action::Exchange(_)) = s.last_spoke {
                    if v.viewer == Viewer::Seat(s.seat) {
                        self.own_exchange = true;
                    } else {
                        self.others_exchange = true;
                    }
                }
                self.negative_balance |= s.balance < 0;
            }
        }

        fn all(&self) -> bool {
            self.face_down
                && self.staked_bete
                && self.bete_queue_of_two
                && self.set_aside_turn_up
                && self.exchange_round_two
                && self.others_exchange
                && self.own_exchange
                && self.negative_balance
        }
    }

    /// The second guard holds on its own: a spectator's view that (by a slip upstream) carries
    /// a hand and legal actions, and a seat's view with another seat's exchanged cards, are
    /// written without them, exactly as `view_to_pb` writes them.
    #[test]
    fn the_guards_hold_on_a_faulty_view() {
        let setup = Setup {
            ruleset: RulesetId::BesteBoer,
            config: Config::defaults(RulesetId::BesteBoer, 4),
            seats: 4,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed([3; 32])),
        };
        let (game, _) = Game::new(setup).unwrap();
        let to_act = game.to_act().unwrap();
        let mut view = game.view(Viewer::Seat(to_act));
        assert!(view.hand.is_some() && !view.legal_actions.is_empty());
        let other = Seat((to_act.0 + 1) % 4);
        let hand = view.hand.unwrap();
        view.seat_states[usize::from(other.0)].last_spoke = Some(Action::Exchange(hand));
        let deadline = Some(UNIX_EPOCH + Duration::from_secs(1_800_000_000));
        let check = |view: &View| {
            let mut buf = Vec::new();
            encode_seat_view(&mut buf, "t_1", 7, view, deadline);
            assert_eq!(buf, view_to_pb("t_1", 7, view, deadline).encode_to_vec());
            pb::SeatView::decode(&buf[..]).unwrap()
        };
        // A seat: its own hand and actions, but not the other seat's exchanged cards.
        let seat = check(&view);
        assert!(!seat.hand.is_empty() && !seat.legal_actions.is_empty());
        let spoke = seat.seat_states[usize::from(other.0)]
            .last_spoke
            .clone()
            .unwrap();
        assert!(spoke.cards.is_empty(), "{spoke:?}");
        // The same view addressed to a spectator: no hand, no actions, no deadline.
        view.viewer = Viewer::Spectator;
        let spectator = check(&view);
        assert!(spectator.hand.is_empty());
        assert!(spectator.legal_actions.is_empty());
        assert!(spectator.deadline.is_none());
    }

    /// A nested message over 127 bytes gets a longer length prefix: the body moves along.
    #[test]
    fn a_long_nested_message_keeps_its_bytes() {
        let mut buf = vec![9];
        message(&mut buf, 5, |b| string(b, 1, &"x".repeat(300)));
        let mut want = vec![9];
        let mut inner = Vec::new();
        string(&mut inner, 1, &"x".repeat(300));
        prost::encoding::bytes::encode(5, &inner, &mut want);
        assert_eq!(want.len(), 1 + 1 + 2 + inner.len(), "a two-byte length");
        assert_eq!(buf, want);
    }
}
