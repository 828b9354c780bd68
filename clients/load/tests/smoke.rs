//! A short in-process run: the harness plays real matches against the real server library over
//! loopback gRPC, stops by itself, and its report has the documented shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

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
        "60s",
        "--until-matches",
        "1",
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
    let report = tokio::time::timeout(
        Duration::from_secs(120),
        run(&opts, "bete-load (test)".into()),
    )
    .await
    .expect("the harness stops by itself")
    .expect("the run succeeds");
    // The window ends with the first finished match (60 s the cap), so a slow machine makes
    // the run longer, not the assertions below false; the 120 s timeout above is the bound.
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
        "the window lasts until a match ends"
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
        "60s",
        "--until-matches",
        "1",
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
        "the window lasts until a match ends"
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

/// Ladder mode: bots enter a ladder the harness declares, hold their WatchBot streams, and play
/// only what the server's scheduler seats them at; the report counts the ladder's tables and
/// rated matches and times every seating from the bot's free slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladder_run_plays_scheduled_tables_and_times_the_seatings() {
    let opts = Options::try_parse_from([
        "bete-load",
        "--ladder",
        "--bots",
        "9",
        "--seats",
        "3",
        "--duplicate",
        "false",
        "--duration",
        "60s",
        "--until-matches",
        "4",
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
    assert_eq!(report.errors.total, 0, "{:?}", report.errors);
    assert_eq!(report.stream.event_gaps, 0);
    assert_eq!(report.stream.event_duplicates, 0);
    assert!(report.moves > 0);
    assert_eq!(report.settings.bots, 9);
    let l = report.ladder.as_ref().expect("ladder figures");
    assert_eq!((l.ladder_id.as_str(), l.bots, l.capacity), ("load", 9, 1));
    // Every bot was seated during setup: 9 bots make three 3-seat tables.
    assert_eq!(l.bots_seated_in_setup, 9);
    assert_eq!(l.enter_to_first_seated_ms.count, 9);
    assert!(
        l.tables_finished >= 4,
        "the window lasts until four tables end"
    );
    assert_eq!(l.tables_finished, report.matches_finished);
    // Single tables: each finished table is a rated match on WatchLadderResults.
    assert!(l.sets_rated >= 1, "{l:?}");
    // Every seating in the window was timed from a free slot, and split by kind (four tables
    // finished where setup seated three: at least one was seated in the window).
    let f = &l.free_to_seated_ms;
    assert!(f.count >= 1 && f.count == l.seated, "{l:?}");
    assert_eq!(
        f.count,
        l.new_match_seated_ms.count + l.next_rotation_seated_ms.count
    );
    assert_eq!(
        l.next_rotation_seated_ms.count, 0,
        "single tables have no rotations"
    );
    assert!(f.p50 <= f.p99 && f.p99 <= f.max, "{f:?}");
    let v = serde_json::to_value(&report).unwrap();
    for key in [
        "tables_per_min",
        "sets_per_min",
        "free_to_seated_ms",
        "waiting_at_end",
    ] {
        assert!(v["ladder"].get(key).is_some(), "missing ladder.{key}");
    }
    let md = report.markdown();
    assert!(md.contains("| ladder: free → seated |"), "{md}");
}

/// A ladder without house entrants needs at least a table's worth of bots.
#[tokio::test]
async fn a_ladder_too_small_to_seat_a_table_fails_before_anything_starts() {
    let opts = Options::try_parse_from([
        "bete-load",
        "--ladder",
        "--bots",
        "2",
        "--seats",
        "4",
        "--embed",
        "inproc",
    ])
    .unwrap();
    let err = run(&opts, String::new()).await.unwrap_err();
    assert!(err.to_string().contains("--house"), "{err}");
}
