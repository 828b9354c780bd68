//! `bete replay` exit statuses and error lines, through the real binary, on the shared bad
//! vectors (tests/vectors/bad) and on files that cannot be read.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BETE: &str = env!("CARGO_BIN_EXE_bete");

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

#[test]
fn bad_vectors_exit_with_their_status_and_line() {
    let bad = vectors().join("bad");
    let mut seen = 0;
    for entry in std::fs::read_dir(&bad).expect("tests/vectors/bad") {
        let path = entry.expect("entry").path();
        let name = path.to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".input.json") else {
            continue;
        };
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{stem}.expected.json")).expect("expected"),
        )
        .expect("JSON");
        let out = Command::new(BETE)
            .arg("replay")
            .arg(&path)
            .output()
            .expect("run");
        assert_eq!(
            out.status.code().map(i64::from),
            expected["exit"].as_i64(),
            "{name}"
        );
        assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.trim_end_matches('\n'),
            expected["stderr"].as_str().expect("stderr"),
            "{name}"
        );
        if expected["exit"] == 1 {
            assert!(
                stderr.starts_with("illegal action at deal "),
                "{name}: {stderr}"
            );
        }
        seen += 1;
    }
    assert!(seen >= 20, "{seen} bad vectors");
}

#[test]
fn good_vectors_exit_zero_with_their_expected_output() {
    let mut seen = 0;
    for entry in std::fs::read_dir(vectors()).expect("tests/vectors") {
        let path = entry.expect("entry").path();
        let name = path.to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".record.json") else {
            continue;
        };
        let out = Command::new(BETE)
            .arg("replay")
            .arg(&path)
            .arg("--json")
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{stem}.expected.json")).expect("expected"),
        )
        .expect("JSON");
        assert_eq!(got, want, "{name}");
        seen += 1;
    }
    assert!(seen >= 20);
}

#[test]
fn an_unreadable_file_is_malformed() {
    let out = Command::new(BETE)
        .args(["replay", "/nonexistent/record.json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/record.json"));
}

#[test]
fn an_illegal_action_exits_1_with_the_exact_line() {
    // A hand-written record: seat 2 speaks first although seat 1 is eldest.
    let record = r#"{"format":"bete-record/1","ruleset":"bete","rules_version":1,"config":{},"seats":5,
        "first_dealer":0,"seed":"0000000000000000000000000000000000000000000000000000000000000000",
        "deals":[{"dealer":0,"actions":[{"seat":1,"action":"pass"},{"seat":1,"action":"pass"}]}]}"#;
    let path = std::env::temp_dir().join(format!("bete-cli-illegal-{}.json", std::process::id()));
    std::fs::write(&path, record).expect("write");
    let out = Command::new(BETE)
        .arg("replay")
        .arg(&path)
        .output()
        .expect("run");
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "illegal action at deal 0, action 1 (seat 1): not your turn: seat 2 is to act\n"
    );
}
