//! A short in-process run: the harness plays real matches against the real server library over
//! loopback gRPC, stops by itself, and its report has the documented shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bete_load::{Options, run};
use clap::Parser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_inproc_run_stops_by_itself_and_reports_every_field() {
    let opts = Options::try_parse_from([
        "bete-load",
        "--tables",
        "3",
        "--seats",
        "3",
        "--duration",
        "3s",
        "--embed",
        "inproc",
        "--connections",
        "2",
        "--ceiling-duration",
        "500ms",
        "--drain",
        "3s",
        "--quiet",
        "--config",
        "rounds=1",
    ])
    .unwrap();
    let started = Instant::now();
    let report = tokio::time::timeout(
        Duration::from_secs(120),
        run(&opts, "bete-load (test)".into()),
    )
    .await
    .expect("the harness stops by itself")
    .expect("the run succeeds");
    let took = started.elapsed();
    // Setup, a 3 s window, a drain of at most 3 s and the server stop: well under a minute.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(report.stopped_by_itself, "drain or server stop timed out");
    assert_eq!(report.server.mode, "inproc");

    // Real play happened, and whole matches ended and were replaced.
    assert!(report.moves > 0);
    assert!(
        report.events >= report.moves,
        "every move yields at least one event per seat"
    );
    assert!(
        report.matches_finished >= 1,
        "rounds=1 at 3 seats ends within seconds"
    );
    assert!(
        report.tables_created > 3,
        "a finished table is replaced by a new one"
    );
    assert_eq!(report.errors.total, 0, "{:?}", report.errors);
    assert_eq!(report.stream.event_gaps, 0);
    assert_eq!(report.stream.event_duplicates, 0);
    assert!((report.moves_per_s - report.moves as f64 / report.window_s).abs() < 1e-9);

    let ack = &report.latency_ms["submit_to_ack"];
    let all = &report.latency_ms["submit_to_event_at_every_seat"];
    assert!(ack.count > 0 && all.count > 0);
    for p in [ack, all] {
        assert!(
            p.p50 > 0.0 && p.p50 <= p.p90 && p.p90 <= p.p99 && p.p99 <= p.p999 && p.p999 <= p.max,
            "{p:?}"
        );
    }
    assert!(report.ceiling_rps > 0.0);
    let ratio = report.ratio_to_ceiling.unwrap();
    assert!((ratio - report.moves_per_s / report.ceiling_rps).abs() < 1e-9);
    // In-process the server's CPU is read from its own threads.
    assert!(report.server_cpu_s.unwrap() > 0.0);
    assert!(report.server_cpu_us_per_move.unwrap() > 0.0);

    // The JSON carries every documented key; the Markdown renders.
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("r.json");
    report.write(&json_path).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    for key in [
        "command",
        "versions",
        "machine",
        "moves_per_s",
        "events_per_s",
        "latency_ms",
        "errors",
        "ceiling_rps",
        "ratio_to_ceiling",
        "matches_finished",
        "server_cpu_s",
        "server_peak_rss_kib",
        "server_cpu_us_per_move",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for path in ["submit_to_ack", "submit_to_event_at_every_seat"] {
        for q in ["p50", "p90", "p99", "p999", "max"] {
            assert!(
                v["latency_ms"][path][q].is_number(),
                "latency_ms.{path}.{q}"
            );
        }
    }
    assert!(v["errors"]["by_code"].is_object() && v["errors"]["by_reason"].is_object());
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    let md_path = dir.path().join("r.md");
    report.write(&md_path).unwrap();
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(
        md.starts_with("# bete-load report") && md.contains("| submit_to_ack |"),
        "{md}"
    );
}

/// The same run with `--submit stream`: whole matches end with every move sent on SubmitActions
/// streams, no error, and the report says which path was measured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_submitting_on_streams_plays_whole_matches() {
    let opts = Options::try_parse_from([
        "bete-load",
        "--tables",
        "3",
        "--seats",
        "3",
        "--duration",
        "3s",
        "--embed",
        "inproc",
        "--connections",
        "2",
        "--ceiling-duration",
        "0s",
        "--drain",
        "3s",
        "--quiet",
        "--config",
        "rounds=1",
        "--submit",
        "stream",
    ])
    .unwrap();
    let report = tokio::time::timeout(
        Duration::from_secs(120),
        run(&opts, "bete-load (test)".into()),
    )
    .await
    .expect("the harness stops by itself")
    .expect("the run succeeds");
    assert!(report.stopped_by_itself);
    assert_eq!(report.submit, bete_load::cli::Submit::Stream);
    assert!(report.moves > 0);
    assert!(
        report.matches_finished >= 1,
        "rounds=1 at 3 seats ends within seconds"
    );
    assert!(report.stream.submit_streams_opened >= 1);
    assert_eq!(report.errors.total, 0, "{:?}", report.errors);
    assert_eq!(report.stream.event_gaps, 0);
    assert!(report.latency_ms["submit_to_ack"].count > 0);
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(v["submit"], "stream");
}

#[tokio::test]
async fn bad_options_fail_before_anything_starts() {
    let opts =
        Options::try_parse_from(["bete-load", "--ruleset", "poker", "--embed", "inproc"]).unwrap();
    let err = run(&opts, String::new()).await.unwrap_err();
    assert!(err.to_string().contains("unknown ruleset"), "{err}");
}

/// More stream-submitting bots on a connection than the server's stream limit allows one
/// SubmitActions stream each: refused up front (it would stall), with what to change.
#[tokio::test]
async fn too_many_stream_bots_per_connection_fail_before_anything_starts() {
    let opts = Options::try_parse_from([
        "bete-load",
        "--tables",
        "20000",
        "--connections",
        "1",
        "--submit",
        "stream",
        "--embed",
        "inproc",
    ])
    .unwrap();
    let err = run(&opts, String::new()).await.unwrap_err();
    assert!(err.to_string().contains("--connections"), "{err}");
}
