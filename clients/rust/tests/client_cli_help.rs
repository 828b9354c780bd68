//! Every network subcommand has `--help` with an example, and failures say what to do next.

use std::process::Command;

fn bete(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bete"))
        .args(args)
        .env_remove("BETE_TOKEN")
        .env_remove("BETE_SERVER")
        // `cargo test` sets it for this test, and `bete` would take itself to be run by `cargo
        // run` (its hints would say `cargo run -p bete-client --`); here it is a built binary.
        .env_remove("CARGO_PKG_NAME")
        .output()
        .expect("run bete")
}

#[test]
fn every_network_subcommand_has_help_with_an_example() {
    for sub in [
        "bot",
        "watch",
        "play",
        "tables",
        "record",
        "demo",
        "ladder",
        "verify",
        "rotate-token",
    ] {
        let out = bete(&[sub, "--help"]);
        assert!(out.status.success(), "{sub} --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Example"), "{sub} --help: {text}");
        assert!(
            text.contains(&format!("bete {sub}")),
            "{sub} --help: {text}"
        );
    }
}

#[test]
fn an_unreachable_server_names_the_next_step() {
    // Port 1 on loopback refuses connections.
    let out = bete(&["tables", "--server", "http://127.0.0.1:1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bete demo") && err.contains("bete-server"),
        "{err}"
    );
}

#[test]
fn an_unknown_ruleset_lists_the_known_ones() {
    let out = bete(&["play", "--ruleset", "whist"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("beste-boer") && err.contains("lanterlui"),
        "{err}"
    );
}
