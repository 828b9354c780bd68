//! What an outside bot author meets on a hosted ladder, against a real server with closed
//! signup, real bots and the `bete` binary:
//!
//! - `bete ladder crosstable` (text and JSON) agrees with the matches the ladder lists, and an
//!   unknown ladder is NOT_FOUND / LADDER_NOT_FOUND;
//! - the public reads (`tables`, `watch`, `record`, `verify --table`, `ladder ...`) work with no
//!   token on a closed-signup server (registering a bot there would fail), with `--server
//!   host:port` given without a scheme;
//! - a set's new ratings are stored when its last `MatchEnded` reaches the bot;
//! - after `LeaveLadder` returns no table seats the bot (its set's later tables seat a stand-in);
//! - a WatchBot stream opened `exclusive` ends the bot's older streams with STREAM_REPLACED.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use bete_client::pb::ErrorReason;
use bete_client::{Client, Notice, Runner, Strategy, pb};
use serde_json::Value;

const BETE: &str = env!("CARGO_BIN_EXE_bete");
const ADMIN: &str = "admin-secret-for-tests";

/// Duplicate sets of three tables of three deals: short.
const LADDERS: &str = r#"
[[ladder]]
id = "quick-3"
ruleset = "beste-boer"
seats = 3
deals_per_match = 3
decision_deadline_ms = 5000
house_entrants = ["random", "heuristic"]
"#;

struct Server {
    /// `127.0.0.1:PORT`, no scheme: as a person types it.
    addr: String,
    url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
    _dir: tempfile::TempDir,
}

fn start_closed() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ladders.toml");
    std::fs::write(&file, LADDERS).unwrap();
    let config = bete_server::ServerConfig {
        data_dir: dir.path().join("data"),
        heartbeat_interval: Duration::from_millis(500),
        ladders: Some(file),
        open_signup: false,
        admin_token: Some(ADMIN.into()),
        ..Default::default()
    };
    let (addr, stop, _task) = common::spawn_server(config);
    Server {
        addr: addr.to_string(),
        url: format!("http://{addr}"),
        _stop: stop,
        _dir: dir,
    }
}

/// A bot of a fresh account (closed signup: the operator makes the account): its client, its
/// token and its id.
async fn account_bot(url: &str, name: &str) -> (Client, String, String) {
    let admin = Client::connect(url).await.unwrap();
    admin.set_token(ADMIN).unwrap();
    let account = admin.create_account(&format!("{name}-team")).await.unwrap();
    let client = Client::connect(url).await.unwrap();
    let r = client
        .register_owned(&account.token, name, "")
        .await
        .unwrap();
    (client, r.token, r.bot_id)
}

/// Runs `bete` with no token and no server from the environment.
fn bete(args: &[&str]) -> Output {
    Command::new(BETE)
        .args(args)
        .env_remove("BETE_TOKEN")
        .env_remove("BETE_SERVER")
        .output()
        .expect("run bete")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap()
}

async fn wait_rated(reader: &Client, bot_id: &str, at_least: u32) {
    for _ in 0..1200 {
        let lines = reader.get_standings("quick-3").await.unwrap();
        if lines
            .iter()
            .any(|s| s.bot_id == bot_id && s.matches >= at_least)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{bot_id} was not rated {at_least} times");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crosstable_and_public_reads_need_no_token_on_a_closed_signup_server() {
    let server = start_closed();
    let addr = server.addr.clone();
    let (_alice, alice_token, alice_id) = account_bot(&server.url, "alice").await;
    let (_bob, bob_token, bob_id) = account_bot(&server.url, "bob").await;

    // Two outside bots from the CLI, each one set (three tables), `--server` without a scheme.
    let play = |token: String, strategy: &'static str| {
        let addr = addr.clone();
        tokio::task::spawn_blocking(move || {
            bete(&[
                "bot",
                "--server",
                &addr,
                "--token",
                &token,
                "--ladder",
                "quick-3",
                "--strategy",
                strategy,
                "--matches",
                "3",
            ])
        })
    };
    let (a, b) = tokio::join!(play(alice_token, "heuristic"), play(bob_token, "random"));
    for out in [a.unwrap(), b.unwrap()] {
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("registered bot"));
    }
    let reader = Client::connect(&server.url).await.unwrap();
    wait_rated(&reader, &alice_id, 1).await;
    wait_rated(&reader, &bob_id, 1).await;

    // What the crosstable must say, worked out from the ladder's own match list.
    let matches = reader
        .list_ladder_matches("quick-3", "", 200, "")
        .await
        .unwrap()
        .matches;
    let rated: Vec<&pb::LadderMatch> = matches
        .iter()
        .filter(|m| m.state == pb::LadderMatchState::Rated as i32)
        .collect();
    // Outside bots meet each other first (issue #24): alice and bob may share every set.
    assert!(!rated.is_empty(), "{matches:?}");
    let mut expected: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for m in &rated {
        for x in &m.entrants {
            for y in &m.entrants {
                if x.bot_id < y.bot_id {
                    let d = (x.net - y.net) as f64 / f64::from(m.deals);
                    expected
                        .entry((x.bot_id.clone(), y.bot_id.clone()))
                        .or_default()
                        .push(d);
                }
            }
        }
    }

    let table = json(&bete(&[
        "ladder",
        "crosstable",
        "quick-3",
        "--server",
        &addr,
        "--json",
    ]));
    assert_eq!(table["ladder_id"], "quick-3");
    assert_eq!(table["matches_rated"].as_u64().unwrap(), rated.len() as u64);
    let pairs = table["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), expected.len(), "{table:#}");
    for p in pairs {
        let key = (
            p["bot_a"].as_str().unwrap().to_string(),
            p["bot_b"].as_str().unwrap().to_string(),
        );
        let samples = expected
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} never met: {table:#}"));
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        assert_eq!(p["meetings"].as_u64().unwrap(), samples.len() as u64, "{p}");
        let got = p["mean_net_difference_per_deal"].as_f64().unwrap();
        assert!((got - mean).abs() < 1e-9, "{p}: mean {mean}");
        let (low, high) = (
            p["interval_low"].as_f64().unwrap(),
            p["interval_high"].as_f64().unwrap(),
        );
        assert!(low <= got && got <= high, "{p}");
        assert!(((got - low) - (high - got)).abs() < 1e-9, "symmetric: {p}");
        let spread = samples.iter().any(|s| (s - mean).abs() > 1e-12);
        assert_eq!(high > low, samples.len() > 1 && spread, "{p}");
        let ahead = samples.iter().filter(|s| **s > 0.0).count() as u64;
        assert_eq!(p["a_ahead"].as_u64().unwrap(), ahead, "{p}");
    }
    for (who, id) in [("alice", &alice_id), ("bob", &bob_id)] {
        assert!(
            pairs
                .iter()
                .any(|p| p["bot_a"] == id.as_str() || p["bot_b"] == id.as_str()),
            "{who} met someone: {table:#}"
        );
    }
    let shown = ok(&bete(&[
        "ladder",
        "crosstable",
        "quick-3",
        "--server",
        &addr,
    ]));
    assert!(
        shown.contains("alice") && shown.contains("bob") && shown.contains("95 %"),
        "{shown}"
    );

    // An unknown ladder.
    let e = reader.get_crosstable("no-such-ladder").await.unwrap_err();
    assert_eq!(e.code(), Some(tonic::Code::NotFound), "{e}");
    assert_eq!(e.reason(), Some(ErrorReason::LadderNotFound), "{e}");
    let out = bete(&["ladder", "crosstable", "no-such-ladder", "--server", &addr]);
    assert!(!out.status.success());

    // The public reads, with no token on a server where registering a bot is refused: each
    // succeeds only if it registers nothing.
    for args in [
        vec!["ladder", "list"],
        vec!["ladder", "standings", "quick-3"],
        vec!["ladder", "matches", "quick-3"],
        vec!["tables", "--state", "finished"],
    ] {
        let mut args = args.clone();
        args.extend(["--server", addr.as_str()]);
        let out = bete(&args);
        ok(&out);
        assert!(!text(&out.stderr).contains("registered"), "{args:?}");
    }
    let table_id = rated[0].tables[0].table_id.clone();
    let checked = ok(&bete(&["verify", "--table", &table_id, "--server", &addr]));
    assert!(checked.contains("verified"), "{checked}");
    assert!(
        checked.contains("deal   0:"),
        "deals counted from 0: {checked}"
    );
    ok(&bete(&["watch", "--once", &table_id, "--server", &addr]));
    let record = ok(&bete(&["record", &table_id, "--server", &addr]));
    assert!(record.contains("bete-record/1"));
    // Registering is indeed refused here: the reads above could not have registered a bot.
    let refused = Client::connect(&server.url)
        .await
        .unwrap()
        .register("sneaky", "")
        .await
        .unwrap_err();
    assert_eq!(refused.reason(), Some(ErrorReason::SignupClosed));
}

/// A runner for `client` playing heuristic, with its notices.
fn runner(
    client: &Client,
) -> (
    Runner,
    tokio::sync::mpsc::UnboundedReceiver<Notice>,
    tokio_util::sync::CancellationToken,
) {
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut r = Runner::new(client.clone(), |_: &pb::Seated| Strategy::Heuristic.bot())
        .with_cancel(cancel.clone());
    let notices = r.notifications();
    (r, notices, cancel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sets_ratings_are_stored_when_its_last_match_ended_reaches_the_bot() {
    let server = start_closed();
    let (client, _, id) = account_bot(&server.url, "carol").await;
    client.enter_ladder("quick-3", 1).await.unwrap();
    let (runner, mut notices, cancel) = runner(&client);
    let run = tokio::spawn(runner.run());
    let reader = Client::connect(&server.url).await.unwrap();
    let mut ended = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(240);
    // Two sets: the third and the sixth MatchEnded are each a set's last.
    while ended < 6 {
        let notice = tokio::time::timeout_at(deadline, notices.recv())
            .await
            .expect("the sets end")
            .unwrap();
        if let Notice::MatchOver(_) = notice {
            ended += 1;
            let line = reader
                .get_standings("quick-3")
                .await
                .unwrap()
                .into_iter()
                .find(|s| s.bot_id == id);
            let rated = line.map_or(0, |s| s.matches);
            assert_eq!(
                rated,
                ended / 3,
                "after MatchEnded of table {ended}, the standings show {rated} sets rated"
            );
        }
    }
    cancel.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_leave_ladder_returns_no_table_seats_the_bot() {
    let server = start_closed();
    let (client, _, id) = account_bot(&server.url, "dave").await;
    client.enter_ladder("quick-3", 1).await.unwrap();
    let (runner, mut notices, cancel) = runner(&client);
    let run = tokio::spawn(runner.run());
    // Seated at a set's first table: leave now, in the middle of the set.
    let first = loop {
        match tokio::time::timeout(Duration::from_secs(60), notices.recv())
            .await
            .expect("seated")
            .unwrap()
        {
            Notice::Seated { table_id, .. } => break table_id,
            _ => continue,
        }
    };
    let left = client.leave_ladder("quick-3").await.unwrap();
    let left_at = SystemTime::now();
    assert!(!left.active);

    // The set goes on without the bot and is rated, with the bot's result in it.
    let reader = Client::connect(&server.url).await.unwrap();
    let set = loop {
        let page = reader
            .list_ladder_matches("quick-3", &id, 10, "")
            .await
            .unwrap();
        assert_eq!(
            page.matches.len(),
            1,
            "no new match after leaving: {page:?}"
        );
        let m = page.matches[0].clone();
        if m.state == pb::LadderMatchState::Rated as i32 {
            break m;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(set.tables.len(), 3, "{set:?}");
    assert_eq!(set.tables[0].table_id, first);
    assert!(set.entrants.iter().any(|e| e.bot_id == id));
    // The bot sits at no table created after LeaveLadder returned (here: the set's later
    // tables, where the house plays its seat).
    let mut stand_ins = 0;
    for t in &set.tables {
        let table = reader.get_table(&t.table_id).await.unwrap();
        let created = SystemTime::try_from(table.created_at.unwrap()).unwrap();
        let seated = table.seats.iter().any(|s| s.bot_id == id);
        if created > left_at {
            assert!(!seated, "table {} seats the bot after it left", t.table_id);
            stand_ins += 1;
        }
    }
    assert!(stand_ins >= 1, "the set's later tables came after leaving");
    // Nothing else comes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let page = reader
        .list_ladder_matches("quick-3", &id, 10, "")
        .await
        .unwrap();
    assert_eq!(page.matches.len(), 1);
    cancel.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_watch_bot_ends_the_older_streams_of_the_bot() {
    let server = start_closed();
    let (first, token, _) = account_bot(&server.url, "erin").await;
    let second = Client::connect(&server.url).await.unwrap();
    second.set_token(&token).unwrap();
    // Two ordinary streams of one token live side by side.
    let mut a = first.open_watch_bot(Default::default()).await.unwrap();
    let mut b = second.open_watch_bot(Default::default()).await.unwrap();
    for s in [&mut a, &mut b] {
        let m = tokio::time::timeout(Duration::from_secs(5), s.message())
            .await
            .expect("a heartbeat")
            .unwrap();
        assert!(m.is_some());
    }
    // A third process asks to be the only one.
    let third = Client::connect(&server.url).await.unwrap();
    third.set_token(&token).unwrap();
    third.set_exclusive(true);
    let mut c = third.open_watch_bot(Default::default()).await.unwrap();
    for s in [&mut a, &mut b] {
        let ended = loop {
            match tokio::time::timeout(Duration::from_secs(5), s.message())
                .await
                .expect("the old stream ends at once")
            {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("ended without a reason"),
                Err(status) => break status,
            }
        };
        assert_eq!(ended.code(), tonic::Code::Aborted);
        let e = bete_client::Error::from(ended);
        assert_eq!(e.reason(), Some(ErrorReason::StreamReplaced), "{e}");
    }
    // The new stream gets the bot's tables.
    let table = third
        .create_table(common::house_table(pb::Ruleset::Bete, 3, 0))
        .await
        .unwrap();
    third.join_table(&table.table_id, None).await.unwrap();
    let seated = loop {
        let m = tokio::time::timeout(Duration::from_secs(10), c.message())
            .await
            .expect("the exclusive stream carries the table")
            .unwrap()
            .unwrap();
        if let Some(pb::watch_bot_response::Kind::Seated(s)) = m.kind {
            break s;
        }
    };
    assert_eq!(seated.table_id, table.table_id);
    // The runner of a replaced stream stops with that reason instead of reconnecting.
    let (runner, _notices, _cancel) = self::runner(&first);
    let run = tokio::spawn(runner.run());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fourth = Client::connect(&server.url).await.unwrap();
    fourth.set_token(&token).unwrap();
    fourth.set_exclusive(true);
    let _d = fourth.open_watch_bot(Default::default()).await.unwrap();
    let stopped = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the replaced runner stops")
        .unwrap();
    assert_eq!(
        stopped.unwrap_err().reason(),
        Some(ErrorReason::StreamReplaced)
    );
}
