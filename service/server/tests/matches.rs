//! Full matches of every ruleset through a real server: a test bot on WatchBot, two house bots,
//! a spectator on WatchTable. The fetched record must replay to the streamed final balances,
//! and no message to the seat or the spectator may name a card hidden from it at that moment
//! (checked against an independent replay of the engine).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashMap};

use bete_api::pb;
use bete_api::pb::event::Body as B;
use bete_rules::record::{Record, replay_json};
use bete_rules::{Card, CardSet, Event, Game, Seat, Viewer};
use common::*;

/// What one recipient received, with the seq each message reflects.
#[derive(Debug)]
enum Seen {
    Event(pb::Event),
    View(pb::SeatView),
}

fn is_game_event(e: &pb::Event) -> bool {
    !matches!(
        e.body,
        Some(B::SeatTaken(_))
            | Some(B::SeatLeft(_))
            | Some(B::MatchStarted(_))
            | Some(B::StrikeCounted(_))
            | None
    )
}

struct Played {
    record: String,
    seat_msgs: Vec<Seen>,
    spectator_msgs: Vec<Seen>,
    final_balances: Vec<i64>,
    seat: u32,
}

async fn play(ruleset: pb::Ruleset, seats: u32, seed: &str, srv: &TestServer) -> Played {
    let ch = srv.channel().await;
    let mut me = register(&ch, "tester-one").await;
    let mut spectator = register(&ch, "spectator-bot").await;
    let table = me
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: ruleset.into(),
            seats,
            house_bots: (1..seats)
                .map(|s| {
                    house(
                        s,
                        if s % 2 == 0 {
                            pb::HouseBotPolicy::Heuristic
                        } else {
                            pb::HouseBotPolicy::Random
                        },
                    )
                })
                .collect(),
            seed: seed.into(),
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    let id = table.table_id.clone();

    // The spectator follows from before the match starts until the stream ends.
    let mut spec_stream = spectator
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let spec_task = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(m) = spec_stream.message().await.unwrap() {
            match m.kind.unwrap() {
                pb::watch_table_response::Kind::Snapshot(v) => seen.push(Seen::View(v)),
                pb::watch_table_response::Kind::Event(e) => seen.push(Seen::Event(e)),
                pb::watch_table_response::Kind::Heartbeat(_) => {}
                pb::watch_table_response::Kind::Resync(r) => panic!("resync {r:?}"),
            }
        }
        seen
    });

    let mut stream = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let joined = me
        .client
        .join_table(pb::JoinTableRequest {
            invitation_code: String::new(),
            table_id: id.clone(),
            seat: Some(0),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.seat, 0);

    let mut seat_msgs = Vec::new();
    let mut final_balances = Vec::new();
    let mut n = 0u64;
    while let Some(m) = timeout(60, stream.message()).await.unwrap().unwrap() {
        use pb::watch_bot_response::Kind;
        match m.kind.unwrap() {
            Kind::Seated(s) => assert_eq!(s.seat, 0),
            Kind::Snapshot(v) => seat_msgs.push(Seen::View(v)),
            Kind::Event(e) => {
                if let Some(B::MatchEnded(end)) = &e.body {
                    final_balances = end.balances.clone();
                    seat_msgs.push(Seen::Event(e));
                    break;
                }
                seat_msgs.push(Seen::Event(e));
            }
            Kind::Decision(d) => {
                let view = d.view.unwrap();
                assert_eq!(view.to_act, Some(0));
                assert!(view.deadline.is_some());
                // Spread over the legal actions so many paths are played.
                n += 1;
                let action =
                    view.legal_actions[(n as usize * 7) % view.legal_actions.len()].clone();
                // Also check GetSeatView agrees with the decision.
                let sv = me
                    .client
                    .get_seat_view(pb::GetSeatViewRequest {
                        table_id: id.clone(),
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .view
                    .unwrap();
                assert_eq!(sv.seq, d.seq);
                assert_eq!(sv.hand, view.hand);
                seat_msgs.push(Seen::View(sv));
                seat_msgs.push(Seen::View(view));
                let r = me
                    .client
                    .submit_action(pb::SubmitActionRequest {
                        table_id: id.clone(),
                        action: Some(action),
                        expected_seq: d.seq,
                        request_id: format!("req-{n}"),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                assert!(r.seq > d.seq);
                assert!(!r.replayed);
            }
            Kind::Heartbeat(_) => {}
            Kind::Resync(r) => panic!("resync {r:?}"),
        }
    }
    let spectator_msgs = timeout(30, spec_task).await.unwrap().unwrap();
    let record = me
        .client
        .get_game_record(pb::GetGameRecordRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .record_json;
    let t = me
        .client
        .get_table(pb::GetTableRequest { table_id: id })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(t.state, pb::TableState::Finished as i32);
    Played {
        record,
        seat_msgs,
        spectator_msgs,
        final_balances,
        seat: 0,
    }
}

/// The engine's own account of the match: per game event, the cards hidden from each viewer
/// at the moment the event was produced.
struct Truth {
    /// Engine events in order.
    events: Vec<Event>,
    /// For engine event i: per viewer seat (and spectator = index `seats`), the hidden cards.
    hidden_at_event: Vec<Vec<CardSet>>,
    /// Hidden cards per viewer after the action whose last engine event is i.
    hidden_after_event: Vec<Vec<CardSet>>,
    /// A seat's private hand in each DealStarted (engine event index → hand of viewer seat).
    hands: Vec<Vec<CardSet>>,
}

/// What the engine shows a spectator now (e.g. a turn-up the dealer took up): public.
fn public_now(game: &Game) -> CardSet {
    let view = game.view(Viewer::Spectator);
    cards_in(&bete_api::convert::view_to_pb("x", 0, &view, None))
        .into_iter()
        .collect()
}

fn hands(game: &Game) -> Vec<CardSet> {
    (0..game.seats())
        .map(|s| game.view(Viewer::Seat(Seat(s))).hand.unwrap_or_default())
        .collect()
}

/// Hidden from viewer v (v == seats: spectator): every other seat's hand.
fn hidden_from(hands: &[CardSet], minus: CardSet) -> Vec<CardSet> {
    let n = hands.len();
    (0..=n)
        .map(|v| {
            let mut h = CardSet::EMPTY;
            for (y, hand) in hands.iter().enumerate() {
                if y != v {
                    h = h.union(*hand);
                }
            }
            h.minus(minus)
        })
        .collect()
}

fn public_cards(e: &Event, seats: u8) -> CardSet {
    let stamp = bete_api::convert::EventStamp {
        table_id: "x",
        seats,
        seq: 0,
        auto: false,
        time: std::time::SystemTime::UNIX_EPOCH,
    };
    let mut pbe = bete_api::convert::project(e, Viewer::Spectator, &stamp);
    if let Some(B::DealSettled(s)) = &mut pbe.body {
        s.revealed = None;
    }
    cards_in(&pbe).into_iter().collect()
}

fn truth(record: &str) -> Truth {
    let rec = Record::from_json(record).unwrap();
    let (mut game, start) = Game::new(rec.setup()).unwrap();
    let seats = game.seats();
    let mut t = Truth {
        events: Vec::new(),
        hidden_at_event: Vec::new(),
        hidden_after_event: Vec::new(),
        hands: Vec::new(),
    };
    let after = hands(&game);
    let public = public_now(&game);
    for e in start {
        t.hidden_at_event.push(hidden_from(&after, public));
        t.hidden_after_event.push(hidden_from(&after, public));
        t.hands.push(after.clone());
        t.events.push(e);
    }
    for deal in &rec.json.deals {
        for a in &deal.actions {
            let before = hands(&game);
            let public_before = public_now(&game);
            let action = a.action.parse().unwrap();
            let events = game
                .apply_recorded(Seat(a.seat as u8), action, a.auto)
                .unwrap();
            let after = hands(&game);
            let public_after = public_now(&game);
            let public = events
                .iter()
                .fold(public_before.union(public_after), |acc, e| {
                    acc.union(public_cards(e, seats))
                });
            let mut new_deal = false;
            for e in events {
                if matches!(e.public, bete_rules::PublicEvent::DealStarted { .. }) {
                    new_deal = true;
                }
                // Events of the deal in play: other hands before the action, less what the
                // action made public. Events of a new deal: other hands after the action.
                t.hidden_at_event.push(if new_deal {
                    hidden_from(&after, public_after)
                } else {
                    hidden_from(&before, public)
                });
                t.hidden_after_event.push(hidden_from(&after, public_after));
                t.hands.push(after.clone());
                t.events.push(e);
            }
        }
    }
    assert!(game.is_over());
    t
}

/// Check every message of one viewer against the truth. `seq_to_event` maps the seq of every
/// game event to the engine event index.
fn check_no_leak(
    viewer: Option<u32>,
    msgs: &[Seen],
    t: &Truth,
    seq_to_event: &BTreeMap<u64, usize>,
    seats: usize,
) {
    let v = viewer.map(|s| s as usize).unwrap_or(seats);
    // The engine event index of the latest game event at or before a seq.
    let at_or_before = |seq: u64| seq_to_event.range(..=seq).next_back().map(|(_, i)| *i);
    for m in msgs {
        match m {
            Seen::Event(e) => {
                let mut e = e.clone();
                if let Some(B::DealSettled(s)) = &mut e.body {
                    if viewer.is_some() {
                        assert!(s.revealed.is_none(), "a seat got a deal's reveal: {s:?}");
                    }
                    s.revealed = None;
                }
                let cards = cards_in(&e);
                if !is_game_event(&e) {
                    assert!(cards.is_empty(), "table event with cards: {e:?}");
                    continue;
                }
                let i = seq_to_event[&e.seq];
                let hidden = t.hidden_at_event[i][v];
                for c in cards {
                    assert!(
                        !hidden.contains(c),
                        "viewer {viewer:?} got hidden card {c} in event {e:?}"
                    );
                }
                if let (Some(B::DealStarted(d)), Some(s)) = (&e.body, viewer) {
                    let mine: CardSet = d.hand.iter().map(|c| c.parse::<Card>().unwrap()).collect();
                    assert_eq!(
                        mine, t.hands[i][s as usize],
                        "dealt hand differs from the engine's"
                    );
                }
                if viewer.is_none()
                    && let Some(B::DealStarted(d)) = &e.body
                {
                    assert!(d.hand.is_empty());
                }
            }
            Seen::View(view) => {
                assert_eq!(view.viewer_seat, viewer);
                let Some(i) = at_or_before(view.seq) else {
                    assert!(view.hand.is_empty());
                    continue;
                };
                let hidden = t.hidden_after_event[i][v];
                for c in cards_in(view) {
                    assert!(
                        !hidden.contains(c),
                        "viewer {viewer:?} got hidden card {c} in view at seq {}: {view:?}",
                        view.seq
                    );
                }
                if let Some(s) = viewer {
                    let mine: CardSet = view
                        .hand
                        .iter()
                        .map(|c| c.parse::<Card>().unwrap())
                        .collect();
                    assert_eq!(
                        mine, t.hands[i][s as usize],
                        "view hand differs from the engine's at seq {}",
                        view.seq
                    );
                } else {
                    assert!(
                        view.hand.is_empty()
                            && view.legal_actions.is_empty()
                            && view.deadline.is_none()
                    );
                }
            }
        }
    }
}

fn verify(p: &Played) {
    // The record replays to the balances the stream announced.
    let game = replay_json(&p.record).unwrap();
    assert!(game.is_over());
    assert_eq!(game.balances(), &p.final_balances[..]);
    let t = truth(&p.record);
    // Align the spectator's complete event stream with the engine's events.
    let spec_events: Vec<&pb::Event> = p
        .spectator_msgs
        .iter()
        .filter_map(|m| {
            if let Seen::Event(e) = m {
                Some(e)
            } else {
                None
            }
        })
        .collect();
    let seqs: Vec<u64> = spec_events.iter().map(|e| e.seq).collect();
    for w in seqs.windows(2) {
        assert_eq!(w[1], w[0] + 1, "spectator stream has a gap or duplicate");
    }
    let game_seqs: Vec<u64> = spec_events
        .iter()
        .filter(|e| is_game_event(e))
        .map(|e| e.seq)
        .collect();
    assert_eq!(
        game_seqs.len(),
        t.events.len(),
        "server and engine disagree on the number of events"
    );
    let seq_to_event: BTreeMap<u64, usize> =
        game_seqs.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    // The spectator saw every deal revealed once settled.
    let reveals = spec_events
        .iter()
        .filter(|e| matches!(&e.body, Some(B::DealSettled(s)) if s.revealed.is_some()))
        .count();
    let settled = t
        .events
        .iter()
        .filter(|e| matches!(e.public, bete_rules::PublicEvent::DealSettled { .. }))
        .count();
    assert_eq!(reveals, settled);
    let seats = game.seats() as usize;
    check_no_leak(Some(p.seat), &p.seat_msgs, &t, &seq_to_event, seats);
    check_no_leak(None, &p.spectator_msgs, &t, &seq_to_event, seats);
    // After its first snapshot, the seat gets every event the spectator gets.
    let mine: HashMap<u64, &pb::Event> = p
        .seat_msgs
        .iter()
        .filter_map(|m| {
            if let Seen::Event(e) = m {
                Some((e.seq, e))
            } else {
                None
            }
        })
        .collect();
    let first_view = p
        .seat_msgs
        .iter()
        .find_map(|m| {
            if let Seen::View(v) = m {
                Some(v.seq)
            } else {
                None
            }
        })
        .unwrap();
    for s in game_seqs.iter().filter(|s| **s > first_view) {
        assert!(mine.contains_key(s), "seat missed event {s}");
    }
}

/// Loo's ten seats (LO1), more than any other ruleset: a whole match through the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loo_plays_ten_seats_to_the_end_without_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let p = play(pb::Ruleset::Loo, 10, &format!("{:064x}", 4242), &srv).await;
    verify(&p);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ruleset_plays_to_the_end_without_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    for (i, ruleset) in ALL_RULESETS.iter().enumerate() {
        for (k, seats) in [3, 4, 5].into_iter().enumerate() {
            let seed = format!("{:064x}", 1000 + i * 10 + k);
            let p = play(*ruleset, seats, &seed, &srv).await;
            verify(&p);
        }
    }
    srv.stop().await;
}
