//! `bete play` in a pseudo-terminal: a person's keystrokes finish a whole match, and a bad
//! choice is explained and asked again.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Proxy, TestServer};
use expectrl::{Eof, Expect as _, Regex, Session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bete_play_finishes_a_match_with_keystrokes_and_rejects_a_bad_choice() {
    let server = TestServer::start().await;
    let url = server.url.clone();
    let transcript = tokio::task::spawn_blocking(move || play_a_match(&url))
        .await
        .expect("pty task");
    assert!(transcript.contains("Your hand:"), "the hand is shown");
    assert!(
        transcript.contains("house:"),
        "the other seats are house bots"
    );
    assert!(
        transcript.contains(" plays "),
        "other seats' plays are shown"
    );
    server.stop().await;
}

fn play_a_match(url: &str) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bete"));
    command.args([
        "play",
        "--server",
        url,
        "--ruleset",
        "beast",
        "--seats",
        "3",
        "--deadline",
        "60",
    ]);
    command.env_remove("BETE_TOKEN");
    let mut p = Session::spawn(command).expect("spawn bete play");
    p.set_expect_timeout(Some(Duration::from_secs(30)));
    let mut transcript = String::new();

    let first = p
        .expect(Regex(r"Your choice \[1-(\d+)\]"))
        .expect("a first decision");
    transcript.push_str(&String::from_utf8_lossy(first.before()));
    assert!(
        transcript.contains("Legal actions:"),
        "numbered legal actions: {transcript}"
    );
    assert!(
        transcript.contains("  1) "),
        "choice 1 is listed: {transcript}"
    );

    // Out of range, then not an action at all: both explained, both asked again.
    p.send_line("99").expect("send");
    p.expect("There is no choice 99")
        .expect("out-of-range explained");
    p.expect(Regex(r"Your choice \[1-\d+\]"))
        .expect("asked again");
    p.send_line("fold").expect("send");
    p.expect("is not one of your choices")
        .expect("unknown input explained");
    p.expect(Regex(r"Your choice \[1-\d+\]"))
        .expect("asked again");
    p.send_line("1").expect("send");

    let mut decisions = 1;
    loop {
        let found = p
            .expect(Regex(r"Your choice \[1-\d+\]|Match over"))
            .expect("next decision or the end");
        transcript.push_str(&String::from_utf8_lossy(found.before()));
        let text = String::from_utf8_lossy(&found[0]).to_string();
        if text.contains("Match over") {
            break;
        }
        decisions += 1;
        assert!(decisions < 2_000, "the match ends");
        p.send_line("1").expect("send");
    }
    let rest = p.expect(Eof).expect("bete play exits after the match");
    transcript.push_str(&String::from_utf8_lossy(rest.before()));
    transcript.push_str(&String::from_utf8_lossy(rest.as_bytes()));
    let tail: String = transcript
        .chars()
        .rev()
        .take(1500)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        transcript.contains("Your final balance"),
        "final balance shown: {tail}"
    );
    assert!(!transcript.contains("timed out"), "no decision timed out");
    transcript
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bete_play_reconnects_after_a_dropped_connection() {
    let server = TestServer::start().await;
    let proxy = Proxy::start(server.addr).await;
    let url = proxy.url.clone();
    let (cut_tx, mut cut_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let driver = tokio::task::spawn_blocking(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bete"));
        command.args([
            "play",
            "--server",
            &url,
            "--ruleset",
            "bete",
            "--seats",
            "3",
            "--deadline",
            "60",
        ]);
        command.env_remove("BETE_TOKEN");
        let mut p = Session::spawn(command).expect("spawn bete play");
        p.set_expect_timeout(Some(Duration::from_secs(30)));
        let mut transcript = String::new();
        let mut decisions = 0;
        loop {
            let found = p
                .expect(Regex(r"Your choice \[1-\d+\]|Match over"))
                .expect("next decision or the end");
            transcript.push_str(&String::from_utf8_lossy(found.before()));
            if String::from_utf8_lossy(&found[0]).contains("Match over") {
                break;
            }
            decisions += 1;
            assert!(decisions < 3_000, "the match ends");
            if decisions == 3 {
                // The link drops while the person is thinking.
                cut_tx.send(()).expect("cut");
                std::thread::sleep(Duration::from_millis(1_200));
            }
            p.send_line("1").expect("send");
        }
        let rest = p.expect(Eof).expect("exits");
        transcript.push_str(&String::from_utf8_lossy(rest.before()));
        transcript.push_str(&String::from_utf8_lossy(rest.as_bytes()));
        transcript
    });
    let cutter = tokio::spawn(async move {
        if cut_rx.recv().await.is_some() {
            proxy.cut(Duration::from_millis(500));
        }
        proxy
    });
    let transcript = driver.await.expect("pty task");
    let _proxy = cutter.await.expect("cutter");
    assert!(
        transcript.contains("(reconnected)"),
        "the session reconnected: {transcript:.3000}"
    );
    assert!(
        transcript.contains("Your final balance"),
        "the match was finished"
    );
    assert!(!transcript.contains("timed out"), "no decision timed out");
    server.stop().await;
}

/// Ctrl-C at the prompt leaves the seat (the table shows it empty, the match goes on) and the
/// process ends with the shell's status for an interrupt, 130.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_bete_play_leaves_the_seat() {
    let server = TestServer::start().await;
    let url = server.url.clone();
    let (table_id, transcript, status) = tokio::task::spawn_blocking(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bete"));
        command.args([
            "play",
            "--server",
            &url,
            "--ruleset",
            "beast",
            "--seats",
            "3",
            "--deadline",
            "60",
        ]);
        command.env_remove("BETE_TOKEN");
        let mut p = Session::spawn(command).expect("spawn bete play");
        p.set_expect_timeout(Some(Duration::from_secs(30)));
        let sat = p
            .expect(Regex(r"of table (\S+) \("))
            .expect("seated at a table");
        let table_id = String::from_utf8_lossy(&sat[1]).to_string();
        p.expect(Regex(r"Your choice \[1-\d+\]"))
            .expect("a first decision");
        // The terminal turns the ETX byte into SIGINT, as a person's Ctrl-C.
        p.send("\x03").expect("Ctrl-C");
        let rest = p.expect(Eof).expect("bete play exits");
        let mut transcript = String::from_utf8_lossy(rest.before()).to_string();
        transcript.push_str(&String::from_utf8_lossy(rest.as_bytes()));
        let status = p.get_process().wait().expect("exit status");
        (table_id, transcript, status)
    })
    .await
    .expect("pty task");
    assert!(
        transcript.contains("Left seat 0 of table"),
        "says it left: {transcript}"
    );
    assert!(
        matches!(status, expectrl::process::unix::WaitStatus::Exited(_, 130)),
        "exit status 130: {status:?}"
    );
    let watcher = server.bot("ctrl-c-watcher").await;
    let table = watcher.get_table(&table_id).await.expect("the table");
    assert_eq!(
        table.seats[0].occupant,
        bete_client::pb::OccupantKind::Empty as i32,
        "seat 0 is free again: {table:?}"
    );
    server.stop().await;
}
