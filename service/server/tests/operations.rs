//! Operating the server: health while draining, the watchers gauge, and the binary's flags and
//! their `BETE_*` environment variables (the names `deploy/base/configmap.yaml` uses).
#![allow(clippy::unwrap_used)]

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use bete_api::pb;
use common::*;
use tonic::Code;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

async fn waiting_table(bot: &mut Bot) -> String {
    bot.create(pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        ..Default::default()
    })
    .await
}

fn check() -> HealthCheckRequest {
    HealthCheckRequest {
        service: String::new(),
    }
}

/// On shutdown, health turns NOT_SERVING while the listener still accepts and open streams still
/// flow (the drain grace); then streams end with UNAVAILABLE, and `run` returns even though a
/// client's Health/Watch stream would never end by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_not_serving_while_draining() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.drain_grace = Duration::from_secs(3);
        c.drain_timeout = Duration::from_secs(1);
    })
    .await;
    let addr = srv.addr;
    let ch = srv.channel().await;
    let mut health = HealthClient::new(ch.clone());
    assert_eq!(
        health.check(check()).await.unwrap().into_inner().status(),
        ServingStatus::Serving
    );
    let mut health_watch = health.watch(check()).await.unwrap().into_inner();
    assert_eq!(
        health_watch.message().await.unwrap().unwrap().status(),
        ServingStatus::Serving
    );
    let mut me = register(&ch, "drain-health").await;
    let id = waiting_table(&mut me).await;
    let mut w = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id,
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(matches!(
        w.message().await.unwrap().unwrap().kind,
        Some(pb::watch_table_response::Kind::Snapshot(_))
    ));

    let stopping = tokio::spawn(srv.stop());
    let m = timeout(10, health_watch.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(m.status(), ServingStatus::NotServing);
    // A new connection is still accepted, and told NOT_SERVING.
    let fresh = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let status = HealthClient::new(fresh)
        .check(check())
        .await
        .unwrap()
        .into_inner()
        .status();
    assert_eq!(status, ServingStatus::NotServing);
    // The game stream was still open; it ends with UNAVAILABLE once the grace is over.
    let end = timeout(20, async {
        loop {
            match w.message().await {
                Ok(Some(_heartbeat)) => continue,
                Ok(None) => panic!("the stream ended without a status"),
                Err(e) => break e,
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(end.code(), Code::Unavailable);
    assert_eq!(reason(&end), "SHUTTING_DOWN");
    timeout(20, stopping)
        .await
        .expect("run did not return with a Health/Watch stream open")
        .unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed after run returns"
    );
    drop(health_watch);
}

/// A closed WatchTable stream leaves `bete_watchers` at once, not at the table's next event (this
/// table has none: nobody joins it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_watch_stream_leaves_the_watchers_gauge() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| c.metrics_addr = Some(metrics)).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "gauge-bot").await;
    let id = waiting_table(&mut me).await;
    let mut streams = Vec::new();
    for _ in 0..2 {
        let mut w = me
            .client
            .watch_table(pb::WatchTableRequest {
                table_id: id.clone(),
                from_seq: None,
            })
            .await
            .unwrap()
            .into_inner();
        w.message().await.unwrap().unwrap();
        streams.push(w);
    }
    wait_for_gauge(metrics, "bete_watchers", 2).await;
    drop(streams.pop());
    wait_for_gauge(metrics, "bete_watchers", 1).await;
    drop(streams.pop());
    wait_for_gauge(metrics, "bete_watchers", 0).await;
    // A WatchBot stream following two tables counts twice and leaves both at once.
    let other = waiting_table(&mut me).await;
    for t in [&id, &other] {
        me.sit(t, 0).await;
    }
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    s.message().await.unwrap().unwrap();
    wait_for_gauge(metrics, "bete_watchers", 2).await;
    drop(s);
    wait_for_gauge(metrics, "bete_watchers", 0).await;
    srv.stop().await;
}

const ENV_VARS: [&str; 61] = [
    "BETE_LISTEN",
    "BETE_DATA_DIR",
    "BETE_DATABASE_URL",
    "BETE_NODE_ID",
    "BETE_ADVERTISE_ADDR",
    "BETE_LEASE_TTL_SECS",
    "BETE_CLUSTER_SECRET",
    "BETE_METRICS_LISTEN",
    "BETE_LOG_FORMAT",
    "BETE_DEFAULT_DEADLINE_MS",
    "BETE_HEARTBEAT_SECS",
    "BETE_HOUSE_DELAY_MS",
    "BETE_IDLE_UNLOAD_SECS",
    "BETE_MAX_REQUEST_BYTES",
    "BETE_WATCH_BUFFER",
    "BETE_DRAIN_GRACE_SECS",
    "BETE_DRAIN_TIMEOUT_SECS",
    "BETE_WORKER_THREADS",
    "BETE_WEB_LISTEN",
    "BETE_NO_WEB",
    "BETE_HOUSE_TABLES",
    "BETE_ADMIN_TOKEN",
    "BETE_OPEN_SIGNUP",
    "BETE_LADDERS",
    "BETE_WAITING_TTL_SECS",
    "BETE_PREFACE_TIMEOUT_SECS",
    "BETE_MAX_CONNECTIONS",
    "BETE_MAX_CONNECTIONS_PER_ADDRESS",
    "BETE_WEB_MAX_CONNECTIONS",
    "BETE_WEB_MAX_CONNECTIONS_PER_ADDRESS",
    "BETE_WEB_MAX_SUBSCRIPTIONS",
    "BETE_MAX_CONNECTIONS_PER_VERIFIED_ADDRESS",
    "BETE_IDLE_CONNECTION_SECS",
    "BETE_HTTP1_IDLE_SECS",
    "BETE_HTTP1_MAX_REQUESTS",
    "BETE_RATE_AUTH_FAILURES_PER_ADDRESS",
    "BETE_RATE_REFUSALS_PER_ADDRESS",
    "BETE_MAX_OPEN_TABLES_PER_ADDRESS",
    "BETE_MAX_OPEN_TABLES_PER_ACCOUNT",
    "BETE_MAX_OPEN_TABLES",
    "BETE_MAX_BOTS_PER_ADDRESS",
    "BETE_MAX_ACCOUNTS_PER_ADDRESS",
    "BETE_MAX_IN_FLIGHT",
    "BETE_RATE_CALLS_PER_BOT",
    "BETE_RATE_REGISTRATIONS_PER_ADDRESS",
    "BETE_RATE_LADDER_ENTRIES_PER_BOT",
    "BETE_RATE_CREATIONS_PER_BOT",
    "BETE_RATE_CALLS_PER_ACCOUNT",
    "BETE_RATE_CREATIONS_PER_ACCOUNT",
    "BETE_RATE_REGISTRATIONS_PER_ACCOUNT",
    "BETE_RATE_ACCOUNTS_PER_ADDRESS",
    "BETE_MAX_STREAMS_PER_BOT",
    "BETE_MAX_OPEN_TABLES_PER_BOT",
    "BETE_MAX_SEATS_PER_BOT",
    "BETE_TLS_CERT",
    "BETE_TLS_KEY",
    "BETE_TLS_CLIENT_CA",
    "BETE_TLS_CLIENT_AUTH",
    "BETE_TLS_RELOAD_SECS",
    "BETE_PEER_TLS_NAME",
    "BETE_PEER_CA",
];

/// Every flag `--x-y` has the environment variable `BETE_X_Y`, and `--help` says so.
#[test]
fn help_names_the_env_var_of_every_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_bete-server"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let mut flags = 0;
    for line in help.lines() {
        let Some(flag) = line
            .trim_start()
            .strip_prefix("--")
            .and_then(|l| l.split([' ', '<']).next())
        else {
            continue;
        };
        if flag == "help" || flag == "version" {
            continue;
        }
        flags += 1;
        let var = format!("BETE_{}", flag.replace('-', "_").to_uppercase());
        assert!(
            ENV_VARS.contains(&var.as_str()),
            "flag --{flag} has no expected variable"
        );
        assert!(
            help.contains(&format!("[env: {var}")),
            "--help does not name {var} for --{flag}:\n{help}"
        );
    }
    assert_eq!(flags, ENV_VARS.len(), "{help}");
    // The configmap's names are among them.
    let configmap = include_str!("../../../deploy/base/configmap.yaml");
    for line in configmap.lines() {
        if let Some((key, _)) = line.trim().split_once(':')
            && key.starts_with("BETE_")
        {
            assert!(
                ENV_VARS.contains(&key),
                "configmap sets {key}, which bete-server does not read"
            );
        }
    }
}

/// The binary configured only through the configmap's variables: it listens where BETE_LISTEN
/// says, serves metrics on BETE_METRICS_LISTEN, keeps its file in BETE_DATA_DIR, logs JSON and
/// runs BETE_WORKER_THREADS runtime threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_reads_the_configmap_variables() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, metrics) = (free_addr(), free_addr());
    let child = Command::new(env!("CARGO_BIN_EXE_bete-server"))
        .env("BETE_LISTEN", addr.to_string())
        .env("BETE_METRICS_LISTEN", metrics.to_string())
        .env("BETE_DATA_DIR", dir.path())
        .env("BETE_LOG_FORMAT", "json")
        .env("BETE_WORKER_THREADS", "3")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut up = None;
    for _ in 0..200 {
        if let Ok(ch) = Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
        {
            up = Some(ch);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ch = up.expect("bete-server did not listen on BETE_LISTEN");
    register(&ch, "env-bot").await;
    assert!(
        http_get(metrics, "/metrics")
            .await
            .contains("bete_rpc_requests_total")
    );
    assert!(dir.path().join("bete.sqlite3").exists());
    // SIGTERM, then every log line must be a JSON object.
    let pid = child.id().to_string();
    assert!(
        Command::new("sh")
            .args(["-c", &format!("kill -TERM {pid}")])
            .status()
            .unwrap()
            .success()
    );
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success());
    let log = String::from_utf8(out.stderr).unwrap();
    assert!(log.lines().count() >= 2, "{log}");
    for line in log.lines() {
        assert!(
            line.starts_with('{') && line.ends_with('}'),
            "not JSON: {line}"
        );
    }
    // The runtime was sized by BETE_WORKER_THREADS, not by the cores.
    assert!(
        log.lines()
            .any(|l| l.contains("runtime started") && l.contains("\"workers\":3")),
        "{log}"
    );
}
