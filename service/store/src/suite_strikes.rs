//! Bots' strike records on ladders (issue 24), in both back ends: what the ladder's leader
//! writes is what every node reads, and it outlives a restart; on PostgreSQL only the leader
//! writes it.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::suite::{Backend, fresh_database, two_nodes};
use super::*;

fn record(ladder: &str, bot: &str, removals: u32, until: i64, window: &str) -> StrikeRecord {
    StrikeRecord {
        ladder_id: ladder.into(),
        bot_id: bot.into(),
        removals,
        cooldown_until_ms: until,
        window: window.into(),
    }
}

/// A record is written whole, read per bot and per ladder, and survives a reopen.
async fn strike_records_round_trip_and_survive_reopen(b: Backend) {
    let s = b.open().await;
    assert_eq!(
        s.strike_record("l1".into(), "b1".into()).await.unwrap(),
        None
    );
    assert!(s.strike_records("l1".into()).await.unwrap().is_empty());
    s.put_strikes(record("l1", "b1", 0, 0, "x..x"))
        .await
        .unwrap();
    s.put_strikes(record("l1", "b2", 0, 0, "x")).await.unwrap();
    s.put_strikes(record("l2", "b1", 3, 9_000, ""))
        .await
        .unwrap();
    // A removal replaces the whole record: count, cooldown and a cleared window.
    s.put_strikes(record("l1", "b1", 1, 70_000, ""))
        .await
        .unwrap();
    let s = b.reopen(s, &[]).await;
    assert_eq!(
        s.strike_record("l1".into(), "b1".into()).await.unwrap(),
        Some(record("l1", "b1", 1, 70_000, ""))
    );
    assert_eq!(
        s.strike_records("l1".into()).await.unwrap(),
        [
            record("l1", "b1", 1, 70_000, ""),
            record("l1", "b2", 0, 0, "x")
        ]
    );
    assert_eq!(
        s.strike_records("l2".into()).await.unwrap(),
        [record("l2", "b1", 3, 9_000, "")]
    );
    assert_eq!(
        s.strike_record("l2".into(), "b2".into()).await.unwrap(),
        None
    );
}

suite!(strike_records_round_trip_and_survive_reopen);

/// A node that does not lead the ladders cannot write a strike record (a paused former leader
/// must not undo a removal); every node reads the leader's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_strike_records_are_written_by_the_leader_only() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let (a, b) = two_nodes(&url, Duration::from_secs(30)).await;
    assert!(a.lead_ladders().await.unwrap().is_some());
    assert_eq!(b.lead_ladders().await.unwrap(), None);
    assert!(matches!(
        b.put_strikes(record("l1", "b1", 0, 0, "")).await,
        Err(StoreError::LadderFenced { ref leader }) if leader == "a"
    ));
    a.put_strikes(record("l1", "b1", 2, 123, "x"))
        .await
        .unwrap();
    assert_eq!(
        b.strike_record("l1".into(), "b1".into()).await.unwrap(),
        Some(record("l1", "b1", 2, 123, "x"))
    );
}
