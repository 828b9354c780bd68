//! The real binary on PostgreSQL (`--database-url`): kill -9 and restart loses nothing; two
//! nodes share one database, and a paused owner loses its table to its peer and writes nothing
//! more; SIGTERM releases a node's tables to its peer at once.
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh; scripts/test.sh always sets it); each test
//! makes a database of its own there. Without it, every test here skips, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bete_api::pb;
use common::pg::*;
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_and_restart_on_postgres_loses_nothing() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut n = Node::start(&url, "solo", "2", &dir);
    let ch = connect(n.addr).await;
    let me = register(&ch, "pg-bot").await;
    let token = me.token.clone();
    let mut c = me.client;
    let id = new_table(&mut c).await;
    let mut acked = Vec::new();
    let last = play(&mut c, &id, 4, &mut acked).await.unwrap();
    n.kill_9();

    // The same node id again: it waits out its own former lease, then takes its tables back.
    let mut n = Node::start(&url, "solo", "2", &dir);
    let ch = connect(n.addr).await;
    let mut c = client_with(&ch, Some(&token));
    let again = c.submit_action(last).await.unwrap().into_inner();
    assert!(
        again.replayed,
        "the retried request is recognised, not applied twice"
    );
    play(&mut c, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut c, &id).await.match_over);
    assert_record(&mut c, &id, &acked).await;

    // After another kill -9 and restart, the finished table and its record are all there.
    n.kill_9();
    let mut n = Node::start(&url, "solo", "2", &dir);
    let ch = connect(n.addr).await;
    let mut c = client_with(&ch, Some(&token));
    assert_record(&mut c, &id, &acked).await;
    let t = c
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(t.state, pb::TableState::Finished as i32);

    // SIGTERM: drains, releases its tables and its lease, exits 0.
    n.signal("-TERM");
    n.exits_cleanly().await;
    assert!(n.log_text().contains("released this node's tables"));
}

/// Node `a` owns a table; SIGSTOP it past its lease: `b` claims the table. SIGCONT: `a` writes
/// nothing more, drops the table and sends callers to `b`, where play goes on with every
/// acknowledged move applied once. SIGTERM `b`: it releases the table and `a` takes it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owner_loses_its_table_and_writes_nothing_more() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = Node::start(&url, "a", "1.5", &dir);
    let ch_a = connect(a.addr).await;
    let mut b = Node::start(&url, "b", "1.5", &dir);
    let ch_b = connect(b.addr).await;
    let me = register(&ch_a, "roaming-bot").await;
    let token = me.token.clone();
    let mut on_a = me.client;
    let mut on_b = client_with(&ch_b, Some(&token));
    let id = new_table(&mut on_a).await;
    let mut acked = Vec::new();
    play(&mut on_a, &id, 3, &mut acked).await;
    assert_eq!(owner(&url, &id).await, (Some("a".into()), 1));
    // `b` does not take a live node's table.
    let s = on_b
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&s), "TABLE_ELSEWHERE");
    assert_eq!(s.code(), tonic::Code::Unavailable);

    // Our turn (house bots done), then `a` freezes past its lease.
    let before = my_turn(&mut on_a, &id).await;
    a.signal("-STOP");
    let mut claimed = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if owner(&url, &id).await.0.as_deref() == Some("b") {
            claimed = true;
            break;
        }
    }
    assert!(claimed, "b never claimed the table of the paused node");
    let entries = log_len(&url, &id).await;
    a.signal("-CONT");
    // `a` notices within a pass or two, drops the table and writes nothing.
    let mut dropped = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if a.log_text().contains("dropping it here") {
            dropped = true;
            break;
        }
    }
    assert!(dropped, "a did not drop the table: {}", a.log_text());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        log_len(&url, &id).await,
        entries,
        "a wrote after losing the table"
    );
    // A move sent to `a` is refused with where the table is now; nothing is applied there.
    let a_move = pb::SubmitActionRequest {
        table_id: id.clone(),
        action: Some(before.legal_actions[0].clone()),
        expected_seq: before.seq,
        request_id: "on-a".into(),
    };
    let s = on_a.submit_action(a_move).await.unwrap_err();
    assert_eq!(reason(&s), "TABLE_ELSEWHERE", "{s:?}");
    use tonic_types::StatusExt;
    let info = s.get_error_details().error_info().cloned().unwrap();
    assert_eq!(info.metadata["node"], "b");
    assert_eq!(info.metadata["node_addr"], b.addr.to_string());
    assert_eq!(log_len(&url, &id).await, entries);

    // Play goes on at `b`, from exactly where it was.
    let v = my_turn(&mut on_b, &id).await;
    assert_eq!(v.seq, before.seq);
    play(&mut on_b, &id, 3, &mut acked).await;

    // SIGTERM `b`: it releases the table; `a` takes it (at once, not after the lease).
    b.signal("-TERM");
    b.exits_cleanly().await;
    let after = owner(&url, &id).await.0;
    assert!(
        after.is_none() || after.as_deref() == Some("a"),
        "{after:?}"
    );
    play(&mut on_a, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut on_a, &id).await.match_over);
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("a"));
    assert_record(&mut on_a, &id, &acked).await;
}

/// A second node started with a live node's id is refused with a clear error and a non-zero
/// exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_node_with_the_same_id_is_refused() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let first = Node::start(&url, "twin", "3", &dir);
    // Serving (its listener is bound before it registers): a call that needs the store.
    register(&connect(first.addr).await, "first").await;
    let mut second = Node::start(&url, "twin", "3", &dir);
    let mut status = None;
    for _ in 0..200 {
        if let Some(s) = second.child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let Some(status) = status else {
        panic!("the second node kept running: {}", second.log_text());
    };
    assert!(!status.success());
    let log = second.log_text();
    assert!(
        log.contains("node id \"twin\" is in use by a live bete-server"),
        "{log}"
    );
}

/// Milliseconds until a decision's deadline, by the test's own (true) clock.
fn deadline_in_ms(v: &pb::SeatView) -> i64 {
    let d = v.deadline.as_ref().expect("a decision has a deadline");
    let at = d.seconds * 1000 + i64::from(d.nanos) / 1_000_000;
    at - bete_server::clock::system_ms()
}

/// A node whose clock is a minute fast (libfaketime, preloaded into the real binary) takes
/// PostgreSQL's clock for the cluster's: the deadline it shows a bot is true (10 s from now by
/// a true clock, not 70 s), it exports its correction, and a table it hands over on SIGTERM
/// keeps true deadlines on a node with a true clock. Without the correction the bot would be
/// told it had a minute more than it has, and the next node would take the fast node's stored
/// times for its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_clock_is_a_minute_fast_shows_true_deadlines() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut fast = Node::start_skewed(&url, "fast", "2", &dir, "+60s");
    let ch = connect(fast.addr).await;
    let me = register(&ch, "punctual").await;
    let mut c = me.client;
    let id = new_table_with_deadline(&mut c, 10_000).await;
    let v = my_turn(&mut c, &id).await;
    let left = deadline_in_ms(&v);
    assert!((8_000..=11_000).contains(&left), "deadline {left} ms away");
    let fast_by = correction(fast.metrics).await;
    assert!((-62.0..=-58.0).contains(&fast_by), "{fast_by}");
    let mut acked = Vec::new();
    play(&mut c, &id, 1, &mut acked).await.unwrap();

    // Handed over to a node with a true clock.
    let punctual = Node::start(&url, "true", "2", &dir);
    let ch2 = connect(punctual.addr).await;
    register(&ch2, "second").await;
    fast.signal("-TERM");
    fast.exits_cleanly().await;
    let mut c2 = client_with(&ch2, Some(&me.token));
    let v = my_turn(&mut c2, &id).await;
    let left = deadline_in_ms(&v);
    assert!(
        (8_000..=11_000).contains(&left),
        "deadline {left} ms away after the move"
    );
    assert_eq!(owner(&url, &id).await.0.as_deref(), Some("true"));
    assert_eq!(correction(punctual.metrics).await, 0.0);
}

async fn correction(metrics: std::net::SocketAddr) -> f64 {
    let body = http_get(metrics, "/metrics").await;
    body.lines()
        .find_map(|l| l.strip_prefix("bete_clock_correction_seconds "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
