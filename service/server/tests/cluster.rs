//! Any node serves any call: real `bete-server` processes on one PostgreSQL, with a cluster
//! secret. A call for a table a peer plays is forwarded to it (one hop, the mark trusted only
//! with the secret); an owner killed between calls loses its table to a peer and a retry with
//! the same request id lands there once.
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh); without it every test here skips, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bete_api::pb;
use common::pg::*;
use common::*;
use tonic_types::StatusExt;

const SECRET: &str = "test-cluster-secret";

fn node(url: &str, id: &str, dir: &tempfile::TempDir) -> Node {
    Node::start_with(url, id, "1.5", dir, &["--cluster-secret", SECRET])
}

/// A call to `b` for a table `a` plays is answered by `a`, through `b`: reads, joins, moves
/// (unary and on a SubmitActions stream), and the owner's refusals with their own reasons.
/// The forwarded mark counts only with the secret: a client that forges it is forwarded like
/// any other; with the secret the node does not forward again (one hop).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_forwards_calls_for_a_table_its_peer_plays() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, "a", &dir);
    let b = node(&url, "b", &dir);
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    let me = register(&ch_a, "forwarded-bot").await;
    let mut on_a = me.client;
    let mut on_b = client_with(&ch_b, Some(&me.token));
    // Created on `b`: owned by `b`, which seats us there; all our play goes through `a`.
    let id = new_table(&mut on_b).await;
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("b"));
    let t = on_a
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(t.table_id, id);
    let mut acked = Vec::new();
    play(&mut on_a, &id, 4, &mut acked).await.unwrap();
    assert_eq!(acked.len(), 4);
    assert_eq!(
        owner(&url, &id).await.0.as_deref(),
        Some("b"),
        "never moved"
    );

    // The owner's refusal comes back whole: its code, reason and metadata.
    let v = my_turn(&mut on_a, &id).await;
    let stale = on_a
        .submit_action(pb::SubmitActionRequest {
            table_id: id.clone(),
            action: Some(v.legal_actions[0].clone()),
            expected_seq: v.seq - 1,
            request_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(stale.code(), tonic::Code::Aborted);
    assert_eq!(reason(&stale), "STALE_SEQ");
    let info = stale.get_error_details().error_info().cloned().unwrap();
    assert_eq!(info.metadata["last_seq"], v.seq.to_string());

    // A move on a SubmitActions stream opened on `a`.
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let mut answers = on_a
        .submit_actions(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    tx.send(pb::SubmitActionsRequest {
        table_id: id.clone(),
        action: Some(v.legal_actions[0].clone()),
        expected_seq: v.seq,
        request_id: "on-the-stream".into(),
    })
    .await
    .unwrap();
    let answer = answers.message().await.unwrap().unwrap();
    match answer.result.unwrap() {
        pb::submit_actions_response::Result::Accepted(r) => assert!(r.seq > v.seq),
        other => panic!("{other:?}"),
    }
    acked.push(v.legal_actions[0].text.clone());
    drop(tx);

    // A forged mark (no secret, or a wrong one) is ignored: the call is forwarded as any other.
    for secret in [None, Some("guess")] {
        let req = from_peer(
            pb::GetSeatViewRequest {
                table_id: id.clone(),
            },
            "b",
            secret,
        );
        let view = on_a.get_seat_view(req).await.unwrap().into_inner();
        assert!(view.view.is_some());
    }
    // With the secret, the mark is a peer's: the node does not forward again.
    let req = from_peer(
        pb::GetSeatViewRequest {
            table_id: id.clone(),
        },
        "b",
        Some(SECRET),
    );
    let s = on_a.get_seat_view(req).await.unwrap_err();
    assert_eq!(reason(&s), "TABLE_ELSEWHERE", "{s:?}");

    play(&mut on_a, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut on_a, &id).await.match_over);
    assert_record(&mut on_a, &id, &acked).await;
}

/// The per-bot call rate is counted once, at the node the caller reached: a forwarded call
/// does not count again at the owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_call_is_counted_once() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let limit = ["--cluster-secret", SECRET, "--rate-calls-per-bot", "1/6"];
    let a = Node::start_with(&url, "a", "1.5", &dir, &limit);
    let b = Node::start_with(&url, "b", "1.5", &dir, &limit);
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    let me = register(&ch_b, "counted-bot").await;
    let mut on_a = client_with(&ch_a, Some(&me.token));
    let mut on_b = me.client;
    // Calls 1 and 2 of the burst of 6, on `b`.
    let id = new_table(&mut on_b).await;
    // Four more through `a`: counted at `a` only, so `b` still has four of its six.
    for _ in 0..4 {
        on_a.get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap();
    }
    // Then `b` still has about four of its six (plus what refilled meanwhile); had the
    // forwarded calls counted there too, it would have about none.
    let mut left = 0;
    loop {
        match on_b
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await
        {
            Ok(_) => left += 1,
            Err(s) => {
                assert_eq!(reason(&s), "RATE_LIMITED", "{s:?}");
                break;
            }
        }
        assert!(left < 20, "never limited");
    }
    assert!(
        left >= 3,
        "the forwarded calls were counted at the owner too: {left} left"
    );
}

/// The owner is killed between calls. A read through its peer waits for the table to move and
/// is answered there; a move acknowledged before the kill, sent again with its request id,
/// is recognised by the new owner (replayed, not applied twice); play goes on; every
/// acknowledged move is in the record once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_the_owner_died_lands_once_on_the_new_owner() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut a = node(&url, "a", &dir);
    let b = node(&url, "b", &dir);
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    let me = register(&ch_b, "survivor").await;
    let mut on_a = client_with(&ch_a, Some(&me.token));
    let mut on_b = me.client;
    let id = new_table(&mut on_a).await;
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("a"));
    let mut acked = Vec::new();
    let last = play(&mut on_b, &id, 3, &mut acked).await.unwrap();
    a.kill_9();

    let started = std::time::Instant::now();
    let again = on_b.submit_action(last).await.unwrap().into_inner();
    assert!(again.replayed, "applied twice");
    assert!(
        started.elapsed() < Duration::from_millis(1500 + 5000),
        "the table took {:?} to move",
        started.elapsed()
    );
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("b"));
    play(&mut on_b, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut on_b, &id).await.match_over);
    assert_record(&mut on_b, &id, &acked).await;
}

/// A move without a request id cannot be sent again safely: when its owner does not answer,
/// the caller gets UNAVAILABLE / OWNER_UNREACHABLE, naming the silent node, with retry advice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_owner_gives_owner_unreachable() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, "a", &dir);
    let b = node(&url, "b", &dir);
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    let me = register(&ch_b, "unsure").await;
    let mut on_a = client_with(&ch_a, Some(&me.token));
    let mut on_b = me.client;
    let id = new_table(&mut on_a).await;
    let v = my_turn(&mut on_b, &id).await;
    // Paused, not dead: its lease is live, so the table stays its own, and it does not answer.
    a.signal("-STOP");
    let s = on_b
        .submit_action(pb::SubmitActionRequest {
            table_id: id.clone(),
            action: Some(v.legal_actions[0].clone()),
            expected_seq: v.seq,
            request_id: String::new(),
        })
        .await;
    a.signal("-CONT");
    let s = s.unwrap_err();
    assert_eq!(s.code(), tonic::Code::Unavailable, "{s:?}");
    assert_eq!(reason(&s), "OWNER_UNREACHABLE", "{s:?}");
    let d = s.get_error_details();
    let info = d.error_info().unwrap();
    assert_eq!(info.metadata["node"], "a");
    assert_eq!(info.metadata["table_id"], id);
    assert!(d.retry_info().and_then(|r| r.retry_delay).is_some());
}

/// What the bots of the three-node scenario saw.
#[derive(Default)]
struct Seen {
    /// (table, seat's bot) -> the actions acknowledged to it, in order.
    acked: std::collections::HashMap<(String, String), Vec<String>>,
    /// Errors seen by bots on nodes that stayed up.
    errors: Vec<String>,
}

type Shared = std::sync::Arc<std::sync::Mutex<Seen>>;

/// A bot that plays every decision its WatchBot stream brings, submitting through the node it
/// is connected to. `nodes[0]` is its node; when that one dies (`on_killed`), it goes on at
/// the next, as a client of the cluster's one address would.
async fn bot_loop(
    name: String,
    token: String,
    nodes: Vec<std::net::SocketAddr>,
    on_killed: bool,
    seen: Shared,
) {
    let mut at = 0;
    loop {
        let ch = connect(nodes[at]).await;
        let mut c = client_with(&ch, Some(&token));
        let opened = c.watch_bot(pb::WatchBotRequest::default()).await;
        let mut stream = match opened {
            Ok(s) => s.into_inner(),
            Err(s) => {
                if !on_killed {
                    seen.lock()
                        .unwrap()
                        .errors
                        .push(format!("{name} open: {s:?}"));
                }
                at = (at + 1) % nodes.len();
                continue;
            }
        };
        loop {
            let msg = match stream.message().await {
                Ok(Some(m)) => m,
                Ok(None) | Err(_) if on_killed => break,
                other => {
                    seen.lock()
                        .unwrap()
                        .errors
                        .push(format!("{name} stream: {other:?}"));
                    return;
                }
            };
            let Some(pb::watch_bot_response::Kind::Decision(d)) = msg.kind else {
                continue;
            };
            let view = d.view.unwrap();
            let action = view.legal_actions[d.seq as usize % view.legal_actions.len()].clone();
            let req = pb::SubmitActionRequest {
                table_id: d.table_id.clone(),
                action: Some(action.clone()),
                expected_seq: d.seq,
                request_id: format!("{name}-{}-{}", d.table_id, d.seq),
            };
            match c.submit_action(req).await {
                Ok(_) => seen
                    .lock()
                    .unwrap()
                    .acked
                    .entry((d.table_id.clone(), name.clone()))
                    .or_default()
                    .push(action.text),
                Err(_) if on_killed => {}
                Err(s) => seen
                    .lock()
                    .unwrap()
                    .errors
                    .push(format!("{name} submit {}@{}: {s:?}", d.table_id, d.seq)),
            }
        }
        at = (at + 1) % nodes.len();
    }
}

async fn state(url: &str, id: &str) -> String {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query_scalar("SELECT state FROM tables WHERE id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap()
}

/// Three nodes, a bot on each, three tables (one created on each node) where every bot holds a
/// seat: each bot's moves at tables other nodes play are forwarded, and its WatchBot stream
/// carries decisions from all three nodes. kill -9 one node mid-match: every table moves on
/// within the lease + 5 s, every match ends, each seat's record is exactly what its bot was
/// acknowledged (nothing lost, nothing twice; the killed node's bot may have had one move
/// committed unacknowledged), and the bots on the surviving nodes saw no error.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_nodes_lose_one_mid_match_and_every_table_plays_on() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, "a", &dir);
    let b = node(&url, "b", &dir);
    let mut c = node(&url, "c", &dir);
    let addrs = [a.addr, b.addr, c.addr];
    let mut bots = Vec::new();
    for (i, addr) in addrs.iter().enumerate() {
        let ch = connect(*addr).await;
        bots.push(register(&ch, &format!("bot{i}")).await);
    }
    // One table created on each node; bot i sits at seat i, joining through its own node.
    let mut tables = Vec::new();
    for (n, addr) in addrs.iter().enumerate() {
        let ch = connect(*addr).await;
        let mut creator = client_with(&ch, Some(&bots[n].token));
        let id = creator
            .create_table(pb::CreateTableRequest {
                ruleset: pb::Ruleset::Bete.into(),
                seats: 3,
                decision_deadline_ms: 60_000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap()
            .table_id;
        tables.push(id);
    }
    let seen = Shared::default();
    let mut tasks = Vec::new();
    for (i, bot) in bots.iter().enumerate() {
        // Bot i's nodes: its own first, then the others.
        let nodes: Vec<_> = (0..3).map(|k| addrs[(i + k) % 3]).collect();
        tasks.push(tokio::spawn(bot_loop(
            format!("bot{i}"),
            bot.token.clone(),
            nodes,
            i == 2,
            seen.clone(),
        )));
    }
    for (i, bot) in bots.iter().enumerate() {
        let ch = connect(addrs[i]).await;
        let mut cl = client_with(&ch, Some(&bot.token));
        for id in &tables {
            cl.join_table(pb::JoinTableRequest {
                invitation_code: String::new(),
                table_id: id.clone(),
                seat: Some(i as u32),
            })
            .await
            .unwrap();
        }
    }
    // Mid-match: every table has moves.
    for id in &tables {
        let mut moved = false;
        for _ in 0..300 {
            if log_len(&url, id).await >= 12 {
                moved = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(moved, "table {id} is not moving");
    }
    let at_kill: Vec<i64> = futures_join(&url, &tables).await;
    for id in &tables {
        assert_ne!(state(&url, id).await, "finished", "killed too late");
    }
    assert_eq!(owner(&url, &tables[2]).await.0.as_deref(), Some("c"));
    c.kill_9();
    let killed = std::time::Instant::now();
    // Every unfinished table moves on within the lease (1.5 s) + 5 s.
    for (id, before) in tables.iter().zip(at_kill) {
        if state(&url, id).await == "finished" {
            continue;
        }
        loop {
            if log_len(&url, id).await > before || state(&url, id).await == "finished" {
                break;
            }
            assert!(
                killed.elapsed() < Duration::from_millis(6500),
                "table {id} stood still after the kill"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    for id in &tables {
        let mut done = false;
        for _ in 0..1800 {
            if state(&url, id).await == "finished" {
                done = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let errors = seen.lock().unwrap().errors.clone();
        assert!(done, "table {id} did not finish: {errors:?}");
    }
    for t in tasks {
        t.abort();
    }
    let moved = owner(&url, &tables[2]).await;
    assert!(moved.1 > 1, "c's table was never claimed: {moved:?}");
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
    let ch = connect(a.addr).await;
    let mut reader = client_with(&ch, Some(&bots[0].token));
    for id in &tables {
        let record = reader
            .get_game_record(pb::GetGameRecordRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .record_json;
        let json: serde_json::Value = serde_json::from_str(&record).unwrap();
        for seat in 0..3u32 {
            let played: Vec<String> = json["deals"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|d| d["actions"].as_array().unwrap().clone())
                .filter(|a| a["seat"] == seat)
                .map(|a| a["action"].as_str().unwrap().to_string())
                .collect();
            let acked = seen
                .acked
                .get(&(id.clone(), format!("bot{seat}")))
                .cloned()
                .unwrap_or_default();
            if seat == 2 {
                // Acknowledged moves all there, in order, with at most one move committed
                // but unacknowledged when its node died.
                let mut rest = played.iter();
                for m in &acked {
                    assert!(rest.any(|p| p == m), "{id} seat 2 lost {m}");
                }
                assert!(
                    played.len() <= acked.len() + 1,
                    "{id}: {played:?} vs {acked:?}"
                );
            } else {
                assert_eq!(played, acked, "{id} seat {seat}");
            }
        }
        bete_rules::record::replay_json(&record).unwrap();
    }
}

async fn futures_join(url: &str, tables: &[String]) -> Vec<i64> {
    let mut v = Vec::new();
    for id in tables {
        v.push(log_len(url, id).await);
    }
    v
}

/// WatchTable through a node that does not play the table: the owner's stream, built for the
/// caller (a seat sees its own hand; a spectator no hand), piped through. kill -9 the owner:
/// the stream does not break; it resumes where the table went, every event once, no gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_table_through_a_peer_survives_the_owner_dying() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut a = node(&url, "a", &dir);
    let b = node(&url, "b", &dir);
    let c = node(&url, "c", &dir);
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    let _ch_c = connect(c.addr).await;
    let me = register(&ch_b, "watcher").await;
    let mut on_a = client_with(&ch_a, Some(&me.token));
    let mut on_b = me.client;
    let id = new_table(&mut on_a).await;
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("a"));

    let mut seat_stream = on_b
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let mut anonymous = client_with(&ch_b, None);
    let mut spectator = anonymous
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let first = seat_stream.message().await.unwrap().unwrap();
    let Some(pb::watch_table_response::Kind::Snapshot(view)) = first.kind else {
        panic!("{first:?}");
    };
    assert_eq!(view.viewer_seat, Some(0));
    let mut seq = view.seq;
    let first = spectator.message().await.unwrap().unwrap();
    let Some(pb::watch_table_response::Kind::Snapshot(public)) = first.kind else {
        panic!("{first:?}");
    };
    assert_eq!(public.viewer_seat, None);
    assert!(public.hand.is_empty(), "a spectator saw a hand");

    // Events follow one by one, across the owner's death.
    let events = tokio::spawn(async move {
        let mut seqs = Vec::new();
        loop {
            match seat_stream.message().await {
                Ok(Some(m)) => {
                    if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind {
                        seqs.push(e.seq);
                        if matches!(e.body, Some(pb::event::Body::MatchEnded(_))) {
                            return Ok(seqs);
                        }
                    }
                }
                other => return Err(format!("{other:?} after {seqs:?}")),
            }
        }
    });
    let mut acked = Vec::new();
    play(&mut on_b, &id, 4, &mut acked).await.unwrap();
    a.kill_9();
    play(&mut on_b, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut on_b, &id).await.match_over);
    assert_ne!(owner(&url, &id).await.0.as_deref(), Some("a"));
    let seqs = timeout(30, events).await.unwrap().unwrap().unwrap();
    for s in seqs {
        assert_eq!(s, seq + 1, "a gap or a duplicate");
        seq = s;
    }
    let t = on_b
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(seq, t.last_seq, "the stream stopped short");
    assert_record(&mut on_b, &id, &acked).await;
}

/// The owner dies while a forwarded move is in flight (it was frozen with the move in hand,
/// then killed): the node the bot reached waits for the table to move and sends the move again
/// with its request id; the new owner applies it once, and a retry by the bot is a replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_killed_mid_call_and_the_move_lands_once() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut a = node(&url, "a", &dir);
    let b = node(&url, "b", &dir);
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    let me = register(&ch_b, "in-flight").await;
    let mut on_a = client_with(&ch_a, Some(&me.token));
    let mut on_b = me.client;
    let id = new_table(&mut on_a).await;
    let mut acked = Vec::new();
    play(&mut on_b, &id, 2, &mut acked).await.unwrap();
    let v = my_turn(&mut on_b, &id).await;
    let req = pb::SubmitActionRequest {
        table_id: id.clone(),
        action: Some(v.legal_actions[0].clone()),
        expected_seq: v.seq,
        request_id: "in-flight".into(),
    };
    a.signal("-STOP");
    let mut c = on_b.clone();
    let r = req.clone();
    let in_flight = tokio::spawn(async move { c.submit_action(r).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!in_flight.is_finished(), "answered by a frozen owner");
    a.kill_9();
    let done = timeout(15, in_flight)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .into_inner();
    assert!(!done.replayed);
    assert!(done.seq > v.seq);
    acked.push(v.legal_actions[0].text.clone());
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("b"));
    let again = on_b.submit_action(req).await.unwrap().into_inner();
    assert!(again.replayed, "applied twice");
    assert_eq!(again.seq, done.seq);
    play(&mut on_b, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut on_b, &id).await.match_over);
    assert_record(&mut on_b, &id, &acked).await;
}

/// What a WatchBot stream brought for one table, in order: `Ok((kind, seq))` per message
/// with a seq ("snapshot", "event", "decision"), `Err` for the stream's error.
type Brought = std::sync::Arc<std::sync::Mutex<Vec<Result<(&'static str, u64, Vec<u8>), String>>>>;

async fn seen_up_to(brought: &Brought, seq: u64) {
    for _ in 0..400 {
        let done = brought
            .lock()
            .unwrap()
            .iter()
            .any(|m| matches!(m, Ok((k, s, _)) if *k != "decision" && *s >= seq));
        if done {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the stream never reached seq {seq}: {:?}",
        brought.lock().unwrap()
    );
}

/// A bot's WatchBot stream on one node, its table played by another, resumes without a gap
/// or a duplicate when the table moves, even when moves the old owner committed never reached
/// the bot's node. The peers reach the owner through a proxy it advertises; the proxy is cut,
/// the owner goes on playing (the bot moves there directly), then it is killed. The node that
/// takes the table over attaches the bot's stream afresh, with a snapshot past what the bot
/// had; the bot's node fetches the missed events in its place. Every event reaches the bot
/// once, in order, exactly as the seat's WatchTable shows them, and one snapshot in all.
///
/// With three nodes the table goes to the bot's node or the third, whichever claims it first
/// (the events come from a peer, or from the node itself); with two it goes to the bot's node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_resumes_exactly_when_a_cut_off_owner_dies() {
    watch_bot_across_a_cut_off_owner(true).await;
}

/// [`watch_bot_resumes_exactly_when_a_cut_off_owner_dies`] with two nodes: the bot's own node
/// takes the table over, and its own stream brings the snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_resumes_exactly_when_its_own_node_takes_the_table() {
    watch_bot_across_a_cut_off_owner(false).await;
}

async fn watch_bot_across_a_cut_off_owner(third: bool) {
    use pb::watch_bot_response::Kind;
    use prost::Message;
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, "a", &dir);
    let b_addr = free_addr();
    let proxy = Proxy::start(b_addr).await;
    let extra = ["--cluster-secret", SECRET];
    let mut b = Node::start_advertising(&url, "b", "1.5", &dir, &extra, b_addr, proxy.addr);
    let c = third.then(|| node(&url, "c", &dir));
    let ch_a = connect(a.addr).await;
    let ch_b = connect(b.addr).await;
    if let Some(c) = &c {
        connect(c.addr).await;
    }
    let me = register(&ch_b, "cut-off").await;
    let mut on_a = client_with(&ch_a, Some(&me.token));
    let mut on_b = me.client;
    // The premise is a table owned by `b`: on a loaded machine `b`'s short lease may lapse
    // right after a creation and another node claim the table, so create until `b` holds one.
    let mut id = new_table(&mut on_b).await;
    for _ in 0..5 {
        if owner(&url, &id).await.0.as_deref() == Some("b") {
            break;
        }
        id = new_table(&mut on_b).await;
    }
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("b"));

    let mut stream = on_a
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let brought: Brought = Default::default();
    let into = brought.clone();
    let table = id.clone();
    let reader = tokio::spawn(async move {
        loop {
            let m = match stream.message().await {
                Ok(Some(m)) => m,
                other => {
                    into.lock().unwrap().push(Err(format!("{other:?}")));
                    return;
                }
            };
            if m.table_id != table {
                continue;
            }
            let item = match m.kind {
                Some(Kind::Snapshot(v)) => ("snapshot", v.seq, Vec::new()),
                Some(Kind::Decision(d)) => ("decision", d.seq, Vec::new()),
                Some(Kind::Event(e)) => {
                    let end = matches!(e.body, Some(pb::event::Body::MatchEnded(_)));
                    into.lock()
                        .unwrap()
                        .push(Ok(("event", e.seq, e.encode_to_vec())));
                    if end {
                        return;
                    }
                    continue;
                }
                _ => continue,
            };
            into.lock().unwrap().push(Ok(item));
        }
    });

    let mut acked = Vec::new();
    seen_up_to(&brought, my_turn(&mut on_b, &id).await.seq).await;
    play(&mut on_b, &id, 2, &mut acked).await.unwrap();
    seen_up_to(&brought, my_turn(&mut on_b, &id).await.seq).await;

    // The bot's node loses the owner; the owner plays on, then dies.
    proxy.cut();
    tokio::time::sleep(Duration::from_millis(300)).await;
    play(&mut on_b, &id, 3, &mut acked).await.unwrap();
    let committed = my_turn(&mut on_b, &id).await.seq;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let had = brought
        .lock()
        .unwrap()
        .iter()
        .filter_map(|m| m.as_ref().ok().map(|(_, s, _)| *s))
        .max()
        .unwrap();
    assert!(
        had < committed,
        "the cut did not hide the owner's moves from the bot's node"
    );
    b.kill_9();
    play(&mut on_a, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut on_a, &id).await.match_over);
    let now = owner(&url, &id).await.0;
    if third {
        assert!(matches!(now.as_deref(), Some("a" | "c")), "{now:?}");
    } else {
        assert_eq!(now.as_deref(), Some("a"));
    }
    timeout(30, reader).await.unwrap().unwrap();
    if !third {
        // `a` caught the bot's stream up from its own actor: it served no WatchTable call
        // (a catch-up used to call its own node over gRPC for the events).
        let body = http_get(a.metrics, "/metrics").await;
        let served: Vec<&str> = body
            .lines()
            .filter(|l| l.starts_with("bete_rpc_requests_total{method=\"WatchTable\""))
            .collect();
        assert!(served.is_empty(), "a called itself: {served:?}");
    }

    let brought = brought.lock().unwrap().clone();
    let items: Vec<_> = brought.iter().map(|m| m.clone().unwrap()).collect();
    let snapshots: Vec<u64> = items
        .iter()
        .filter(|(k, _, _)| *k == "snapshot")
        .map(|(_, s, _)| *s)
        .collect();
    assert_eq!(
        snapshots.len(),
        1,
        "a snapshot in place of events: {snapshots:?}"
    );
    assert_eq!(items[0].0, "snapshot");
    let events: Vec<_> = items.iter().filter(|(k, _, _)| *k == "event").collect();
    let mut seq = snapshots[0];
    for (_, s, _) in &events {
        assert_eq!(*s, seq + 1, "a gap or a duplicate");
        seq = *s;
    }
    // The same bytes as the seat's own WatchTable from that seq.
    let mut whole = on_a
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(snapshots[0]),
        })
        .await
        .unwrap()
        .into_inner();
    let mut expected = Vec::new();
    while let Some(m) = whole.message().await.unwrap() {
        if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind {
            expected.push(e.encode_to_vec());
        }
    }
    let got: Vec<Vec<u8>> = events.iter().map(|(_, _, b)| b.clone()).collect();
    assert_eq!(got.len(), expected.len());
    assert!(
        got == expected,
        "the stream's events differ from the seat's WatchTable"
    );
    assert_record(&mut on_a, &id, &acked).await;
}

/// A peer's internal WatchBot stream (the mark and the secret) carries no heartbeats: the
/// bot's own node sends them on the merged stream, so a cluster of many bots and nodes does
/// not spend messages on idle internal streams. A bot's own stream on the same node does get
/// them (the control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peers_internal_watch_bot_stream_sends_no_heartbeats() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--cluster-secret", SECRET, "--heartbeat-secs", "1"];
    let a = Node::start_with(&url, "a", "1.5", &dir, &extra);
    let ch = connect(a.addr).await;
    let me = register(&ch, "quiet").await;
    let mut c = me.client;
    let mut own = c
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let m = timeout(10, own.message()).await.unwrap().unwrap().unwrap();
    assert!(
        matches!(m.kind, Some(pb::watch_bot_response::Kind::Heartbeat(_))),
        "{m:?}"
    );
    let req = from_peer(pb::WatchBotRequest::default(), "b", Some(SECRET));
    let mut internal = c.watch_bot(req).await.unwrap().into_inner();
    let quiet = tokio::time::timeout(Duration::from_millis(3_500), internal.message()).await;
    assert!(quiet.is_err(), "the internal stream sent {quiet:?}");
}
