//! A viewer's `bete_rules::View` as a `pb::SeatView`.
//!
//! The engine builds the view from what the viewer may know; this conversion adds a second
//! guard so that a slip in one place cannot leak a card: a spectator's message never carries a
//! hand, legal actions or a deadline, and another seat's exchange never carries its cards.

use std::time::SystemTime;

use bete_rules::view::{PlayedCard, SeatPublic, TrickView};
use bete_rules::{Action, Phase, Pools, RulesetId, Seat, View, Viewer};

use super::cards::{action_to_pb, card_to_pb, cards_to_pb, ruleset_to_pb, suit_to_pb};
use super::timestamp;
use crate::pb;

/// `view` as the message sent to its viewer. `seq` is the table's latest event included in the
/// view; `deadline` is when the seat to act must have acted, and is sent only to that seat.
pub fn view_to_pb(
    table_id: &str,
    seq: u64,
    view: &View,
    deadline: Option<SystemTime>,
) -> pb::SeatView {
    let viewer_seat = match view.viewer {
        Viewer::Seat(s) => Some(s),
        Viewer::Spectator => None,
    };
    let viewer_acts = viewer_seat.is_some() && viewer_seat == view.to_act;
    let (phase, exchange_round, trick_index) = phase_to_pb(view.phase);
    pb::SeatView {
        table_id: table_id.to_string(),
        seq,
        viewer_seat: viewer_seat.map(|s| u32::from(s.0)),
        ruleset: ruleset_to_pb(view.ruleset).into(),
        seats: u32::from(view.seats),
        deal: view.deal,
        dealer: u32::from(view.dealer.0),
        phase: phase.into(),
        exchange_round,
        trick_index,
        to_act: view.to_act.map(|s| u32::from(s.0)),
        hand: match (viewer_seat, view.hand) {
            (Some(_), Some(hand)) => cards_to_pb(hand),
            _ => Vec::new(),
        },
        turn_up: view.turn_up.map(card_to_pb).unwrap_or_default(),
        set_aside_turn_ups: view
            .set_aside_turn_ups
            .iter()
            .copied()
            .map(card_to_pb)
            .collect(),
        trump: view
            .trump
            .map(suit_to_pb)
            .unwrap_or(pb::Suit::Unspecified)
            .into(),
        talon_len: u32::from(view.talon_len),
        muss: view.muss,
        turn_up_taken: view.turn_up_taken,
        seat_states: view
            .seat_states
            .iter()
            .map(|s| seat_state_to_pb(s, viewer_seat))
            .collect(),
        tricks: view.tricks.iter().map(trick_to_pb).collect(),
        pools: Some(pools_to_pb(&view.pools)),
        legal_actions: if viewer_acts {
            view.legal_actions
                .iter()
                .copied()
                .map(action_to_pb)
                .collect()
        } else {
            Vec::new()
        },
        deadline: if viewer_acts {
            deadline.map(timestamp)
        } else {
            None
        },
        match_over: view.match_over,
        trick_holder: view.trick_holder.map(|s| u32::from(s.0)),
    }
}

/// The view of a table whose seats are not all taken yet: no cards, every balance 0.
pub fn awaiting_players_view(
    table_id: &str,
    seq: u64,
    ruleset: RulesetId,
    seats: u8,
    first_dealer: Seat,
    viewer: Viewer,
) -> pb::SeatView {
    pb::SeatView {
        table_id: table_id.to_string(),
        seq,
        viewer_seat: match viewer {
            Viewer::Seat(s) => Some(u32::from(s.0)),
            Viewer::Spectator => None,
        },
        ruleset: ruleset_to_pb(ruleset).into(),
        seats: u32::from(seats),
        dealer: u32::from(first_dealer.0),
        phase: pb::Phase::AwaitingPlayers.into(),
        seat_states: (0..seats)
            .map(|s| pb::SeatState {
                seat: u32::from(s),
                exchanged: vec![0, 0],
                ..pb::SeatState::default()
            })
            .collect(),
        pools: Some(pb::Pools::default()),
        ..pb::SeatView::default()
    }
}

/// The phase enum plus the exchange round (1 or 2) and the trick index it carries.
pub(super) fn phase_to_pb(phase: Phase) -> (pb::Phase, u32, u32) {
    match phase {
        Phase::AwaitingDeck => (pb::Phase::AwaitingDeck, 0, 0),
        Phase::Bidding => (pb::Phase::Bidding, 0, 0),
        Phase::Exchange { round } => (pb::Phase::Exchange, u32::from(round), 0),
        Phase::DealerDiscard => (pb::Phase::DealerDiscard, 0, 0),
        Phase::Challenge => (pb::Phase::Challenge, 0, 0),
        Phase::Trick { trick } => (pb::Phase::Trick, 0, u32::from(trick)),
        Phase::MatchOver => (pb::Phase::MatchOver, 0, 0),
    }
}

fn seat_state_to_pb(s: &SeatPublic, viewer: Option<Seat>) -> pb::SeatState {
    pb::SeatState {
        seat: u32::from(s.seat.0),
        balance: s.balance,
        hand_len: u32::from(s.hand_len),
        tricks: u32::from(s.tricks),
        declarer: s.declarer,
        contrer: s.contrer,
        dropped: s.dropped,
        exchanged: s.exchanged.iter().map(|&n| u32::from(n)).collect(),
        last_spoke: s.last_spoke.map(|a| match a {
            // Which cards another seat exchanged is private to it: send only the verb.
            Action::Exchange(_) if viewer != Some(s.seat) => pb::Action {
                kind: pb::ActionKind::Exchange.into(),
                cards: Vec::new(),
                text: "exchange".to_string(),
            },
            a => action_to_pb(a),
        }),
    }
}

fn trick_to_pb(t: &TrickView) -> pb::Trick {
    pb::Trick {
        leader: u32::from(t.leader.0),
        plays: t
            .cards
            .iter()
            .map(|&(seat, played)| {
                let (card, face_down) = match played {
                    PlayedCard::FaceUp(c) => (card_to_pb(c), false),
                    PlayedCard::FaceDown(c) => (c.map(card_to_pb).unwrap_or_default(), true),
                };
                pb::TrickPlay {
                    seat: u32::from(seat.0),
                    card,
                    face_down,
                }
            })
            .collect(),
        winner: t.winner.map(|s| u32::from(s.0)),
    }
}

pub(crate) fn pools_to_pb(p: &Pools) -> pb::Pools {
    pb::Pools {
        pot: p.pot,
        fiches: p.fiches,
        deals_since_won: p.deals_since_won,
        king_pool: p.king_pool,
        staked_bete: p.staked_bete,
        bete_queue: p.bete_queue.clone(),
        heap_king: p.heaps[0],
        heap_play: p.heaps[1],
        heap_triolet: p.heaps[2],
        bete_streak: p.bete_streak,
        fiche_value: p.fiche_value,
        on_table: p.on_table(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bete_rules::{Card, CardSet};
    use std::time::Duration;

    fn card(s: &str) -> Card {
        s.parse().unwrap()
    }

    fn set(cards: &[&str]) -> CardSet {
        let mut s = CardSet::EMPTY;
        for c in cards {
            s.insert(card(c));
        }
        s
    }

    /// A Beste Boer view in trick 1, seat 1 to act, as the engine would build it for `viewer`.
    fn sample(viewer: Viewer) -> View {
        let hand = match viewer {
            Viewer::Seat(Seat(1)) => Some(set(&["JC", "7H", "AS"])),
            Viewer::Seat(_) => Some(set(&["8D", "9D", "TD"])),
            Viewer::Spectator => None,
        };
        let legal = match viewer {
            Viewer::Seat(Seat(1)) => vec![Action::Card(card("JC"))],
            _ => Vec::new(),
        };
        View {
            viewer,
            ruleset: RulesetId::BesteBoer,
            seats: 3,
            deal: 2,
            dealer: Seat(0),
            phase: Phase::Trick { trick: 1 },
            to_act: Some(Seat(1)),
            hand,
            turn_up: Some(card("QC")),
            set_aside_turn_ups: vec![],
            trump: Some(bete_rules::Suit::Clubs),
            talon_len: 9,
            muss: false,
            turn_up_taken: false,
            seat_states: (0..3u8)
                .map(|i| SeatPublic {
                    seat: Seat(i),
                    balance: i64::from(i) * 3 - 3,
                    hand_len: 3,
                    tricks: u8::from(i == 2),
                    exchanged: [if i == 2 { 2 } else { 0 }, 0],
                    last_spoke: Some(if i == 2 {
                        Action::Exchange(set(&["2S", "3S"]))
                    } else {
                        Action::Stand
                    }),
                    ..SeatPublic::default()
                })
                .collect(),
            tricks: vec![
                TrickView {
                    leader: Seat(1),
                    cards: vec![
                        (Seat(1), PlayedCard::FaceDown(None)),
                        (Seat(2), PlayedCard::FaceUp(card("KH"))),
                        (Seat(0), PlayedCard::FaceUp(card("AH"))),
                    ],
                    winner: Some(Seat(2)),
                },
                TrickView {
                    leader: Seat(2),
                    cards: vec![(Seat(2), PlayedCard::FaceUp(card("9S")))],
                    winner: None,
                },
            ],
            pools: Pools {
                pot: 12,
                heaps: [1, 2, 3],
                staked_bete: Some(4),
                bete_queue: vec![5, 6],
                bete_streak: 1,
                ..Pools::default()
            },
            legal_actions: legal,
            match_over: false,
            trick_holder: Some(Seat(2)),
        }
    }

    #[test]
    fn the_seat_to_act_gets_hand_legal_actions_and_deadline() {
        let deadline = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let v = view_to_pb("t1", 17, &sample(Viewer::Seat(Seat(1))), Some(deadline));
        assert_eq!(v.table_id, "t1");
        assert_eq!(v.seq, 17);
        assert_eq!(v.viewer_seat, Some(1));
        assert_eq!(v.ruleset, pb::Ruleset::BesteBoer as i32);
        assert_eq!(v.phase, pb::Phase::Trick as i32);
        assert_eq!((v.trick_index, v.exchange_round), (1, 0));
        assert_eq!(v.to_act, Some(1));
        assert_eq!(v.trick_holder, Some(2), "the 9S holds trick 2 so far");
        assert_eq!(v.hand, vec!["AS", "7H", "JC"]);
        assert_eq!(v.turn_up, "QC");
        assert_eq!(v.trump, pb::Suit::Clubs as i32);
        assert_eq!(v.talon_len, 9);
        assert_eq!(v.legal_actions.len(), 1);
        assert_eq!(v.legal_actions[0].text, "card JC");
        assert_eq!(
            v.deadline,
            Some(prost_types::Timestamp {
                seconds: 1_000,
                nanos: 0
            })
        );
        assert_eq!(v.seat_states.len(), 3);
        assert_eq!(v.seat_states[0].balance, -3);
        assert_eq!(v.seat_states[2].exchanged, vec![2, 0]);
        let pools = v.pools.unwrap();
        assert_eq!(
            (
                pools.pot,
                pools.heap_king,
                pools.heap_play,
                pools.heap_triolet
            ),
            (12, 1, 2, 3)
        );
        assert_eq!(
            (pools.staked_bete, pools.bete_queue, pools.bete_streak),
            (Some(4), vec![5, 6], 1)
        );
        let t0 = &v.tricks[0];
        assert_eq!((t0.leader, t0.winner), (1, Some(2)));
        assert_eq!(
            (t0.plays[0].card.as_str(), t0.plays[0].face_down),
            ("", true)
        );
        assert_eq!(
            (t0.plays[1].card.as_str(), t0.plays[1].face_down),
            ("KH", false)
        );
        assert_eq!(v.tricks[1].winner, None);
    }

    #[test]
    fn another_seat_gets_no_legal_actions_no_deadline_and_no_foreign_exchange_cards() {
        let deadline = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let v = view_to_pb("t1", 17, &sample(Viewer::Seat(Seat(0))), Some(deadline));
        assert_eq!(v.viewer_seat, Some(0));
        assert_eq!(v.hand, vec!["8D", "9D", "TD"]);
        assert!(v.legal_actions.is_empty());
        assert_eq!(v.deadline, None);
        let spoke = v.seat_states[2].last_spoke.as_ref().unwrap();
        assert_eq!(spoke.kind, pb::ActionKind::Exchange as i32);
        assert!(spoke.cards.is_empty());
        assert_eq!(spoke.text, "exchange");
        assert_eq!(v.seat_states[1].last_spoke.as_ref().unwrap().text, "stand");

        // The exchanging seat itself sees its own cards.
        let own = view_to_pb("t1", 17, &sample(Viewer::Seat(Seat(2))), None);
        assert_eq!(
            own.seat_states[2].last_spoke.as_ref().unwrap().text,
            "exchange 2S 3S"
        );
    }

    #[test]
    fn a_spectator_gets_no_hand_even_if_the_view_had_one() {
        let mut view = sample(Viewer::Spectator);
        // A slip upstream must still not leak.
        view.hand = Some(set(&["AS"]));
        view.legal_actions = vec![Action::Card(card("AS"))];
        let v = view_to_pb("t1", 3, &view, Some(SystemTime::UNIX_EPOCH));
        assert_eq!(v.viewer_seat, None);
        assert!(v.hand.is_empty());
        assert!(v.legal_actions.is_empty());
        assert_eq!(v.deadline, None);
        assert!(
            v.seat_states[2]
                .last_spoke
                .as_ref()
                .unwrap()
                .cards
                .is_empty()
        );
    }

    #[test]
    fn phases_carry_their_round_and_trick() {
        assert_eq!(
            phase_to_pb(Phase::Exchange { round: 2 }),
            (pb::Phase::Exchange, 2, 0)
        );
        assert_eq!(
            phase_to_pb(Phase::Trick { trick: 4 }),
            (pb::Phase::Trick, 0, 4)
        );
        assert_eq!(phase_to_pb(Phase::Bidding).0, pb::Phase::Bidding);
        assert_eq!(phase_to_pb(Phase::MatchOver).0, pb::Phase::MatchOver);
    }

    #[test]
    fn waiting_view_has_no_cards() {
        let v = awaiting_players_view("t", 2, RulesetId::Beast, 4, Seat(1), Viewer::Seat(Seat(3)));
        assert_eq!(v.phase, pb::Phase::AwaitingPlayers as i32);
        assert_eq!(v.seat_states.len(), 4);
        assert_eq!(v.dealer, 1);
        assert_eq!(v.viewer_seat, Some(3));
        assert!(v.hand.is_empty() && v.legal_actions.is_empty() && v.to_act.is_none());
    }
}
