//! The real binary on PostgreSQL (`--database-url`): kill -9 and restart loses nothing; two
//! nodes share one database, and a paused owner loses its table to its peer and writes nothing
//! more; SIGTERM releases a node's tables to its peer at once.
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh; scripts/test.sh always sets it); each test
//! makes a database of its own there. Without it, every test here skips, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bete_api::pb;
use common::*;
use sqlx::Connection;
use tonic::transport::Channel;

/// A database of its own on the test server.
async fn fresh_database() -> Option<String> {
    let Ok(base) = std::env::var("BETE_TEST_DATABASE_URL") else {
        eprintln!(
            "SKIPPED (PostgreSQL): BETE_TEST_DATABASE_URL is not set; \
             run through `bash scripts/pg.sh cargo test ...` (scripts/test.sh does)"
        );
        return None;
    };
    let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    let name = format!("bete_srv_{}", u64::from_le_bytes(b));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let (head, _) = base.rsplit_once('/').unwrap();
    Some(format!("{head}/{name}"))
}

struct Node {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Node {
    fn start(url: &str, id: &str, lease_secs: &str, dir: &tempfile::TempDir) -> Node {
        let addr = free_addr();
        let log = dir.path().join(format!("{id}-{}.log", addr.port()));
        let child = Command::new(env!("CARGO_BIN_EXE_bete-server"))
            .args(["--listen", &addr.to_string()])
            .args(["--metrics-listen", &free_addr().to_string()])
            .args(["--no-web", "--house-tables", "0"])
            .args(["--database-url", url, "--node-id", id])
            .args(["--advertise-addr", &addr.to_string()])
            .args(["--lease-ttl-secs", lease_secs])
            .args(["--drain-timeout-secs", "2"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Node { child, addr, log }
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([sig, &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    async fn exits_cleanly(&mut self) {
        for _ in 0..400 {
            if let Some(s) = self.child.try_wait().unwrap() {
                assert!(s.success(), "{s:?}");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the node did not exit");
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn connect(addr: SocketAddr) -> Channel {
    for _ in 0..400 {
        if let Ok(ch) = Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
        {
            return ch;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server at {addr} did not come up");
}

async fn my_turn(c: &mut Client, id: &str) -> pb::SeatView {
    view_when(c, id, "never my turn", |v| {
        v.to_act == Some(0) || v.match_over
    })
    .await
}

/// A table of ours at seat 0 with two house bots; long deadlines so only we move it on.
async fn new_table(c: &mut Client) -> String {
    let id = c
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Heuristic),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    c.join_table(pb::JoinTableRequest {
        table_id: id.clone(),
        seat: Some(0),
    })
    .await
    .unwrap();
    id
}

/// Plays `n` of our turns (or to the end); pushes each acknowledged action. Returns the last
/// request sent.
async fn play(
    c: &mut Client,
    id: &str,
    n: usize,
    acked: &mut Vec<String>,
) -> Option<pb::SubmitActionRequest> {
    let mut last = None;
    for _ in 0..n {
        let v = my_turn(c, id).await;
        if v.match_over {
            break;
        }
        let i = acked.len();
        let a = v.legal_actions[i % v.legal_actions.len()].clone();
        let req = pb::SubmitActionRequest {
            table_id: id.into(),
            action: Some(a.clone()),
            expected_seq: v.seq,
            request_id: format!("r{i}"),
        };
        match c.submit_action(req.clone()).await {
            Ok(_) => acked.push(a.text),
            Err(s) if reason(&s) == "STALE_SEQ" => continue,
            Err(s) => panic!("{s:?}"),
        }
        last = Some(req);
    }
    last
}

/// Every acknowledged action of seat 0 is in the record once, in order, and the record replays.
async fn assert_record(c: &mut Client, id: &str, acked: &[String]) {
    let record = c
        .get_game_record(pb::GetGameRecordRequest {
            table_id: id.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .record_json;
    let json: serde_json::Value = serde_json::from_str(&record).unwrap();
    let mine: Vec<String> = json["deals"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["actions"].as_array().unwrap().clone())
        .filter(|a| a["seat"] == 0)
        .map(|a| a["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(mine, acked);
    bete_rules::record::replay_json(&record).unwrap();
}

async fn log_len(url: &str, id: &str) -> i64 {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query_scalar("SELECT count(*) FROM log WHERE table_id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap()
}

async fn owner(url: &str, id: &str) -> (Option<String>, i64) {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let row: (Option<String>, i64) =
        sqlx::query_as("SELECT owner, epoch FROM tables WHERE id = $1")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .unwrap();
    row
}

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
    connect(first.addr).await;
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
