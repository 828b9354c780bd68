//! Provable deals on ordinary tables: the commitment is published at creation, the finished
//! record's seed matches it, and a caller-chosen seed is marked as such.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bete_api::pb;
use common::*;

async fn house_match(c: &mut Client, seed: &str) -> (pb::Table, pb::GetGameRecordResponse) {
    let table = c
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: (0..3)
                .map(|s| house(s, pb::HouseBotPolicy::Random))
                .collect(),
            seed: seed.into(),
            config: [("rounds".to_string(), "1".to_string())].into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    let id = table.table_id.clone();
    for _ in 0..500 {
        if let Ok(r) = c
            .get_game_record(pb::GetGameRecordRequest {
                table_id: id.clone(),
            })
            .await
        {
            return (table, r.into_inner());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the house match never finished");
}

#[tokio::test]
async fn the_published_commitment_matches_the_revealed_seed() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut c = register(&ch, "prover").await.client;
    let chosen = "ab".repeat(32);
    for seed in ["", chosen.as_str()] {
        let (table, rec) = house_match(&mut c, seed).await;
        let record = bete_rules::record::Record::from_json(&rec.record_json).unwrap();
        let revealed = record.seed.unwrap();
        assert_eq!(
            revealed.commitment(),
            table.seed_sha256,
            "published at creation"
        );
        assert_eq!(rec.seed_sha256, table.seed_sha256);
        assert_eq!(table.seed_chosen, !seed.is_empty());
        assert_eq!(rec.seed_chosen, !seed.is_empty());
        if !seed.is_empty() {
            assert_eq!(revealed.to_string(), chosen);
        }
        let listed = c
            .get_table(pb::GetTableRequest {
                table_id: table.table_id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        assert_eq!(listed.seed_chosen, !seed.is_empty());
        assert_eq!(listed.seed_sha256, table.seed_sha256);
    }
    srv.stop().await;
}
