//! `--targets A,B`: the harness spreads its tables over several nodes, each table created,
//! joined and played on one node. Two real servers here (each on its own SQLite: no call needs
//! forwarding, so any nodes do), and each ends up with tables of its own, all played through.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::table_service_client::TableServiceClient;
use bete_load::{Options, run};
use clap::Parser;

/// A real server on a free loopback port, stopped when the returned sender drops.
async fn node(dir: &std::path::Path) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = bete_server::ServerConfig {
        data_dir: dir.to_path_buf(),
        metrics_addr: None,
        web_addr: None,
        house_tables: 0,
        ..bete_server::ServerConfig::default()
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        bete_server::run(listener, config, async move {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    (addr, tx)
}

async fn tables_on(addr: SocketAddr) -> Vec<pb::Table> {
    let mut c = TableServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    c.list_tables(pb::ListTablesRequest {
        page_size: 500,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .tables
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_are_spread_over_every_target() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, _stop_a) = node(d1.path()).await;
    let (b, _stop_b) = node(d2.path()).await;
    let targets = format!("{a},{b}");
    let opts = Options::try_parse_from([
        "bete-load",
        "--targets",
        &targets,
        "--tables",
        "4",
        "--seats",
        "3",
        "--duration",
        "60s",
        "--until-matches",
        "1",
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
    assert_eq!(report.server.mode, "remote");
    assert!(
        report.moves > 0 && report.matches_finished >= 1,
        "{} moves, {} matches finished",
        report.moves,
        report.matches_finished
    );
    assert_eq!(report.errors.total, 0, "{:?}", report.errors);
    assert_eq!(report.stream.event_gaps, 0);
    // No error: every bot played on the node it registered with (the two stores know nothing
    // of each other's bots). And each node holds tables of its own (2 of the 4 slots each).
    for addr in [a, b] {
        let tables = tables_on(addr).await;
        assert!(tables.len() >= 2, "{addr}: {} tables", tables.len());
    }
}
