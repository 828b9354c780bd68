//! Faults from outside, on real `bete-server` processes sharing one real PostgreSQL (issue 27,
//! "Bad input and faults"): a node whose wall clock jumps an hour forward and back mid-match,
//! and a node whose connection pool is held up by slow statements. Each is answered with
//! UNAVAILABLE and a reason where a call cannot be served, never loses or doubles an
//! acknowledged move (each looked up in the store by its request id afterwards), and recovers
//! by itself. The failover of PostgreSQL is tests/pg_failover.rs.
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh); without it every test here skips, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bete_api::pb;
use common::ledger::*;
use common::pg::*;
use common::*;
use sqlx::Connection;
use tokio_util::sync::CancellationToken;
use tonic::Code;

const SECRET: &str = "test-cluster-secret";

/// Three nodes; one's wall clock (libfaketime, read from a file the test rewrites) jumps an
/// hour forward, then two hours back, then to the true time, while bots play on every node.
/// Leases and fencing are the monotonic clock's and PostgreSQL's, so: no table changes owner
/// (same owner, same epoch: nobody claimed anything, the jumping node included), no loss is
/// counted, every acknowledged move is in the log once, no decision's deadline fires early
/// (no move taken by the server), every time stored in the log is true, and every deadline
/// the jumping node shows a bot is true by the test's own clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_whose_clock_jumps_keeps_its_tables_and_true_times() {
    bounded(300, clock_jumps()).await;
}

async fn clock_jumps() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let clock = dir.path().join("clock");
    std::fs::write(&clock, "+0s\n").unwrap();
    let flags = ["--cluster-secret", SECRET];
    let a = Node::start_with(&url, "a", "3", &dir, &flags);
    let b = Node::start_with(&url, "b", "3", &dir, &flags);
    let j = Node::start_with_clock_file(&url, "j", "3", &dir, &flags, &clock);
    let began_ms = bete_server::clock::system_ms();
    let nodes = [a.addr, b.addr, j.addr];
    let tables = tables_on(&nodes, 3).await;
    let ids: Vec<String> = tables.iter().map(|t| t.0.clone()).collect();
    let ledger = SharedLedger::default();
    let stop = CancellationToken::new();
    let mut players = Vec::new();
    // Each table played through a node other than its owner for a third of them (forwarded),
    // so the jumping node serves, forwards and owns.
    for (i, (id, token, owner)) in tables.iter().enumerate() {
        let via = nodes[(owner + i) % nodes.len()];
        players.push(tokio::spawn(player(
            via,
            token.clone(),
            id.clone(),
            ledger.clone(),
            stop.clone(),
        )));
    }
    wait_for_acks(&ledger, &ids, &HashMap::new(), 3, &url, secs(90)).await;
    let before = owner_of(&url, &ids).await;
    assert_eq!(before.len(), ids.len());

    let ch_j = connect(j.addr).await;
    let on_j: Vec<(String, String)> = tables
        .iter()
        .filter(|t| t.2 == 2)
        .map(|t| (t.0.clone(), t.1.clone()))
        .collect();
    // (file, the correction `j` settles on: PostgreSQL's clock minus its own)
    for (offset, correction) in [("+3600s", -3600.0), ("-3600s", 3600.0), ("+0s", 0.0)] {
        let since = ack_counts(&ledger);
        std::fs::write(&clock, format!("{offset}\n")).unwrap();
        // From the step until `j` has read PostgreSQL's clock again: the deadlines `j` shows
        // stay true meanwhile (it runs on from its last reading by the monotonic clock).
        let stepped = Instant::now();
        loop {
            for (id, token) in &on_j {
                let mut c = client_with(&ch_j, Some(token));
                let v = tokio::time::timeout(
                    CALL_BOUND,
                    c.get_seat_view(pb::GetSeatViewRequest {
                        table_id: id.clone(),
                    }),
                )
                .await
                .expect("j answers")
                .unwrap()
                .into_inner()
                .view
                .unwrap();
                if let Some(d) = &v.deadline {
                    let at = d.seconds * 1000 + i64::from(d.nanos) / 1_000_000;
                    let left = at - bete_server::clock::system_ms();
                    // 60 s decisions; a few seconds either way for a loaded machine.
                    assert!(
                        (-5_000..=65_000).contains(&left),
                        "j (clock {offset}) shows a deadline {left} ms away"
                    );
                }
            }
            let seen = clock_correction(j.metrics).await;
            if (seen - correction).abs() < 2.0 {
                break;
            }
            assert!(
                stepped.elapsed() < secs(60),
                "j's correction stayed at {seen} s after its clock went {offset}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // Play goes on everywhere at the new time.
        wait_for_acks(&ledger, &ids, &since, 2, &url, secs(90)).await;
    }
    stop.cancel();
    for p in players {
        p.await.unwrap();
    }

    // Nobody claimed anything: same owner, same epoch; and no loss counted anywhere.
    assert_eq!(owner_of(&url, &ids).await, before);
    for n in [&a, &b, &j] {
        assert_eq!(counter(n.metrics, "bete_tables_lost_total").await, 0);
    }
    // The players are done: the ledger is read without a lock held across the look-ups.
    let seen = std::mem::take(&mut *ledger.lock().unwrap());
    let checked = assert_each_ack_once(&url, &ids, &seen).await;
    assert!(checked >= 2 * ids.len(), "too little play: {checked}");
    // Every stored time is true (by the test's clock), and no deadline fired: every move was
    // a bot's or a house bot's, none taken by the server.
    let ended_ms = bete_server::clock::system_ms();
    let mut entries = 0;
    for (id, log) in log_entries(&url, &ids).await {
        for e in log {
            let body = &e;
            let t = body["time_ms"].as_i64().unwrap();
            assert!(
                (began_ms - 5_000..=ended_ms + 5_000).contains(&t),
                "{id}: an entry stored at {t}, the test ran {began_ms}..{ended_ms}: {e}"
            );
            assert_ne!(body["auto"], true, "{id}: a deadline fired: {e}");
            entries += 1;
        }
    }
    assert!(entries > checked);
    assert!(
        j.log_text()
            .contains("this node's clock differs from PostgreSQL's"),
        "j never noticed its clock: {}",
        j.log_text()
    );
    eprintln!("clock jumps: {checked} acknowledged moves and {entries} log entries checked");
}

async fn clock_correction(metrics: std::net::SocketAddr) -> f64 {
    let body = http_get(metrics, "/metrics").await;
    body.lines()
        .find_map(|l| l.strip_prefix("bete_clock_correction_seconds "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// How long the slow statements hold the tables: several leases (3 s) and more than the
/// longest wait for a connection (5 s), so both the pool's and the locks' bounds are passed.
const HELD: Duration = Duration::from_secs(12);

/// Two nodes; the test's own sessions hold locks on `tables` and `log` (an `ACCESS EXCLUSIVE`
/// lock taken by a slow statement: a migration, a `VACUUM FULL`, a runaway report) while bots
/// play and 64 callers at once read records through node `a`, so every connection of `a`'s
/// pool (16) waits on PostgreSQL and the callers beyond them wait for a connection. Every call
/// that needs the database is answered within its bounds with UNAVAILABLE /
/// STORE_UNAVAILABLE and RetryInfo (not RESOURCE_EXHAUSTED: nothing of the caller's is used
/// up, and the same call succeeds as soon as the database is itself again); the node keeps its
/// lease (renewed on a connection of its own) and its tables; once the locks go, play resumes
/// by itself, and every acknowledged move is in the log once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pool_held_by_slow_statements_answers_unavailable_and_recovers() {
    bounded(300, pool_held()).await;
}

async fn pool_held() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--cluster-secret", SECRET];
    let a = Node::start_with(&url, "a", "3", &dir, &flags);
    let b = Node::start_with(&url, "b", "3", &dir, &flags);
    let nodes = [a.addr, b.addr];
    let tables = tables_on(&nodes, 3).await;
    let ids: Vec<String> = tables.iter().map(|t| t.0.clone()).collect();
    let ledger = SharedLedger::default();
    let stop = CancellationToken::new();
    let mut players = Vec::new();
    for (id, token, owner) in &tables {
        players.push(tokio::spawn(player(
            nodes[*owner],
            token.clone(),
            id.clone(),
            ledger.clone(),
            stop.clone(),
        )));
    }
    wait_for_acks(&ledger, &ids, &HashMap::new(), 3, &url, secs(90)).await;
    let before = owner_of(&url, &ids).await;
    let (reader_token, some_table) = (tables[0].1.clone(), tables[0].0.clone());

    // The slow statements: a transaction of the test's own that locks both tables and holds
    // them (its session has none of the node's timeouts).
    let mut holder = db(&url).await;
    let mut tx = holder.begin().await.unwrap();
    sqlx::query("LOCK TABLE tables, log IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *tx)
        .await
        .unwrap();
    let held_at = Instant::now();

    // 64 readers through `a`, each reading the record of an unfinished table again and again
    // until the locks go: UNAVAILABLE while they are held; FAILED_PRECONDITION (the match is
    // not over: the database read it) after.
    let released = CancellationToken::new();
    let ch = connect(a.addr).await;
    let mut readers = Vec::new();
    for _ in 0..64 {
        let mut c = client_with(&ch, Some(&reader_token));
        let id = some_table.clone();
        let released = released.clone();
        readers.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            loop {
                let asked = Instant::now();
                let r = tokio::time::timeout(
                    CALL_BOUND,
                    c.get_game_record(pb::GetGameRecordRequest {
                        table_id: id.clone(),
                    }),
                )
                .await
                .expect("a call was not answered within its bound");
                let s = r.expect_err("an unfinished table has no record");
                let was_released = released.is_cancelled();
                answers.push((asked, was_released, s));
                if was_released {
                    return answers;
                }
            }
        }));
    }
    // The pool is exhausted: all 16 of `a`'s pool connections wait on the locks at once (its
    // sessions told from `b`'s by their client ports, the sockets of `a`'s process).
    let mut most = 0;
    while held_at.elapsed() < HELD {
        let ports = client_ports(a.child.id());
        most = most.max(waiting_on_locks(&url, &ports).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let still = counter(a.metrics, "bete_tables_lost_total").await;
    tx.rollback().await.unwrap();
    let released_at = Instant::now();
    released.cancel();
    assert_eq!(
        most, 16,
        "the most of a's sessions waiting on the locks at once (its pool holds 16)"
    );

    let mut during = 0;
    for r in readers {
        for (asked, after, s) in r.await.unwrap() {
            if asked < released_at && !after {
                assert_eq!(s.code(), Code::Unavailable, "{s:?}");
                assert_eq!(reason(&s), "STORE_UNAVAILABLE", "{s:?}");
                assert!(retry_info(&s), "no RetryInfo: {s:?}");
                during += 1;
            } else if asked > released_at + Duration::from_secs(1) {
                // Recovered: the database answers again (the match is not over).
                assert_eq!(reason(&s), "TABLE_NOT_FINISHED", "{s:?}");
            }
        }
    }
    assert!(during >= 64, "only {during} reads were refused");
    // The players' refusals while the locks were held: UNAVAILABLE with the store's reason
    // and RetryInfo; nothing hung.
    let refusals = ledger.lock().unwrap().refusals_since(held_at);
    let mut moves_refused = 0;
    for r in &refusals {
        assert_ne!(r.reason, GAVE_UP, "a call hung: {r:?}");
        assert_eq!(r.code, Code::Unavailable, "{r:?}");
        assert_eq!(r.reason, "STORE_UNAVAILABLE", "{r:?}");
        assert!(r.retry_info, "{r:?}");
        if r.call == "SubmitAction" {
            moves_refused += 1;
        }
    }
    assert!(
        moves_refused > 0,
        "no move was refused while the locks were held"
    );

    // Recovered by itself: every table plays on.
    let since = ack_counts(&ledger);
    wait_for_acks(&ledger, &ids, &since, 3, &url, secs(90)).await;
    stop.cancel();
    for p in players {
        p.await.unwrap();
    }
    // The nodes kept their leases and their tables: nobody claimed anything.
    assert_eq!(owner_of(&url, &ids).await, before);
    assert_eq!(still, 0);
    for n in [&a, &b] {
        assert_eq!(counter(n.metrics, "bete_tables_lost_total").await, 0);
    }
    // The players are done: the ledger is read without a lock held across the look-ups.
    let seen = std::mem::take(&mut *ledger.lock().unwrap());
    let checked = assert_each_ack_once(&url, &ids, &seen).await;
    eprintln!(
        "pool held {HELD:?}: {most} sessions waited at most; {during} reads and \
         {moves_refused} moves refused; {checked} acknowledged moves checked"
    );
}

/// Sessions of this database from the client ports `ports` waiting for a lock.
async fn waiting_on_locks(url: &str, ports: &[i32]) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
         AND datname = current_database() AND client_port = ANY($1)",
    )
    .bind(ports)
    .fetch_one(&mut db(url).await)
    .await
    .unwrap()
}

/// The local ports of the loopback TCP sockets process `pid` holds (Linux's /proc).
fn client_ports(pid: u32) -> Vec<i32> {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(|e| {
                let link = std::fs::read_link(e.ok()?.path()).ok()?;
                let link = link.to_str()?;
                Some(
                    link.strip_prefix("socket:[")?
                        .strip_suffix(']')?
                        .to_string(),
                )
            })
            .collect()
        })
        .unwrap_or_default();
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let port = f.get(1)?.rsplit_once(':')?.1;
            inodes
                .contains(*f.get(9)?)
                .then(|| i32::from_str_radix(port, 16).ok())?
        })
        .collect()
}

fn retry_info(s: &tonic::Status) -> bool {
    use tonic_types::StatusExt;
    s.get_error_details().retry_info().is_some()
}
