//! A store-only load probe (not a test: `#[ignore]`, prints figures, asserts nothing about time).
//!
//! `BETE_PROBE_RATE=5000 cargo test --release -p bete-store --lib probe -- --ignored --nocapture`
//!
//! 1,000 tables (ids shaped like the server's), each appending game-shaped `Action` entries one
//! at a time, as a table actor does; a global pacer holds the total rate (0: closed loop). Prints
//! appends/s, append latency percentiles and the CPU of the process and of the SQLite threads.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{LogEntry, Occupant, SeatRow, SqliteStore, Store, TableRow, TableState, Visibility};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU ticks (user + system) per thread name, summed.
fn thread_ticks() -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
        let name = comm.trim().to_string();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => *v += ticks,
            None => out.push((name, ticks)),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load probe: run by hand with --ignored --nocapture"]
async fn append_load() {
    let tables = env("BETE_PROBE_TABLES", 1000) as usize;
    let rate = env("BETE_PROBE_RATE", 5000);
    let secs = env("BETE_PROBE_SECS", 5);
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path()).await.unwrap());
    let config = r#"{"rounds":10,"ante":1,"bete_cap":0,"deadline_ms":30000,"talon":true}"#;
    let mut ids = Vec::new();
    for i in 0..tables {
        let id = format!("t_{:016x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        store
            .create_table(
                TableRow {
                    id: id.clone(),
                    ruleset: "bete".into(),
                    seats: 5,
                    config_json: config.into(),
                    seed: "ab".repeat(32),
                    first_dealer: 0,
                    deadline_ms: 30_000,
                    visibility: Visibility::Listed,
                    state: TableState::Waiting,
                    last_seq: 0,
                    created_by: "b_0123456789abcdef".into(),
                    created_at_ms: 1,
                    seed_chosen: true,
                    ladder: None,
                },
                (0..5)
                    .map(|s| SeatRow {
                        seat: s,
                        occupant: Occupant::Empty,
                        name: String::new(),
                        strikes: 0,
                    })
                    .collect(),
            )
            .await
            .unwrap();
        ids.push(id);
    }
    let start = Instant::now() + Duration::from_millis(200);
    let end = start + Duration::from_secs(secs);
    let next = Arc::new(std::sync::Mutex::new(start));
    let gap = 1_000_000_000u64
        .checked_div(rate)
        .map_or(Duration::ZERO, Duration::from_nanos);
    let t0 = thread_ticks();
    let mut joins = Vec::new();
    for id in ids {
        let store = store.clone();
        let next = next.clone();
        joins.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut seq = 0u64;
            loop {
                let slot = {
                    let mut n = next.lock().unwrap();
                    let now = Instant::now();
                    let slot = (*n).max(now.min(start));
                    *n = slot + gap;
                    slot
                };
                if slot >= end || Instant::now() >= end {
                    break;
                }
                tokio::time::sleep_until(slot.into()).await;
                let entry = LogEntry::Action {
                    seat: (seq % 5) as u8,
                    action: "play 10H".into(),
                    auto: false,
                    request_id: Some(format!("r-{seq:08}-0123456789abcdef")),
                    time_ms: 1_700_000_000_000 + seq as i64,
                };
                let sent = Instant::now();
                store
                    .append(id.clone(), seq, entry, seq * 3 + 2)
                    .await
                    .unwrap();
                lat.push(sent.elapsed().as_micros() as u64);
                seq += 1;
            }
            lat
        }));
    }
    let mut lat = Vec::new();
    for j in joins {
        lat.extend(j.await.unwrap());
    }
    let wall = start.elapsed().as_secs_f64().min(secs as f64 + 0.2);
    let t1 = thread_ticks();
    lat.sort_unstable();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)] as f64 / 1000.0;
    let n = lat.len() as f64;
    println!(
        "tables {tables} rate {rate}: {:.0} appends/s; latency ms p50 {:.2} p90 {:.2} p99 {:.2} p99.9 {:.2} max {:.2}",
        n / wall,
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(0.999),
        pct(1.0)
    );
    let mut total = 0;
    for (name, after) in &t1 {
        let before = t0.iter().find(|(b, _)| b == name).map_or(0, |(_, v)| *v);
        let d = after - before;
        total += d;
        // A tick is 10 ms.
        println!("  {name:<18} {:.1} us CPU/append", d as f64 * 10_000.0 / n);
    }
    println!(
        "  all threads        {:.1} us CPU/append",
        total as f64 * 10_000.0 / n
    );
}
