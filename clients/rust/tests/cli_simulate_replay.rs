//! `bete simulate` → `bete replay` round trips through the real binary, for all ten rulesets and
//! every seat count each allows.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BETE: &str = env!("CARGO_BIN_EXE_bete");

fn bete(args: &[&str]) -> Output {
    Command::new(BETE).args(args).output().expect("run bete")
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bete-cli-{}-{name}", std::process::id()))
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Every (ruleset, seat count) of RULES.md 11.1, Bête's two seats with `two_players`.
fn tables() -> Vec<(&'static str, u8)> {
    let mut v = vec![("bete", 2), ("bete-ace-high", 2)];
    for (r, lo, hi) in [
        ("bete", 3, 7),
        ("bete-ace-high", 3, 7),
        ("beast", 3, 5),
        ("beste-boer", 3, 6),
        ("lanterlui", 3, 7),
        ("bester-bube", 3, 6),
        ("mouche", 3, 6),
        ("mistigri", 3, 6),
        ("loo", 3, 10),
        ("rams", 3, 5),
    ] {
        v.extend((lo..=hi).map(|n| (r, n)));
    }
    v
}

const SEED: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

#[test]
fn simulate_then_replay_every_ruleset_and_seat_count() {
    for (ruleset, seats) in tables() {
        let out = temp(&format!("{ruleset}-{seats}.json"));
        let n = seats.to_string();
        let mut args = vec![
            "simulate",
            "--ruleset",
            ruleset,
            "--seats",
            &n,
            "--seed",
            SEED,
            "--rounds",
            "1",
            "--bots",
            "heuristic,random",
            "--out",
        ];
        let path = out.to_string_lossy().to_string();
        args.push(&path);
        if seats == 2 {
            args.extend(["--config", "two_players=true"]);
        }
        let sim = bete(&args);
        assert!(
            sim.status.success(),
            "{ruleset}/{seats}: {}",
            String::from_utf8_lossy(&sim.stderr)
        );
        let record: Value =
            serde_json::from_str(&std::fs::read_to_string(&out).expect("record")).expect("JSON");
        assert_eq!(record["format"], "bete-record/1");
        assert_eq!(record["ruleset"], ruleset);
        assert_eq!(record["seats"], seats);
        assert_eq!(record["seed"], SEED);
        assert_eq!(
            record["config"]["rounds"], 1,
            "{ruleset}/{seats}: full effective config"
        );

        let report = json(&bete(&["replay", &path, "--json"]));
        let balances: Vec<i64> =
            serde_json::from_value(report["balances"].clone()).expect("balances");
        assert_eq!(balances.len(), seats as usize);
        assert_eq!(report["balances"], record["balances"], "{ruleset}/{seats}");
        assert_eq!(
            report["on_table"], 0,
            "{ruleset}/{seats}: the match is over"
        );
        assert_eq!(report["match_over"], true);
        assert_eq!(balances.iter().sum::<i64>(), 0);
        let deals = report["deals"].as_array().expect("deals");
        assert_eq!(
            deals.len(),
            record["deals"].as_array().expect("deals").len()
        );
        assert!(
            deals.len() >= seats as usize,
            "{ruleset}/{seats}: at least one round"
        );
        for d in deals {
            assert_eq!(
                d["tricks"].as_array().expect("tricks").len(),
                seats as usize
            );
        }
        let _ = std::fs::remove_file(&out);
    }
}

#[test]
fn simulate_to_stdout_pipes_into_replay() {
    let sim = bete(&[
        "simulate",
        "--ruleset",
        "beast",
        "--seats",
        "4",
        "--seed",
        SEED,
    ]);
    assert!(sim.status.success());
    let mut child = Command::new(BETE)
        .args(["replay", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&sim.stdout).expect("write");
    }
    let report = json(&child.wait_with_output().expect("replay"));
    assert_eq!(report["ruleset"], "beast");
    // Default config: two rounds of four deals (Beast ends at deal R).
    assert_eq!(report["deals"].as_array().expect("deals").len(), 8);
}

#[test]
fn the_same_seed_gives_the_same_record() {
    let a = bete(&[
        "simulate",
        "--ruleset",
        "bester-bube",
        "--seats",
        "5",
        "--seed",
        SEED,
        "--bots",
        "random",
    ]);
    let b = bete(&[
        "simulate",
        "--ruleset",
        "bester-bube",
        "--seats",
        "5",
        "--seed",
        SEED,
        "--bots",
        "random",
    ]);
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    let c = bete(&[
        "simulate",
        "--ruleset",
        "bester-bube",
        "--seats",
        "5",
        "--seed",
        SEED,
        "--bots",
        "heuristic",
    ]);
    assert_ne!(a.stdout, c.stdout, "the bots decide the play");
    // Without --seed a fresh seed is chosen and written into the record.
    let d: Value =
        serde_json::from_slice(&bete(&["simulate", "--ruleset", "bete", "--seats", "3"]).stdout)
            .expect("JSON");
    assert_eq!(d["seed"].as_str().expect("seed").len(), 64);
}

#[test]
fn deals_stops_early_and_rounds_overrides_the_config() {
    let out = bete(&[
        "simulate",
        "--ruleset",
        "lanterlui",
        "--seats",
        "5",
        "--seed",
        SEED,
        "--deals",
        "3",
    ]);
    let record: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(record["deals"].as_array().expect("deals").len(), 3);
    let path = temp("deals.json");
    std::fs::write(&path, &out.stdout).expect("write");
    let report = json(&bete(&["replay", &path.to_string_lossy(), "--json"]));
    assert_eq!(report["match_over"], false);
    assert_eq!(
        report["deal"], 3,
        "the fourth deal has started (its antes are taken)"
    );
    assert_eq!(report["deals"].as_array().expect("deals").len(), 3);
    assert_eq!(report["balances"], record["balances"]);
    let sum: i64 = report["balances"]
        .as_array()
        .expect("b")
        .iter()
        .map(|v| v.as_i64().expect("i64"))
        .sum();
    assert_eq!(sum + report["on_table"].as_i64().expect("on_table"), 0);
    let _ = std::fs::remove_file(&path);

    let out = bete(&[
        "simulate",
        "--ruleset",
        "beast",
        "--seats",
        "3",
        "--seed",
        SEED,
        "--rounds",
        "3",
    ]);
    let record: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(record["config"]["rounds"], 3);
    assert_eq!(record["deals"].as_array().expect("deals").len(), 9);

    let both = bete(&[
        "simulate",
        "--ruleset",
        "beast",
        "--seats",
        "3",
        "--deals",
        "2",
        "--rounds",
        "1",
    ]);
    assert_eq!(
        both.status.code(),
        Some(2),
        "--deals and --rounds exclude each other"
    );
}

#[test]
fn config_pairs_are_applied_and_checked() {
    let out = bete(&[
        "simulate",
        "--ruleset",
        "bete",
        "--seats",
        "4",
        "--seed",
        SEED,
        "--config",
        "fiche_value=10",
        "--config",
        "contre=disabled",
        "--deals",
        "1",
    ]);
    let record: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(record["config"]["fiche_value"], 10);
    assert_eq!(record["config"]["contre"], "disabled");

    let bad = bete(&[
        "simulate",
        "--ruleset",
        "bete",
        "--seats",
        "4",
        "--config",
        "fiche_value=7",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("fiche_value") && err.contains("10"), "{err}");

    let bad = bete(&["simulate", "--ruleset", "beast", "--seats", "6"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("6 seats"));

    let bad = bete(&["simulate", "--ruleset", "whist", "--seats", "4"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("whist"));

    let bad = bete(&[
        "simulate",
        "--ruleset",
        "bete",
        "--seats",
        "4",
        "--bots",
        "random,greedy",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("greedy"));
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    for sub in ["simulate", "replay"] {
        let out = bete(&[sub, "--help"]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Example"), "{sub} --help: {text}");
        assert!(
            text.contains(&format!("bete {sub}")),
            "{sub} --help: {text}"
        );
    }
}

#[test]
fn replay_prints_readable_lines_and_simulate_says_what_it_wrote() {
    let path = temp("readable.json");
    let file = path.to_string_lossy().to_string();
    let sim = bete(&[
        "simulate",
        "--ruleset",
        "beast",
        "--seats",
        "4",
        "--seed",
        SEED,
        "--out",
        &file,
    ]);
    assert!(sim.status.success());
    assert!(sim.stdout.is_empty(), "the record went to the file");
    let said = String::from_utf8_lossy(&sim.stderr);
    assert!(
        said.contains(&format!("wrote {file}"))
            && said.contains("beast")
            && said.contains("8 deals"),
        "simulate says what it wrote: {said}"
    );
    assert!(
        said.contains(&format!("replay {file}")),
        "and how to replay it: {said}"
    );

    let out = bete(&["replay", &file]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "beast, 4 seats: match over after 8 deals",
        "{text}"
    );
    assert_eq!(
        lines.len(),
        1 + 8 + 1,
        "a heading, a line a deal, the balances: {text}"
    );
    assert!(
        lines[1].starts_with("deal  1  dealer 0") && lines[1].contains("tricks "),
        "{text}"
    );
    let report = json(&bete(&["replay", &file, "--json"]));
    let balances: Vec<String> = report["balances"]
        .as_array()
        .expect("balances")
        .iter()
        .enumerate()
        .map(|(seat, b)| format!("seat {seat} {:+}", b.as_i64().expect("jetons")))
        .collect();
    assert_eq!(lines[9], format!("balances: {}", balances.join(", ")));
    assert!(!text.contains('{'), "no JSON without --json: {text}");
    let _ = std::fs::remove_file(&path);
}
