//! The real binary against a damaged or shared data folder, and against its own pause
//! (issue #14, holes 7-9): a second server on the folder, a zero-length, truncated or
//! entry-losing database each make it exit non-zero with a clear message; a SIGSTOP of the
//! server is never a bot's strike.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use bete_api::pb;
use common::*;

struct Proc {
    child: Child,
    addr: SocketAddr,
    stderr: PathBuf,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(dir: &Path, name: &str, extra: &[&str]) -> Proc {
    let addr = free_addr();
    let stderr = dir.with_extension(format!("{name}.stderr"));
    let child = Command::new(env!("CARGO_BIN_EXE_bete-server"))
        .args(["--listen", &addr.to_string()])
        .args(["--metrics-listen", &free_addr().to_string()])
        .arg("--data-dir")
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    Proc {
        child,
        addr,
        stderr,
    }
}

/// Waits (at most 20 s) for the process to exit by itself.
async fn exited(p: &mut Proc) -> (ExitStatus, String) {
    for _ in 0..200 {
        if let Some(status) = p.child.try_wait().unwrap() {
            return (status, std::fs::read_to_string(&p.stderr).unwrap());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the server kept running; its log: {}",
        std::fs::read_to_string(&p.stderr).unwrap()
    );
}

fn signal(p: &Proc, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &p.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig}");
}

async fn stop(mut p: Proc) {
    signal(&p, "-TERM");
    let (status, log) = exited(&mut p).await;
    assert!(status.success(), "{status:?}: {log}");
}

/// The start log, written to a file as an operator's service manager does, reads as plain text:
/// the listening address as `addr=127.0.0.1:PORT` (not `Some(...)`), and no colour codes, which
/// only a terminal gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_log_in_a_file_is_plain_text_with_plain_addresses() {
    let root = tempfile::tempdir().unwrap();
    let p = spawn(&root.path().join("data"), "log", &[]);
    let ch = connect(p.addr).await;
    register(&ch, "log-reader").await;
    let log = std::fs::read_to_string(&p.stderr).unwrap();
    let listening = log
        .lines()
        .find(|l| l.contains("bete-server listening"))
        .unwrap_or_else(|| panic!("no start line: {log}"));
    assert!(
        listening.contains(&format!("addr={}", p.addr)),
        "{listening}"
    );
    assert!(!log.contains("Some("), "{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in a file: {log:?}");
    stop(p).await;
}

/// Hole 7: a second server on the same data folder exits at once, non-zero, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_a_folder_refuses_to_start() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let first = spawn(&dir, "first", &[]);
    let ch = connect(first.addr).await;
    register(&ch, "first-bot").await;
    let mut second = spawn(&dir, "second", &[]);
    let (status, log) = exited(&mut second).await;
    assert!(!status.success());
    assert!(log.contains("in use by another bete-server"), "{log}");
    // The first one still serves.
    register(&ch, "still-there").await;
    stop(first).await;
}

/// Hole 8: a zero-length database is refused, not started as an empty one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_database_file_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bete.sqlite3"), b"").unwrap();
    let mut p = spawn(&dir, "empty", &[]);
    let (status, log) = exited(&mut p).await;
    assert!(!status.success());
    assert!(log.contains("is empty"), "{log}");
}

/// Hole 8: a truncated database is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_database_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let p = spawn(&dir, "one", &[]);
    let ch = connect(p.addr).await;
    for i in 0..20 {
        register(&ch, &format!("bot-{i}")).await;
    }
    stop(p).await;
    // A second start checkpoints the WAL into the main file.
    let p = spawn(&dir, "two", &[]);
    let ch = connect(p.addr).await;
    // (A call first: SIGTERM before the server listens for it would kill it outright.)
    register(&ch, "second-run").await;
    stop(p).await;
    let file = dir.join("bete.sqlite3");
    let len = std::fs::metadata(&file).unwrap().len();
    assert!(len >= 8192, "{len}");
    // Truncated with no WAL beside it (with one, a short file is how a crash in the middle of
    // a checkpoint looks, which SQLite completes: store/guard.rs).
    for side in ["bete.sqlite3-wal", "bete.sqlite3-shm"] {
        let _ = std::fs::remove_file(dir.join(side));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let mut p = spawn(&dir, "three", &[]);
    let (status, log) = exited(&mut p).await;
    assert!(!status.success());
    assert!(log.contains("truncated"), "{log}");
}

/// Hole 8: entries acknowledged before a kill -9 and lost with a damaged WAL are detected at
/// the next start: the server refuses to serve what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_acknowledged_entries_are_detected() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let mut p = spawn(&dir, "one", &["--house-delay-ms", "10"]);
    let ch = connect(p.addr).await;
    let mut a = register(&ch, "wal-bot").await;
    let id = a
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: (0..3)
                .map(|i| house(i, pb::HouseBotPolicy::Random))
                .collect(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    let mut seq = 0;
    for _ in 0..200 {
        seq = a
            .client
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap()
            .last_seq;
        if seq >= 60 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seq >= 60, "{seq}");
    p.child.kill().unwrap();
    p.child.wait().unwrap();
    // Damage the WAL: its second half (the newest commits) is gone.
    let wal = dir.join("bete.sqlite3-wal");
    let len = std::fs::metadata(&wal).unwrap().len();
    assert!(len > 32 * 1024, "{len}");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&wal)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let mut p = spawn(&dir, "two", &[]);
    let (status, log) = exited(&mut p).await;
    assert!(!status.success());
    assert!(
        log.contains("acknowledged log entries are missing"),
        "{log}"
    );
}

/// Hole 9: a server stopped (SIGSTOP) for longer than the deadline, then continued, does not
/// charge its pause to the bot whose turn it was: the bot's prompt answer is taken, no strike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_pause_is_not_a_strike() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let p = spawn(&dir, "one", &[]);
    let ch = connect(p.addr).await;
    let mut a = register(&ch, "patient").await;
    let id = a
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Random),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: 1000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    a.sit(&id, 0).await;
    for round in 0..2 {
        let v = view_when(&mut a.client, &id, "never my turn", |v| v.to_act == Some(0)).await;
        signal(&p, "-STOP");
        tokio::time::sleep(Duration::from_millis(2500)).await;
        signal(&p, "-CONT");
        a.client
            .submit_action(pb::SubmitActionRequest {
                table_id: id.clone(),
                action: Some(v.legal_actions[0].clone()),
                expected_seq: v.seq,
                request_id: format!("after-pause-{round}"),
            })
            .await
            .unwrap_or_else(|s| panic!("round {round}: the prompt answer was refused: {s:?}"));
    }
    let t = a
        .client
        .get_table(pb::GetTableRequest { table_id: id })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(t.seats[0].strikes, 0, "{t:?}");
    stop(p).await;
}
