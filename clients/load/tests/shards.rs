//! `--shard I/N` and `bete-load merge`, as a hosted deployment's indexed Job uses them: three
//! real `bete-load` processes, shards 0/3, 1/3 and 2/3 of one load, at once against a
//! three-node cluster on one real PostgreSQL (nodes in this process, real gRPC over loopback),
//! with open signup off and the bots under account tokens read from a file; then `bete-load
//! merge` of their three reports (one of them a "pod log": the JSON line among the summary),
//! checked against the shards': moves summed, histogram counts summed, the maximum the largest,
//! percentiles within the shards' range, the window their union. A shard run again reuses its
//! bots instead of filling the account. Needs BETE_TEST_DATABASE_URL (scripts/pg.sh sets it;
//! scripts/test.sh runs the workspace's tests through it); skipped with a message without.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bete_api::pb;
use bete_api::pb::account_service_client::AccountServiceClient;
use bete_load::Report;
use bete_load::merge::read_report;
use bete_load::stats::decode_histogram;
use sqlx::Connection;

const ADMIN: &str = "the-operators-secret-for-this-test";
const PATHS: [&str; 2] = ["submit_to_ack", "submit_to_event_at_every_seat"];

/// A database of its own on the test server, or `None` (skipped) without one.
async fn fresh_database() -> Option<String> {
    let Ok(base) = std::env::var("BETE_TEST_DATABASE_URL") else {
        eprintln!(
            "SKIPPED (PostgreSQL): BETE_TEST_DATABASE_URL is not set; \
             run through `bash scripts/pg.sh cargo test ...` (scripts/test.sh does)"
        );
        return None;
    };
    let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let name = format!("bete_load_{}_{}", std::process::id(), nanos % 1_000_000_000);
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let (head, _) = base.rsplit_once('/').unwrap();
    Some(format!("{head}/{name}"))
}

/// A node of the cluster on a free loopback port; stops when the sender drops.
async fn node(
    url: &str,
    id: &str,
    dir: &Path,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = bete_server::ServerConfig {
        data_dir: dir.to_path_buf(),
        database_url: Some(url.to_string()),
        node_id: Some(id.to_string()),
        advertise_addr: Some(addr.to_string()),
        cluster_secret: Some("cluster-secret-of-the-test".into()),
        metrics_addr: None,
        web_addr: None,
        house_tables: 0,
        admin_token: Some(ADMIN.into()),
        open_signup: false,
        drain_timeout: Duration::from_secs(2),
        ..bete_server::ServerConfig::default()
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        bete_server::run(listener, config, async move {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    (addr, tx, task)
}

fn bearer<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    r
}

async fn accounts(addr: SocketAddr) -> AccountServiceClient<tonic::transport::Channel> {
    AccountServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

/// The bots of the account of `token`, by name.
async fn bot_names(addr: SocketAddr, token: &str) -> Vec<String> {
    let mut names: Vec<String> = accounts(addr)
        .await
        .list_account_bots(bearer(pb::ListAccountBotsRequest {}, token))
        .await
        .unwrap()
        .into_inner()
        .bots
        .into_iter()
        .map(|b| b.name)
        .collect();
    names.sort();
    names
}

/// `bete-load` with the shards' common flags and `extra`; stdout and stderr into `log`.
fn shard(
    shard: &str,
    targets: &str,
    tokens: &Path,
    log: &Path,
    duration: &str,
    extra: &[&str],
) -> std::process::Child {
    let out = std::fs::File::create(log).unwrap();
    Command::new(env!("CARGO_BIN_EXE_bete-load"))
        .args(["--shard", shard, "--targets", targets])
        .args(["--tables", "6", "--seats", "3", "--config", "rounds=1"])
        .args([
            "--duration",
            duration,
            "--drain",
            "3s",
            "--ceiling-duration",
            "300ms",
        ])
        .args(["--connections", "1", "--bots-per-seat", "3", "--quiet"])
        .arg("--account-tokens")
        .arg(tokens)
        .args(extra)
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        .spawn()
        .unwrap()
}

/// Waits for a process, bounded; its log in the panic message if it failed.
fn finished(mut child: std::process::Child, log: &Path) {
    let until = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            assert!(status.success(), "{}: {status}\n{text}", log.display());
            return;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("{} did not stop by itself", log.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn percentiles(r: &Report, path: &str) -> bete_load::stats::Percentiles {
    r.latency_ms.get(path).cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_shards_against_three_nodes_merge_into_one_exact_report() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = Vec::new();
    for id in ["a", "b", "c"] {
        let d = dir.path().join(id);
        std::fs::create_dir_all(&d).unwrap();
        nodes.push(node(&url, id, &d).await);
    }
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.0).collect();
    let targets = addrs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",");

    // Open signup is off: two accounts from the operator, their tokens in a file (a Secret's).
    let mut tokens = Vec::new();
    for name in ["load-one", "load-two"] {
        let r = accounts(addrs[0])
            .await
            .create_account(bearer(
                pb::CreateAccountRequest { name: name.into() },
                ADMIN,
            ))
            .await
            .unwrap()
            .into_inner();
        tokens.push(r.token);
    }
    let token_file = dir.path().join("account-tokens");
    std::fs::write(
        &token_file,
        format!("# the load test's accounts\n{}\n", tokens.join("\n")),
    )
    .unwrap();

    // The three shards at once, as an indexed Job's pods run. Shard 2 reports on stdout, as a
    // pod does, into a log shared with its stderr summary.
    let file = |name: &str| dir.path().join(name);
    let (r0, r1, log2) = (
        file("shard-0.json"),
        file("shard-1.json"),
        file("shard-2.log"),
    );
    let running = [
        (
            shard(
                "0/3",
                &targets,
                &token_file,
                &file("shard-0.log"),
                "3s",
                &["--report", r0.to_str().unwrap()],
            ),
            file("shard-0.log"),
        ),
        (
            shard(
                "1/3",
                &targets,
                &token_file,
                &file("shard-1.log"),
                "3s",
                &["--report", r1.to_str().unwrap()],
            ),
            file("shard-1.log"),
        ),
        (
            shard(
                "2/3",
                &targets,
                &token_file,
                &log2,
                "3s",
                &["--report", "-"],
            ),
            log2.clone(),
        ),
    ];
    for (child, log) in running {
        finished(child, &log);
    }
    let shards: Vec<Report> = [&r0, &r1, &log2]
        .iter()
        .map(|p| read_report(p).unwrap())
        .collect();

    let merged_path = file("merged.json");
    let out = Command::new(env!("CARGO_BIN_EXE_bete-load"))
        .arg("merge")
        .args([&r0, &r1, &log2])
        .arg("--report")
        .arg(&merged_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("merged 3 reports"), "{stderr}");
    let merged = read_report(&merged_path).unwrap();

    // Each shard drove its own share, all of it played, no error.
    for (i, s) in shards.iter().enumerate() {
        let info = s.shard.as_ref().expect("a shard's report says which");
        assert_eq!(
            (info.index, info.count, info.tables_total),
            (i as u32, 3, 6)
        );
        assert_eq!(s.settings.tables, 2, "6 tables over 3 shards");
        assert!(s.moves > 0, "shard {i}: no move");
        assert_eq!(s.errors.total, 0, "shard {i}: {:?}", s.errors);
        assert_eq!(s.stream.event_gaps, 0);
        for path in PATHS {
            assert!(s.histograms.contains_key(path));
        }
    }

    // Counts and rates summed.
    let sum = |f: fn(&Report) -> u64| shards.iter().map(f).sum::<u64>();
    assert_eq!(merged.moves, sum(|r| r.moves));
    assert_eq!(merged.events, sum(|r| r.events));
    assert_eq!(merged.matches_finished, sum(|r| r.matches_finished));
    assert_eq!(merged.tables_created, sum(|r| r.tables_created));
    assert_eq!(merged.errors.total, 0);
    assert_eq!(merged.settings.tables, 6);
    assert_eq!(
        merged.settings.bots,
        shards.iter().map(|r| r.settings.bots).sum::<usize>()
    );
    let rate: f64 = shards.iter().map(|r| r.moves_per_s).sum();
    assert!(
        (merged.moves_per_s - rate).abs() < 1e-6 * rate.max(1.0),
        "{} vs {rate}",
        merged.moves_per_s
    );

    // Histograms merged exactly, not averaged.
    for path in PATHS {
        let m = percentiles(&merged, path);
        let each: Vec<_> = shards.iter().map(|s| percentiles(s, path)).collect();
        assert_eq!(m.count, each.iter().map(|p| p.count).sum::<u64>(), "{path}");
        let max = each.iter().map(|p| p.max).fold(0.0, f64::max);
        assert_eq!(
            m.max, max,
            "{path}: the merged maximum is the largest shard's"
        );
        for (name, pick) in [
            (
                "p50",
                (|p: &bete_load::stats::Percentiles| p.p50) as fn(&_) -> f64,
            ),
            ("p90", |p| p.p90),
            ("p99", |p| p.p99),
        ] {
            let lo = each.iter().map(pick).fold(f64::MAX, f64::min);
            let hi = each.iter().map(pick).fold(0.0, f64::max);
            let v = pick(&m);
            assert!(
                lo <= v && v <= hi,
                "{path} {name}: {v} outside the shards' [{lo}, {hi}]"
            );
        }
        let h = decode_histogram(&merged.histograms[path]).unwrap();
        assert_eq!(
            h.len(),
            m.count,
            "{path}: the merged report carries the summed histogram"
        );
    }

    // The window is the union of the shards'.
    let start = shards
        .iter()
        .filter_map(|r| r.window_started_unix_ms)
        .min()
        .unwrap();
    let end = shards
        .iter()
        .filter_map(|r| r.window_ended_unix_ms)
        .max()
        .unwrap();
    assert_eq!(merged.window_started_unix_ms, Some(start));
    assert_eq!(merged.window_ended_unix_ms, Some(end));
    assert!((merged.window_s - (end - start) as f64 / 1000.0).abs() < 1e-9);
    let m = merged.merged.as_ref().unwrap();
    assert!(m.missing_shards.is_empty());
    assert_eq!(m.reports.len(), 3);
    // How long they ran at once: from the last start to the first end (0 if they did not).
    let last_start = shards
        .iter()
        .filter_map(|r| r.window_started_unix_ms)
        .max()
        .unwrap();
    let first_end = shards
        .iter()
        .filter_map(|r| r.window_ended_unix_ms)
        .min()
        .unwrap();
    let overlap = first_end.saturating_sub(last_start) as f64 / 1000.0;
    assert!((m.window_overlap_s - overlap).abs() < 1e-9, "{m:?}");
    let over_union = merged.moves as f64 / merged.window_s;
    assert!((m.moves_per_s_over_union - over_union).abs() < 1e-6 * over_union.max(1.0));

    // The bots: shard I's are numbered ≡ I mod 3, under its account (shards 0 and 2 share the
    // first of two), no name twice. A shard run again reuses them (tokens rotated).
    let first = bot_names(addrs[1], &tokens[0]).await;
    let second = bot_names(addrs[2], &tokens[1]).await;
    let number = |n: &String| n.strip_prefix("load-").unwrap().parse::<usize>().unwrap();
    assert_eq!(first.len(), 18, "{first:?}");
    assert!(first.iter().all(|n| number(n) % 3 != 1), "{first:?}");
    assert_eq!(second.len(), 9, "{second:?}");
    assert!(second.iter().all(|n| number(n) % 3 == 1), "{second:?}");
    let again = file("again.json");
    let log = file("again.log");
    finished(
        shard(
            "1/3",
            &targets,
            &token_file,
            &log,
            "1s",
            &["--report", again.to_str().unwrap()],
        ),
        &log,
    );
    let again = read_report(&again).unwrap();
    assert!(
        again.moves > 0 && again.errors.total == 0,
        "{:?}",
        again.errors
    );
    assert_eq!(
        bot_names(addrs[0], &tokens[1]).await,
        second,
        "the bots were reused"
    );

    // Merging what does not belong together is refused.
    let out = Command::new(env!("CARGO_BIN_EXE_bete-load"))
        .arg("merge")
        .args([&r1, &file("again.json")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard 1/3 is in both"));
    let garbage = file("garbage.log");
    std::fs::write(&garbage, "error: the pod could not start\n{not json}\n").unwrap();
    for (inputs, why) in [
        (vec![&merged_path, &r0], "already a merged report"),
        (vec![&garbage], "no bete-load JSON report"),
        (vec![&r0, &r0], "given twice"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_bete-load"))
            .arg("merge")
            .args(inputs)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(why),
            "{why}: {stderr}"
        );
    }

    for (_, stop, task) in nodes {
        drop(stop);
        tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .unwrap()
            .unwrap();
    }
}

/// A bad `--shard` is refused before anything starts, naming the flag.
#[test]
fn a_bad_shard_is_refused_naming_the_flag() {
    for bad in ["3/3", "0/0", "two/3"] {
        let out = Command::new(env!("CARGO_BIN_EXE_bete-load"))
            .args(["--shard", bad])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--shard"), "{bad}: {stderr}");
    }
}
