//! The `bete` binary on ladders against a real server: `bete bot --ladder` plays a duplicate set
//! and leaves, `bete ladder list/standings/matches` show it (text and JSON), `bete verify`
//! accepts the set's records (fetched with --table, and from a file with the commitment) and
//! rejects a changed seed and a changed deck; `bete tables` and `bete watch` mark a table whose
//! seed its creator chose.
#![allow(clippy::unwrap_used)]

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use bete_client::pb;
use serde_json::Value;

const BETE: &str = env!("CARGO_BIN_EXE_bete");

/// A small ladder: three seats, three deals, duplicate sets of three tables.
const LADDERS: &str = r#"
[[ladder]]
id = "quick-3"
ruleset = "beste-boer"
seats = 3
deals_per_match = 3
decision_deadline_ms = 5000
house_entrants = ["random", "heuristic"]
house_fill_after_ms = 2500
strike_window = 40
max_strike_share = 0.1
strike_cooldown_ms = 30000
"#;

struct Server {
    url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
    dir: tempfile::TempDir,
}

fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ladders.toml");
    std::fs::write(&file, LADDERS).unwrap();
    let config = bete_server::ServerConfig {
        data_dir: dir.path().join("data"),
        heartbeat_interval: Duration::from_millis(500),
        ladders: Some(file),
        ..Default::default()
    };
    let (addr, stop, _task) = common::spawn_server(config);
    Server {
        url: format!("http://{addr}"),
        _stop: stop,
        dir,
    }
}

/// Runs `bete` (blocking: the server has its own thread and runtime).
fn bete(args: &[&str]) -> Output {
    Command::new(BETE)
        .args(args)
        .env_remove("BETE_TOKEN")
        .env_remove("BETE_SERVER")
        // Set by `cargo test`; `bete` would name `cargo run -p bete-client --` in its hints.
        .env_remove("CARGO_PKG_NAME")
        .output()
        .expect("run bete")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_bot_plays_a_ladder_set_and_every_record_verifies() {
    let server = start();
    let url = server.url.as_str();

    let list = bete(&["ladder", "list", "--server", url]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let listed = text(&list.stdout);
    assert!(
        listed.contains("quick-3") && listed.contains("beste-boer") && listed.contains("duplicate"),
        "{listed}"
    );
    // The ladder's own settings, as declared: raw nets, 2.5 s house fill, at most 10 % of the
    // last 40 decisions timed out, a 30 s first cooldown.
    let row = listed.lines().find(|l| l.starts_with("quick-3")).unwrap();
    assert!(
        row.contains(" raw ")
            && row.contains(" 2.5s ")
            && row.contains(" 10%/40 ")
            && row.contains(" 30s "),
        "{listed}"
    );
    let ladders = json(&bete(&["ladder", "list", "--server", url, "--json"]));
    assert_eq!(ladders["ladders"][0]["ladder_id"], "quick-3");
    assert_eq!(ladders["ladders"][0]["deals_per_match"], 3);
    assert_eq!(
        ladders["ladders"][0]["house_entrants"],
        serde_json::json!(["random", "heuristic"])
    );
    assert_eq!(ladders["ladders"][0]["search_budget_ms"], 0);
    assert_eq!(ladders["ladders"][0]["house_fill_after_ms"], 2500);
    assert_eq!(ladders["ladders"][0]["strike_window"], 40);
    assert_eq!(ladders["ladders"][0]["max_strike_share"], 0.1);
    assert_eq!(ladders["ladders"][0]["strike_cooldown_ms"], 30000);
    assert_eq!(ladders["ladders"][0]["luck_adjusted"], false);

    // One duplicate set is three tables: the bot leaves once seated at the third and stops
    // when it is over.
    let played = tokio::task::spawn_blocking({
        let url = url.to_string();
        move || {
            bete(&[
                "bot",
                "--server",
                &url,
                "--ladder",
                "quick-3",
                "--strategy",
                "heuristic",
                "--name",
                "cli-ladder-bot",
                "--matches",
                "3",
            ])
        }
    });
    let played = tokio::time::timeout(Duration::from_secs(180), played)
        .await
        .expect("the bot stops after its three tables")
        .unwrap();
    let stderr = text(&played.stderr);
    assert!(played.status.success(), "{stderr}");
    assert!(stderr.contains("entered ladder quick-3"), "{stderr}");
    assert!(stderr.contains("left ladder quick-3"), "{stderr}");
    assert!(
        text(&played.stdout).contains("3 tables"),
        "{}",
        text(&played.stdout)
    );

    // The set is rated when its last table ends: the bot is on the leaderboard.
    let mut standings = Value::Null;
    for _ in 0..100 {
        standings = json(&bete(&[
            "ladder",
            "standings",
            "quick-3",
            "--server",
            url,
            "--json",
        ]));
        let rated =
            standings["entries"].as_array().unwrap().iter().any(|e| {
                e["bot_name"] == "cli-ladder-bot" && e["matches"].as_u64().unwrap_or(0) >= 1
            });
        if rated {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let entries = standings["entries"].as_array().unwrap();
    let mine = entries
        .iter()
        .find(|e| e["bot_name"] == "cli-ladder-bot")
        .unwrap_or_else(|| panic!("the bot is on the leaderboard: {standings:#}"));
    assert_eq!(mine["matches"], 1, "{standings:#}");
    for e in entries {
        for key in ["bot_name", "bot_id", "rating", "mu", "sigma", "matches"] {
            assert!(e.get(key).is_some(), "{key} in {e}");
        }
        let (r, mu, sigma) = (
            e["rating"].as_f64().unwrap(),
            e["mu"].as_f64().unwrap(),
            e["sigma"].as_f64().unwrap(),
        );
        assert!((r - (mu - 3.0 * sigma)).abs() < 1e-6, "{e}");
    }
    let ratings: Vec<f64> = entries
        .iter()
        .map(|e| e["rating"].as_f64().unwrap())
        .collect();
    assert!(
        ratings.windows(2).all(|w| w[0] >= w[1]),
        "best first: {ratings:?}"
    );
    let board = bete(&["ladder", "standings", "quick-3", "--server", url]);
    assert!(text(&board.stdout).contains("cli-ladder-bot"));

    // The set's three tables, from `bete ladder matches` filtered to the bot.
    let bot_id = mine["bot_id"].as_str().unwrap();
    let matches = json(&bete(&[
        "ladder", "matches", "quick-3", "--server", url, "--bot", bot_id, "--json",
    ]));
    let set = &matches["matches"][0];
    assert_eq!(set["state"], "rated", "{matches:#}");
    assert_eq!(set["duplicate"], true);
    let tables = set["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 3, "{set:#}");
    assert!(
        set["entrants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["bot_id"] == bot_id)
    );
    let shown = text(&bete(&["ladder", "matches", "quick-3", "--server", url]).stdout);
    assert!(
        shown.contains("duplicate set") && shown.contains("bete verify"),
        "{shown}"
    );

    let client = common::bot_at(url, "reader").await;
    for t in tables {
        let table_id = t["table_id"].as_str().unwrap();
        let checked = bete(&["verify", "--table", table_id, "--server", url]);
        let out = text(&checked.stdout);
        assert_eq!(
            checked.status.code(),
            Some(0),
            "{out}{}",
            text(&checked.stderr)
        );
        assert!(
            out.contains("(matches)") && out.contains("verified"),
            "{out}"
        );
        assert_eq!(
            out.lines().filter(|l| l.starts_with("deal ")).count(),
            3,
            "one line per deal: {out}"
        );

        // The same record from a file, against the commitment the match listed.
        let commitment = t["seed_sha256"].as_str().unwrap();
        let record = client.get_game_record(table_id).await.unwrap();
        let path = server.dir.path().join(format!("{table_id}.json"));
        std::fs::write(&path, &record).unwrap();
        let file = path.to_str().unwrap();
        let ok = bete(&["verify", file, "--commitment", commitment]);
        assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));

        // A changed seed no longer hashes to the commitment.
        let mut changed: Value = serde_json::from_str(&record).unwrap();
        changed["seed"] = Value::String("ab".repeat(32));
        std::fs::write(&path, changed.to_string()).unwrap();
        let bad = bete(&["verify", file, "--commitment", commitment]);
        assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stdout));
        assert!(text(&bad.stdout).contains("DOES NOT MATCH"));
        assert!(text(&bad.stderr).contains("NOT VERIFIED"));

        // A changed deck is named by its deal (the server's records list every deck).
        let mut changed: Value = serde_json::from_str(&record).unwrap();
        let deck = changed["deals"][1]["deck"]
            .as_array_mut()
            .expect("a ladder record lists every deck");
        deck.swap(0, 1);
        std::fs::write(&path, changed.to_string()).unwrap();
        let bad = bete(&["verify", file, "--commitment", commitment]);
        assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stdout));
        assert!(
            text(&bad.stderr).contains("the deck of deal 1 is not the seed's shuffle"),
            "{}",
            text(&bad.stderr)
        );

        // Not a record at all.
        std::fs::write(&path, "{\"format\": \"bete-record/1\"").unwrap();
        assert_eq!(bete(&["verify", file]).status.code(), Some(2));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_with_a_chosen_seed_is_marked_in_tables_and_watch() {
    let server = start();
    let url = server.url.as_str();
    let creator = common::bot_at(url, "seeder").await;
    let mut request = common::house_table(pb::Ruleset::Bete, 3, 0);
    request.seed = "00".repeat(32);
    request.house_bots.remove(0); // seat 1 stays free: the table waits, listed
    let chosen = creator.create_table(request).await.unwrap();
    assert!(chosen.seed_chosen);
    let plain = creator
        .create_table(common::house_table(pb::Ruleset::Bete, 3, 0))
        .await
        .unwrap();
    assert!(!plain.seed_chosen);

    let listed = text(&bete(&["tables", "--server", url]).stdout);
    let line = |id: &str| {
        listed
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} in {listed}"))
            .to_string()
    };
    assert!(line(&chosen.table_id).contains("[chosen seed"), "{listed}");
    assert!(!line(&plain.table_id).contains("chosen seed"), "{listed}");

    let watched = bete(&["watch", "--server", url, "--once", &chosen.table_id]);
    assert!(watched.status.success(), "{}", text(&watched.stderr));
    assert!(
        text(&watched.stdout).contains("chosen seed"),
        "{}",
        text(&watched.stdout)
    );
    let watched = bete(&["watch", "--server", url, "--once", &plain.table_id]);
    assert!(!text(&watched.stdout).contains("chosen seed"));

    // A finished chosen-seed table verifies (the seed is the one committed), with a note.
    let mut request = common::house_table(pb::Ruleset::Bete, 3, 0);
    request.seed = "11".repeat(32);
    request.house_bots.push(pb::HouseBotSeat {
        seat: 0,
        policy: pb::HouseBotPolicy::Random as i32,
        search_budget_ms: 0,
    });
    let house = creator.create_table(request).await.unwrap();
    for _ in 0..600 {
        let t = creator.get_table(&house.table_id).await.unwrap();
        if t.state == pb::TableState::Finished as i32 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let checked = bete(&["verify", "--table", &house.table_id, "--server", url]);
    let out = text(&checked.stdout);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{out}{}",
        text(&checked.stderr)
    );
    assert!(
        out.contains("creator chose this seed") && out.contains("(matches)"),
        "{out}"
    );
    // An ordinary table's record gives the seed, not the decks: each deal says it is derived.
    assert!(out.contains("no deck listed"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_ladder_bot_and_takes_it_off_the_ladder() {
    let server = start();
    let url = server.url.clone();
    let child = Command::new(BETE)
        .args([
            "bot",
            "--server",
            &url,
            "--ladder",
            "quick-3",
            "--strategy",
            "random",
            "--name",
            "until-ctrl-c",
        ])
        .env_remove("BETE_TOKEN")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn bete");
    // Wait until it has been rated once: it is entered and playing.
    let reader = bete_client::Client::connect(&url).await.unwrap();
    let mut rated = false;
    for _ in 0..600 {
        let lines = reader.get_standings("quick-3").await.unwrap();
        if lines
            .iter()
            .any(|s| s.bot_name == "until-ctrl-c" && s.matches >= 1)
        {
            rated = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(rated, "the bot played a set");
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("stopping (Ctrl-C)") && stderr.contains("left ladder quick-3"),
        "{stderr}"
    );
    let line = reader
        .get_standings("quick-3")
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.bot_name == "until-ctrl-c")
        .unwrap();
    assert!(
        !line.active,
        "off the ladder, still on the leaderboard: {line:?}"
    );
}
