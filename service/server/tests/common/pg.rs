//! Helpers for tests of real bete-server processes on PostgreSQL (tests/postgres*.rs).
#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bete_api::pb;
use sqlx::Connection;

use super::*;

/// A database of its own on the test server.
pub async fn fresh_database() -> Option<String> {
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

pub struct Node {
    pub child: Child,
    pub addr: SocketAddr,
    /// Its Prometheus endpoint.
    pub metrics: SocketAddr,
    pub log: PathBuf,
}

impl Node {
    pub fn start(url: &str, id: &str, lease_secs: &str, dir: &tempfile::TempDir) -> Node {
        Node::start_with(url, id, lease_secs, dir, &[])
    }

    /// [`Node::start`] with more flags.
    pub fn start_with(
        url: &str,
        id: &str,
        lease_secs: &str,
        dir: &tempfile::TempDir,
        extra: &[&str],
    ) -> Node {
        let addr = free_addr();
        Node::start_advertising(url, id, lease_secs, dir, extra, addr, addr)
    }

    /// [`Node::start_with`] listening on `addr` and telling its peers to use `advertise` (a
    /// proxy a test can cut).
    pub fn start_advertising(
        url: &str,
        id: &str,
        lease_secs: &str,
        dir: &tempfile::TempDir,
        extra: &[&str],
        addr: SocketAddr,
        advertise: SocketAddr,
    ) -> Node {
        Node::spawn(
            Command::new(env!("CARGO_BIN_EXE_bete-server")),
            (url, id, lease_secs, dir, extra),
            addr,
            advertise,
        )
    }

    /// [`Node::start_with`] with environment variables of its own (fault-injection points).
    pub fn start_with_env(
        url: &str,
        id: &str,
        lease_secs: &str,
        dir: &tempfile::TempDir,
        extra: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Node {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bete-server"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let addr = free_addr();
        Node::spawn(cmd, (url, id, lease_secs, dir, extra), addr, addr)
    }

    /// [`Node::start`] with the node's wall clock off by `offset` (libfaketime's syntax, such
    /// as "+60s"), preloaded into the server itself; its monotonic clock is left true. Needs
    /// libfaketime (Debian's `faketime` package, which scripts/pg.sh installs).
    pub fn start_skewed(
        url: &str,
        id: &str,
        lease_secs: &str,
        dir: &tempfile::TempDir,
        offset: &str,
    ) -> Node {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bete-server"));
        cmd.env("LD_PRELOAD", libfaketime())
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        let addr = free_addr();
        Node::spawn(cmd, (url, id, lease_secs, dir, &[]), addr, addr)
    }

    /// [`Node::start_with`] with the node's wall clock off by what the file `clock` says
    /// (libfaketime's offset syntax, such as "+3600s"), read again at most a second after the
    /// file changes: the test steps the node's clock while it runs. Its monotonic clock is
    /// left true.
    pub fn start_with_clock_file(
        url: &str,
        id: &str,
        lease_secs: &str,
        dir: &tempfile::TempDir,
        extra: &[&str],
        clock: &std::path::Path,
    ) -> Node {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bete-server"));
        cmd.env("LD_PRELOAD", libfaketime())
            .env_remove("FAKETIME")
            .env("FAKETIME_TIMESTAMP_FILE", clock)
            .env("FAKETIME_CACHE_DURATION", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        let addr = free_addr();
        Node::spawn(cmd, (url, id, lease_secs, dir, extra), addr, addr)
    }

    fn spawn(
        mut cmd: Command,
        (url, id, lease_secs, dir, extra): (&str, &str, &str, &tempfile::TempDir, &[&str]),
        addr: SocketAddr,
        advertise: SocketAddr,
    ) -> Node {
        let metrics = free_addr();
        let log = dir.path().join(format!("{id}-{}.log", addr.port()));
        let child = cmd
            .args(["--listen", &addr.to_string()])
            .args(["--metrics-listen", &metrics.to_string()])
            .args(["--no-web", "--house-tables", "0"])
            .args(["--database-url", url, "--node-id", id])
            .args(["--advertise-addr", &advertise.to_string()])
            .args(["--lease-ttl-secs", lease_secs])
            .args(["--drain-timeout-secs", "2"])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Node {
            child,
            addr,
            metrics,
            log,
        }
    }

    pub fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([sig, &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub async fn exits_cleanly(&mut self) {
        for _ in 0..400 {
            if let Some(s) = self.child.try_wait().unwrap() {
                assert!(s.success(), "{s:?}");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the node did not exit");
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A failing test's nodes say what they did (their folder goes with the test).
        if std::thread::panicking() {
            let log = self.log_text();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            eprintln!("--- the last lines of {} ---", self.log.display());
            for l in tail.iter().rev() {
                eprintln!("{l}");
            }
        }
    }
}

/// libfaketime's preload library (Debian's `faketime` package, which scripts/pg.sh installs).
fn libfaketime() -> PathBuf {
    std::fs::read_dir("/usr/lib")
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path().join("faketime/libfaketimeMT.so.1");
            p.exists().then_some(p)
        })
        .next()
        .expect("libfaketime is missing: apt-get install faketime (scripts/pg.sh does, as root)")
}

pub async fn my_turn(c: &mut Client, id: &str) -> pb::SeatView {
    view_when(c, id, "never my turn", |v| {
        v.to_act == Some(0) || v.match_over
    })
    .await
}

/// A table of ours at seat 0 with two house bots; long deadlines so only we move it on.
pub async fn new_table(c: &mut Client) -> String {
    new_table_with_deadline(c, 60_000).await
}

/// [`new_table`] with decisions of `deadline_ms`.
pub async fn new_table_with_deadline(c: &mut Client, deadline_ms: u32) -> String {
    seated(
        c,
        pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Heuristic),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: deadline_ms,
            ..Default::default()
        },
    )
    .await
}

/// Plays `n` of our turns (or to the end); pushes each acknowledged action. Returns the last
/// request sent.
pub async fn play(
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
pub async fn assert_record(c: &mut Client, id: &str, acked: &[String]) {
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

/// A fresh connection to the test database at `url`.
pub async fn db(url: &str) -> sqlx::PgConnection {
    sqlx::PgConnection::connect(url).await.unwrap()
}

pub async fn log_len(url: &str, id: &str) -> i64 {
    let mut conn = db(url).await;
    sqlx::query_scalar("SELECT count(*) FROM log WHERE table_id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap()
}

pub async fn owner(url: &str, id: &str) -> (Option<String>, i64) {
    let mut conn = db(url).await;
    let row: (Option<String>, i64) =
        sqlx::query_as("SELECT owner, epoch FROM tables WHERE id = $1")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .unwrap();
    row
}

/// A TCP proxy to `upstream` on a loopback port of its own, until [`Proxy::cut`]: then every
/// connection through it is dropped and no new one is accepted (a network partition between
/// the nodes that dial it and the one behind it).
pub struct Proxy {
    pub addr: SocketAddr,
    cut: tokio_util::sync::CancellationToken,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = tokio_util::sync::CancellationToken::new();
        let stop = cut.clone();
        tokio::spawn(async move {
            loop {
                let (mut inbound, _) = tokio::select! {
                    () = stop.cancelled() => return,
                    a = listener.accept() => match a {
                        Ok(a) => a,
                        Err(_) => return,
                    },
                };
                let stop = stop.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        () = stop.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    }
                });
            }
        });
        Proxy { addr, cut }
    }

    pub fn cut(&self) {
        self.cut.cancel();
    }
}
