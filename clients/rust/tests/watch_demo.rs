//! `bete demo` from nothing: its own server, a whole match shown, balances and the record.

use std::process::Command;

#[test]
fn bete_demo_shows_a_whole_match_and_writes_the_record() {
    let out = Command::new(env!("CARGO_BIN_EXE_bete"))
        .args(["demo", "--ruleset", "beast", "--seats", "3", "--pace", "0"])
        .env_remove("BETE_TOKEN")
        .output()
        .expect("run bete demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bete demo failed: {stderr}");
    assert!(stdout.contains("match over; final balances"), "{stdout}");
    assert!(stdout.contains("Final balances:"), "{stdout}");
    let path = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Game record written to "))
        .expect("the record's path is printed");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("record file")).expect("json");
    let balances = record["balances"]
        .as_array()
        .expect("final balances in the record");
    assert_eq!(balances.len(), 3);
    // The balances printed are the record's.
    for (seat, balance) in balances.iter().enumerate() {
        let b = balance.as_i64().expect("int");
        let shown = if b > 0 {
            format!("+{b}")
        } else {
            b.to_string()
        };
        assert!(
            stdout.contains(&format!("seat {seat}: {shown}")),
            "seat {seat} {shown}: {stdout}"
        );
    }
    // The demo's temporary folder holds the server data and the record; clean it up.
    if let Some(dir) = std::path::Path::new(path).parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}
