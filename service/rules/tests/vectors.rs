//! The shared test vectors of `tests/vectors/` (see its README): every good record replays to
//! exactly its `.expected.json` (the JSON `bete replay` prints), and every bad record fails with
//! its expected exit status and standard-error line.

use std::path::{Path, PathBuf};

use bete_rules::RulesetId;
use bete_rules::record::{Record, Report, replay_json};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/vectors exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn good_records_replay_to_their_expected_output() {
    let records = files(&dir(), ".record.json");
    assert!(records.len() >= 20, "only {} vectors", records.len());
    let mut rulesets = std::collections::BTreeSet::new();
    for path in records {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = read(&path);
        let game = replay_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        rulesets.insert(game.ruleset());
        let got: Value = serde_json::from_str(&Report::of(&game).to_json()).expect("report JSON");
        let expected_path = PathBuf::from(
            path.to_string_lossy()
                .replace(".record.json", ".expected.json"),
        );
        let expected: Value = serde_json::from_str(&read(&expected_path)).expect("expected JSON");
        assert_eq!(
            got,
            expected,
            "{name}: replay output differs from {}",
            expected_path.display()
        );

        // Writing the replayed match gives a record that replays the same way.
        let again = replay_json(&Record::from_game(&game).to_json())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(again.balances(), game.balances(), "{name}");
        assert_eq!(again.log(), game.log(), "{name}");
        assert_eq!(again.summaries(), game.summaries(), "{name}");
        // A record that gives balances and is complete is self-consistent.
        let json: Value = serde_json::from_str(&text).expect("JSON");
        if let Some(b) = json.get("balances") {
            assert_eq!(b, &got["balances"], "{name}");
        }
    }
    assert_eq!(
        rulesets.len(),
        RulesetId::ALL.len(),
        "every ruleset has a vector"
    );
}

#[test]
fn bad_records_fail_with_their_expected_error() {
    let bad = dir().join("bad");
    let inputs = files(&bad, ".input.json");
    assert!(inputs.len() >= 20, "only {} bad vectors", inputs.len());
    let (mut illegal, mut malformed) = (0, 0);
    for path in inputs {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let expected: Value = serde_json::from_str(&read(&PathBuf::from(
            path.to_string_lossy()
                .replace(".input.json", ".expected.json"),
        )))
        .expect("expected JSON");
        let err = match replay_json(&read(&path)) {
            Ok(_) => panic!("{name}: replayed without error"),
            Err(e) => e,
        };
        assert_eq!(
            err.exit_code() as i64,
            expected["exit"].as_i64().expect("exit"),
            "{name}: {err}"
        );
        assert_eq!(
            err.to_string(),
            expected["stderr"].as_str().expect("stderr"),
            "{name}"
        );
        match err.exit_code() {
            1 => illegal += 1,
            _ => malformed += 1,
        }
    }
    assert!(
        illegal >= 5 && malformed >= 10,
        "{illegal} illegal, {malformed} malformed"
    );
}
