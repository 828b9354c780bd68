//! A PostgreSQL failover under real `bete-server` nodes (issue 27, "Bad input and faults"):
//! two nodes play on a primary with a synchronous streaming standby; the primary dies (an
//! immediate stop, as in a crash) and, a few seconds later, the standby is promoted and takes
//! the primary's address. Moves sent meanwhile are answered UNAVAILABLE with the store's reason
//! and RetryInfo (never a hang), the nodes reconnect by themselves, no table changes hands
//! (every lease lapsed in the gap), and every acknowledged move is in the new primary's log
//! exactly once: none lost (the standby had every commit the primary acknowledged) and none
//! applied twice (a move whose commit reached the standby but whose answer was cut off is
//! recognised when retried).
//!
//! Needs `BETE_TEST_PG_FAILOVER` (scripts/pg.sh, which drives scripts/pg-failover.sh): the
//! pair is a PostgreSQL cluster of its own, so the shared test server is not disturbed.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use common::ledger::*;
use common::pg::*;
use tokio_util::sync::CancellationToken;
use tonic::Code;

/// The nodes' lease: the database is away for longer than one.
const LEASE: &str = "3";
/// Seconds between the primary's death and the standby's promotion.
const GAP_SECS: u64 = 4;

/// A primary and its standby (scripts/pg-failover.sh), stopped and removed when dropped.
struct Pair {
    hook: String,
    dir: String,
    url: String,
}

impl Pair {
    fn up(hook: &str) -> Pair {
        let out = Command::new(hook).arg("up").output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut words = text.split_whitespace();
        let dir = words.next().unwrap().to_string();
        let port = words.next().unwrap();
        Pair {
            hook: hook.into(),
            dir,
            url: format!("postgres://bete@127.0.0.1:{port}/bete_test"),
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = Command::new(&self.hook).args(["down", &self.dir]).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_postgres_failover_loses_no_move_and_the_nodes_reconnect_by_themselves() {
    let Ok(hook) = std::env::var("BETE_TEST_PG_FAILOVER") else {
        eprintln!(
            "SKIPPED (PostgreSQL failover): BETE_TEST_PG_FAILOVER is not set (scripts/pg.sh)"
        );
        return;
    };
    // Dropped last: the nodes go first.
    let pair = Pair::up(&hook);
    bounded(300, failover(&pair)).await;
}

async fn failover(pair: &Pair) {
    let url = &pair.url;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--cluster-secret", "test-cluster-secret"];
    let a = Node::start_with(url, "a", LEASE, &dir, &flags);
    let b = Node::start_with(url, "b", LEASE, &dir, &flags);
    let nodes = [a.addr, b.addr];
    let tables = tables_on(&nodes, 4).await;
    let ids: Vec<String> = tables.iter().map(|t| t.0.clone()).collect();
    let ledger = SharedLedger::default();
    let stop = CancellationToken::new();
    let mut players = Vec::new();
    for (i, (id, token, _)) in tables.iter().enumerate() {
        players.push(tokio::spawn(player(
            nodes[i % nodes.len()],
            token.clone(),
            id.clone(),
            ledger.clone(),
            stop.clone(),
        )));
    }
    wait_for_acks(
        &ledger,
        &ids,
        &HashMap::new(),
        3,
        url,
        Duration::from_secs(90),
    )
    .await;
    let timeline_before = timeline(url).await;
    let owners_before = owner_of(url, &ids).await;

    // The failover, while the bots play.
    let failing_at = Instant::now();
    let (hook, pair_dir) = (pair.hook.clone(), pair.dir.clone());
    let failing = tokio::task::spawn_blocking(move || {
        Command::new(&hook)
            .args(["fail", &pair_dir, &GAP_SECS.to_string()])
            .status()
            .unwrap()
    });
    assert!(failing.await.unwrap().success(), "the failover failed");
    let promoted_at = Instant::now();
    assert!(
        timeline(url).await > timeline_before,
        "the server on the primary's address is not the promoted standby"
    );

    // The nodes come back by themselves: every table plays on.
    let since = ack_counts(&ledger);
    wait_for_acks(&ledger, &ids, &since, 3, url, Duration::from_secs(120)).await;
    let recovered_after = promoted_at.elapsed();
    stop.cancel();
    for p in players {
        p.await.unwrap();
    }
    for n in [&a, &b] {
        assert!(
            n.child.id() > 0 && std::fs::metadata(format!("/proc/{}", n.child.id())).is_ok(),
            "a node exited: {}",
            n.log_text()
        );
    }

    // The gap was seen, and every refusal in it was UNAVAILABLE with a reason; the store's
    // carries RetryInfo. Nothing hung.
    // The players are done: the ledger is read without a lock held across the look-ups.
    let l = std::mem::take(&mut *ledger.lock().unwrap());
    let refusals = l.refusals_since(failing_at);
    let mut store_refusals = 0;
    let mut moves_refused = 0;
    for r in &refusals {
        assert_ne!(r.reason, GAVE_UP, "a call hung: {r:?}");
        assert_eq!(r.code, Code::Unavailable, "{r:?}");
        assert!(
            ["STORE_UNAVAILABLE", "TABLE_ELSEWHERE", "OWNER_UNREACHABLE"]
                .contains(&r.reason.as_str()),
            "{r:?}"
        );
        assert!(
            r.retry_info || r.reason == "TABLE_ELSEWHERE",
            "no RetryInfo: {r:?}"
        );
        if r.reason == "STORE_UNAVAILABLE" {
            store_refusals += 1;
        }
        if r.call == "SubmitAction" {
            moves_refused += 1;
        }
    }
    assert!(
        store_refusals > 0 && moves_refused > 0,
        "no move was refused while PostgreSQL was away: {refusals:?}"
    );
    // None lost, none twice: looked up in the promoted standby.
    let checked = assert_each_ack_once(url, &ids, &l).await;
    assert!(checked >= 6 * ids.len(), "too little play: {checked}");
    // Every node's lease lapsed in the gap (longer than a lease), yet no table changed hands:
    // a node back from a lapse of its own gives its peers a lease to renew before it takes
    // their tables (without that, the first node to renew took the others' tables), and no
    // loss is counted.
    let owners_after = owner_of(url, &ids).await;
    let moved: Vec<&String> = ids
        .iter()
        .filter(|id| owners_after[*id].0 != owners_before[*id].0)
        .collect();
    assert!(moved.is_empty(), "tables that changed hands: {moved:?}");
    for n in [&a, &b] {
        assert_eq!(counter(n.metrics, "bete_tables_lost_total").await, 0);
    }
    eprintln!(
        "failover: {} refusals ({moves_refused} of moves), play resumed {recovered_after:?} \
         after the promotion; {checked} acknowledged moves checked",
        refusals.len()
    );
}

/// The server's timeline: a promoted standby is on a later one than the primary it replaced.
async fn timeline(url: &str) -> i64 {
    // Polled: the first connections after a restart may still be refused.
    for _ in 0..100 {
        if let Ok(mut conn) = sqlx::Connection::connect(url).await {
            let conn: &mut sqlx::PgConnection = &mut conn;
            return sqlx::query_scalar::<_, i32>("SELECT timeline_id FROM pg_control_checkpoint()")
                .fetch_one(conn)
                .await
                .map(i64::from)
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("PostgreSQL did not come back at {url}");
}
