//! Look-alike names entering one ladder at once through two nodes that do not lead it: each
//! node's check sees the store without the other's entry, so both may be stored; the leader
//! settles it before it schedules (the last round enters one of them through the leader).
//! Over a few rounds, exactly one of the two stays active, the other shows why (GetLadder, on
//! every node), and no table ever seats both.
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh); skips without it, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bete_api::pb;
use common::pg::*;
use common::*;

const ROUNDS: usize = 4;

fn ladders_toml() -> String {
    // A bot and the house make two of three seats: a match would need both look-alikes.
    (0..ROUNDS)
        .map(|i| {
            format!(
                "[[ladder]]\nid = \"look-{i}\"\nruleset = \"bete\"\nseats = 3\n\
                 deals_per_match = 3\ndecision_deadline_ms = 10000\n\
                 house_entrants = [\"random\"]\n\n"
            )
        })
        .collect()
}

/// The stored entries of `bots` on `ladder`: (bot, active, removed_reason).
async fn entries(url: &str, ladder: &str, bots: &[String]) -> Vec<(String, bool, String)> {
    sqlx::query_as(
        "SELECT bot_id, active, removed_reason FROM ladder_entries \
         WHERE ladder_id = $1 AND bot_id = ANY($2) ORDER BY bot_id",
    )
    .bind(ladder)
    .bind(bots)
    .fetch_all(&mut db(url).await)
    .await
    .unwrap()
}

/// Tables where both bots were ever seated.
async fn seated_together(url: &str, a: &str, b: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM seats x JOIN seats y ON x.table_id = y.table_id \
         WHERE x.bot_id = $1 AND y.bot_id = $2",
    )
    .bind(a)
    .bind(b)
    .fetch_one(&mut db(url).await)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_alikes_entering_at_once_through_two_followers_never_both_stay() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ladders.toml");
    std::fs::write(&path, ladders_toml()).unwrap();
    let extra = ["--ladders", path.to_str().unwrap()];
    let nodes: Vec<(String, Node)> = ["a", "b", "c"]
        .iter()
        .map(|id| {
            (
                id.to_string(),
                Node::start_with(&url, id, "2", &dir, &extra),
            )
        })
        .collect();
    let addrs: Vec<SocketAddr> = nodes.iter().map(|(_, n)| n.addr).collect();
    let mut channels = Vec::new();
    for a in &addrs {
        channels.push(connect(*a).await);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let leader = loop {
        let l: Option<String> = sqlx::query_scalar("SELECT node FROM ladder_leader")
            .fetch_optional(&mut db(&url).await)
            .await
            .ok()
            .flatten();
        // Before the schema is created, no leader either.
        if let Some(l) = l {
            break l;
        }
        assert!(Instant::now() < deadline, "no ladder leader within 20 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let followers: Vec<usize> = (0..3).filter(|i| nodes[*i].0 != leader).collect();
    let lead = (0..3).find(|i| nodes[*i].0 == leader).unwrap();

    let mut players = Vec::new();
    let mut raced = 0;
    for round in 0..ROUNDS {
        let ladder = format!("look-{round}");
        // Two followers in most rounds; the leader and a follower in the last one.
        let (f1, f2) = if round + 1 < ROUNDS {
            (&channels[followers[0]], &channels[followers[1]])
        } else {
            (&channels[lead], &channels[followers[round % 2]])
        };
        // Two bots, each its own owner; "Rоbot" has a Cyrillic "о".
        let robot = register(f1, "Robot").await;
        let twin = register(f2, "Rоbot").await;
        for bot in [&robot, &twin] {
            for a in &addrs {
                players.push(tokio::spawn(play_forever(
                    *a,
                    bot.token.clone(),
                    Duration::from_millis(5),
                )));
            }
        }
        let enter = |ch: &tonic::transport::Channel, token: &str| {
            let mut c = ladder_client(ch, Some(token));
            let ladder = ladder.clone();
            async move {
                c.enter_ladder(pb::EnterLadderRequest {
                    ladder_id: ladder,
                    capacity: 1,
                })
                .await
            }
        };
        let (r1, r2) = tokio::join!(enter(f1, &robot.token), enter(f2, &twin.token));
        for r in [&r1, &r2] {
            if let Err(s) = r {
                assert_eq!(reason(s), "NAME_LOOKS_TAKEN", "round {round}: {s:?}");
            }
        }
        assert!(r1.is_ok() || r2.is_ok(), "round {round}: neither entered");
        if r1.is_ok() && r2.is_ok() {
            raced += 1;
        }
        let bots = vec![robot.id.clone(), twin.id.clone()];
        // Settled within a few sweeps: exactly one active; the other, if stored, says why.
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let rows = entries(&url, &ladder, &bots).await;
            if rows.iter().filter(|r| r.1).count() == 1 {
                for (bot, active, why) in &rows {
                    if !active {
                        assert!(
                            why == "its name looks like Robot's, entered first"
                                || why == "its name looks like Rоbot's, entered first",
                            "round {round}: {bot}: {why:?}"
                        );
                    }
                }
                break;
            }
            assert!(
                Instant::now() < deadline,
                "round {round}: not settled within 15 s: {rows:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The loser sees it on every node; the winner stays entered (a few sweeps later too).
        tokio::time::sleep(Duration::from_secs(3)).await;
        let rows = entries(&url, &ladder, &bots).await;
        assert_eq!(
            rows.iter().filter(|r| r.1).count(),
            1,
            "round {round}: {rows:?}"
        );
        for (bot, token) in [(&robot.id, &robot.token), (&twin.id, &twin.token)] {
            let Some(row) = rows.iter().find(|r| &r.0 == bot) else {
                continue;
            };
            for ch in &channels {
                let got = ladder_client(ch, Some(token))
                    .get_ladder(pb::GetLadderRequest {
                        ladder_id: ladder.clone(),
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .entry
                    .unwrap();
                assert_eq!(got.active, row.1, "round {round}: {got:?}");
                assert_eq!(got.removed_reason, row.2, "round {round}: {got:?}");
            }
        }
        assert_eq!(
            seated_together(&url, &robot.id, &twin.id).await,
            0,
            "round {round}: a table seated both look-alikes"
        );
    }
    eprintln!("{raced} of {ROUNDS} rounds stored both entries before the leader settled them");
    for p in players {
        p.abort();
    }
}
