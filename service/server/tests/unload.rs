//! A finished table leaves nothing in memory once its actor unloads (issue 26): the registry's
//! handle to the actor goes with it. Before, every finished table's handle (its command channel
//! and facts) stayed in the registry for the life of the server, and the memory of a server
//! under normal play grew by ≈ 8 KiB per match for ever (docs/security.md).
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bete_api::pb;
use common::*;

const MATCHES: usize = 12;

async fn finished(c: &mut Client, id: &str) -> bool {
    let t = describe(c, id).await;
    t.state == pb::TableState::Finished as i32
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_tables_keep_no_handle_after_they_unload() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.metrics_addr = Some(metrics);
        c.idle_unload = Duration::from_millis(200);
    })
    .await;
    let ch = srv.channel().await;
    let mut c = register(&ch, "host").await.client;
    // Whole matches of house bots (they answer at once here): each table is loaded at its
    // creation, plays to its end and unloads.
    let mut ids = Vec::new();
    for _ in 0..MATCHES {
        let t = c
            .create_table(pb::CreateTableRequest {
                ruleset: pb::Ruleset::Bete.into(),
                seats: 3,
                house_bots: (0..3)
                    .map(|s| house(s, pb::HouseBotPolicy::Random))
                    .collect(),
                config: [("rounds".to_string(), "1".to_string())].into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        ids.push(t.table_id);
    }
    assert!(gauge(metrics, "bete_table_handles").await > 0);
    for id in &ids {
        let mut done = false;
        for _ in 0..500 {
            if finished(&mut c, id).await {
                done = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(done, "the house match at {id} never finished");
    }
    wait_for_gauge(metrics, "bete_tables_loaded", 0).await;
    wait_for_gauge(metrics, "bete_table_handles", 0).await;

    // A finished table still loads again on demand (GetTable asks its actor), and its new
    // actor leaves as the first did.
    for id in &ids {
        assert!(finished(&mut c, id).await);
    }
    wait_for_gauge(metrics, "bete_tables_loaded", 0).await;
    wait_for_gauge(metrics, "bete_table_handles", 0).await;
    srv.stop().await;
}
