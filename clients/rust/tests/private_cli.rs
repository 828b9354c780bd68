//! `bete bot --private` against a real server: it creates a private table, prints its
//! invitation code, and plays it with the bot that joins with `--join TABLE --invitation CODE`;
//! a bot without the code is refused with INVITATION_REQUIRED, and with a wrong one with
//! INVITATION_WRONG.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::BufRead as _;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BETE: &str = env!("CARGO_BIN_EXE_bete");

fn bete() -> Command {
    let mut c = Command::new(BETE);
    c.env_remove("BETE_TOKEN")
        .env_remove("BETE_SERVER")
        .env_remove("CARGO_PKG_NAME");
    c
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `bete bot --join id` as `name`, with `code` if any.
fn join(url: &str, id: &str, name: &str, code: Option<&str>) -> Output {
    let mut c = bete();
    c.args([
        "bot",
        "--server",
        url,
        "--strategy",
        "random",
        "--name",
        name,
        "--join",
        id,
    ]);
    if let Some(code) = code {
        c.args(["--invitation", code]);
    }
    c.output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_table_is_played_by_the_bots_given_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let config = bete_server::ServerConfig {
        data_dir: dir.path().join("data"),
        heartbeat_interval: Duration::from_millis(500),
        ..Default::default()
    };
    let (addr, _stop, _task) = common::spawn_server(config);
    let url = format!("http://{addr}");
    let mut creator = bete()
        .args([
            "bot",
            "--server",
            &url,
            "--strategy",
            "random",
            "--name",
            "host",
            "--seats",
            "3",
            "--private",
            "--open-seats",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first line on stdout: `table <id> invitation <code>`. The rest is read too (a
    // closed pipe would fail the creator's later prints).
    let stdout = creator.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            // Read on after the first line is taken: the receiver may be gone.
            let _ = tx.send(line);
        }
    });
    let line = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(60)))
        .await
        .unwrap()
        .expect("the creator printed no invitation");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.len(), 4, "{line}");
    assert_eq!((words[0], words[2]), ("table", "invitation"), "{line}");
    let (id, code) = (words[1].to_string(), words[3].to_string());
    assert_eq!(code.len(), 32, "{line}");

    let url2 = url.clone();
    let id2 = id.clone();
    let (without, wrong) = tokio::task::spawn_blocking(move || {
        (
            join(&url2, &id2, "gatecrasher", None),
            join(&url2, &id2, "guesser", Some(&"0".repeat(32))),
        )
    })
    .await
    .unwrap();
    assert!(!without.status.success());
    assert!(
        text(&without.stderr).contains("INVITATION_REQUIRED"),
        "{}",
        text(&without.stderr)
    );
    assert!(!wrong.status.success());
    let err = text(&wrong.stderr);
    assert!(err.contains("INVITATION_WRONG"), "{err}");
    assert!(!err.contains(&code), "the code leaked: {err}");

    // The invited bot joins the free seat and both play the match to its end.
    let invited = tokio::task::spawn_blocking(move || join(&url, &id, "guest", Some(&code)))
        .await
        .unwrap();
    assert!(invited.status.success(), "{}", text(&invited.stderr));
    assert!(
        text(&invited.stderr).contains("joined table"),
        "{}",
        text(&invited.stderr)
    );
    let host = tokio::task::spawn_blocking(move || creator.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(host.status.success(), "{}", text(&host.stderr));
}
