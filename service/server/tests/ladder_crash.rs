//! Ladders survive kill -9: the real binary is killed twice while a bot plays duplicate sets
//! against the house, restarted on the same data folder each time, and afterwards every
//! finished set is rated exactly once and the live ratings equal a recomputation from the
//! stored results and the public records (the ladder is luck-adjusted: each
//! table's luck is recomputed from its record, as anyone can).
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::ladder_service_client::LadderServiceClient;
use bete_ladder::Rating;
use common::*;

const LADDERS: &str = r#"
[[ladder]]
id = "crash-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 10000
house_entrants = ["random", "heuristic"]
luck_adjusted = true
"#;

fn spawn(dir: &Path, addr: SocketAddr) -> Child {
    Command::new(env!("CARGO_BIN_EXE_bete-server"))
        .args(["--listen", &addr.to_string()])
        .args(["--metrics-listen", &free_addr().to_string()])
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--ladders")
        .arg(dir.join("ladders.toml"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn matches(addr: SocketAddr) -> Vec<pb::LadderMatch> {
    let ch = connect(addr).await;
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = LadderServiceClient::new(ch.clone())
            .list_ladder_matches(pb::ListLadderMatchesRequest {
                ladder_id: "crash-3".into(),
                page_size: 200,
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        out.extend(page.matches);
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
    }
}

async fn rated_count(addr: SocketAddr) -> usize {
    matches(addr)
        .await
        .iter()
        .filter(|m| m.state == pb::LadderMatchState::Rated as i32)
        .count()
}

async fn wait_rated(addr: SocketAddr, n: usize) {
    for _ in 0..1200 {
        if rated_count(addr).await >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("fewer than {n} ladder matches rated in 60 s");
}

/// Each entrant's luck over a match, recomputed from its tables' public records.
async fn match_luck(addr: SocketAddr, m: &pb::LadderMatch, token: &str) -> Vec<f64> {
    let ch = connect(addr).await;
    let seats = m.entrants.len();
    let mut total = vec![0.0; seats];
    for t in &m.tables {
        let record = client_with(&ch, Some(token))
            .get_game_record(pb::GetGameRecordRequest {
                table_id: t.table_id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .record_json;
        let game = bete_rules::record::replay_json(&record).unwrap();
        let luck =
            bete_ladder::luck::table_luck(game.setup(), game.log(), t.table_id.as_bytes()).unwrap();
        let r = t.rotation as usize;
        for (seat, l) in luck.iter().enumerate() {
            total[bete_ladder::duplicate::entrant_at(seat, r, seats)] += l;
        }
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_sets_rates_every_result_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ladders.toml"), LADDERS).unwrap();
    let addr = free_addr();
    let mut server = spawn(dir.path(), addr);
    let ch = connect(addr).await;
    let bot = register(&ch, "survivor").await;
    LadderServiceClient::with_interceptor(ch.clone(), Bearer(Some(bot.token.clone())))
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: "crash-3".into(),
            capacity: 1,
        })
        .await
        .unwrap();
    let playing = tokio::spawn(play_forever(
        addr,
        bot.token.clone(),
        Duration::from_millis(3),
    ));

    // Kill once in the middle of a set (a table of it finished, the next under way), once
    // soon after a restart.
    wait_rated(addr, 1).await;
    let mid_set = async {
        loop {
            let m = matches(addr).await;
            if m.first().is_some_and(|m| {
                m.state == pb::LadderMatchState::Playing as i32
                    && m.tables.iter().any(|t| t.finished)
                    && m.tables.len() >= 2
            }) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), mid_set)
        .await
        .expect("never saw a set between its tables");
    server.kill().unwrap();
    server.wait().unwrap();
    server = spawn(dir.path(), addr);
    connect(addr).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.kill().unwrap();
    server.wait().unwrap();
    server = spawn(dir.path(), addr);
    connect(addr).await;
    let before = rated_count(addr).await;
    wait_rated(addr, before + 2).await;
    playing.abort();

    // Every rated match, oldest first (capacity 1: one match at a time, rated in order).
    let mut all = matches(addr).await;
    all.reverse();
    let rated: Vec<&pb::LadderMatch> = all
        .iter()
        .filter(|m| m.state == pb::LadderMatchState::Rated as i32)
        .collect();
    assert!(rated.len() >= 3);
    // At most the newest match is still playing; none was lost or duplicated.
    assert!(all.len() - rated.len() <= 1, "{all:?}");
    let ids: std::collections::HashSet<&str> = all.iter().map(|m| m.match_id.as_str()).collect();
    assert_eq!(ids.len(), all.len());

    // Recompute every rating from the stored results, in order, and compare with the board.
    let mut ratings: std::collections::HashMap<String, Rating> = Default::default();
    let mut counts: std::collections::HashMap<String, u32> = Default::default();
    for m in &rated {
        assert_eq!(m.tables.len(), 3);
        assert_eq!(m.deals, 9);
        let before: Vec<Rating> = m
            .entrants
            .iter()
            .map(|e| ratings.get(&e.bot_id).copied().unwrap_or_default())
            .collect();
        for (e, b) in m.entrants.iter().zip(&before) {
            // Each result was applied on top of the previous one: rated once, in order.
            assert!((e.mu_before - b.mu).abs() < 1e-9, "{m:?}");
            assert!((e.sigma_before - b.sigma).abs() < 1e-9, "{m:?}");
        }
        let nets: Vec<i64> = m.entrants.iter().map(|e| e.net).collect();
        assert_eq!(nets.iter().sum::<i64>(), 0);
        let luck = match_luck(addr, m, &bot.token).await;
        let adjusted = bete_ladder::luck::adjusted(&nets, &luck);
        let places: Vec<u32> = m.entrants.iter().map(|e| e.place).collect();
        assert_eq!(places, bete_ladder::places(&adjusted), "{m:?} {luck:?}");
        let after = bete_ladder::update(&before, &adjusted);
        for (e, a) in m.entrants.iter().zip(&after) {
            ratings.insert(e.bot_id.clone(), *a);
            *counts.entry(e.bot_id.clone()).or_default() += 1;
        }
    }
    let board = LadderServiceClient::new(connect(addr).await)
        .get_standings(pb::GetStandingsRequest {
            ladder_id: "crash-3".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .standings;
    assert_eq!(board.len(), 3);
    for line in &board {
        let want = ratings[&line.bot_id];
        assert!((line.mu - want.mu).abs() < 1e-9, "{line:?} vs {want:?}");
        assert!(
            (line.sigma - want.sigma).abs() < 1e-9,
            "{line:?} vs {want:?}"
        );
        assert_eq!(line.matches, counts[&line.bot_id], "{line:?}");
    }
    server.kill().unwrap();
    server.wait().unwrap();
}
