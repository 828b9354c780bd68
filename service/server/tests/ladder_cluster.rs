//! Ladder scheduling across a cluster: three real nodes on one PostgreSQL run one ladder with
//! house and bot entrants, and exactly one of them schedules it. kill -9 that node mid-ladder:
//! another node takes over within the lease and a few seconds, the matches in flight finish
//! (their tables claimed by the survivors) and are rated once, and no bot is ever seated at two
//! unfinished tables at once (each enters with capacity 1).
//!
//! Needs `BETE_TEST_DATABASE_URL` (scripts/pg.sh); skips without it, saying so.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bete_api::pb;
use bete_api::pb::ladder_service_client::LadderServiceClient;
use common::pg::*;
use common::*;

const LADDERS: &str = r#"
[[ladder]]
id = "cluster-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 10000
house_entrants = ["random", "heuristic"]
"#;

/// Lease of every node, in seconds.
const LEASE_SECS: u64 = 2;

/// A bot's connection to one node ([`play_forever`] with a little thinking): it plays what that
/// node's WatchBot stream brings, on that node (which owns the table). A bot runs one per node,
/// so whichever node plays its table, it hears of it there.
async fn play_on(addr: SocketAddr, token: String) {
    play_forever(addr, token, Duration::from_millis(5)).await;
}

async fn leader(url: &str) -> Option<String> {
    sqlx::query_scalar("SELECT node FROM ladder_leader")
        .fetch_optional(&mut db(url).await)
        .await
        .unwrap()
}

async fn count(url: &str, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(&mut db(url).await)
        .await
        .unwrap()
}

async fn playing(url: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT id FROM ladder_matches WHERE state = 'playing'")
        .fetch_all(&mut db(url).await)
        .await
        .unwrap()
}

/// Polls `what` every 100 ms for at most `secs` seconds.
async fn wait_until<F, Fut>(secs: u64, why: &str, mut what: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        if what().await {
            return start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{why}: not within {secs} s");
}

/// The nodes' ladder lines, warnings and errors, to see why a check failed.
fn dump(nodes: &[(String, Node)]) {
    for (id, n) in nodes {
        for line in n.log_text().lines() {
            if line.contains("WARN") || line.contains("ERROR") || line.contains("ladder") {
                eprintln!("{id}: {line}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ladder_keeps_scheduling_once_across_a_leader_kill() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ladders = dir.path().join("ladders.toml");
    std::fs::write(&ladders, LADDERS).unwrap();
    let extra = ["--ladders", ladders.to_str().unwrap()];
    let lease = LEASE_SECS.to_string();
    let mut nodes: Vec<(String, Node)> = ["a", "b", "c"]
        .iter()
        .map(|id| {
            (
                id.to_string(),
                Node::start_with(&url, id, &lease, &dir, &extra),
            )
        })
        .collect();
    let addrs: Vec<SocketAddr> = nodes.iter().map(|(_, n)| n.addr).collect();
    let mut channels = Vec::new();
    for a in &addrs {
        channels.push(connect(*a).await);
    }

    // Three bots, each entered through a different node, each connected to every node.
    let mut players = Vec::new();
    for (i, ch) in channels.iter().enumerate() {
        let bot = register(ch, &format!("cluster-bot-{i}")).await;
        LadderServiceClient::with_interceptor(ch.clone(), Bearer(Some(bot.token.clone())))
            .enter_ladder(pb::EnterLadderRequest {
                ladder_id: "cluster-3".into(),
                capacity: 1,
            })
            .await
            .unwrap();
        for a in &addrs {
            players.push(tokio::spawn(play_on(*a, bot.token.clone())));
        }
    }

    // Watch the whole run: never a bot at two unfinished tables.
    let doubles = Arc::new(Mutex::new(Vec::<String>::new()));
    let watcher = {
        let (url, doubles) = (url.clone(), doubles.clone());
        tokio::spawn(async move {
            let mut conn = db(&url).await;
            loop {
                let twice: Vec<String> = sqlx::query_scalar(
                    "SELECT s.bot_id || ': ' || string_agg(t.id || ' ' || t.state || ' on ' \
                       || coalesce(t.owner, '-'), ', ') \
                     FROM seats s JOIN tables t ON t.id = s.table_id \
                     WHERE t.state <> 'finished' AND s.bot_id IS NOT NULL \
                     GROUP BY s.bot_id HAVING count(*) > 1",
                )
                .fetch_all(&mut conn)
                .await
                .unwrap();
                doubles.lock().unwrap().extend(twice);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    // One leader; only it schedules.
    wait_until(10, "no ladder leader", || async {
        leader(&url).await.is_some()
    })
    .await;
    let first = leader(&url).await.unwrap();
    wait_until(60, "two matches rated", || async {
        count(
            &url,
            "SELECT count(*) FROM ladder_matches WHERE state = 'rated'",
        )
        .await
            >= 2
    })
    .await;
    let schedulers: Vec<&String> = nodes
        .iter()
        .filter(|(_, n)| n.log_text().contains("ladder match scheduled"))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(schedulers, [&first], "only the leader schedules");

    // Mid-ladder: a match under way (a table of it created); kill -9 the leader.
    wait_until(30, "no match in flight", || async {
        count(
            &url,
            "SELECT count(*) FROM ladder_matches m WHERE m.state = 'playing' \
             AND EXISTS (SELECT 1 FROM tables t WHERE t.ladder_match = m.id)",
        )
        .await
            > 0
    })
    .await;
    let in_flight = playing(&url).await;
    let killed_at_ms = bete_server::now_ms();
    let i = nodes.iter().position(|(id, _)| *id == first).unwrap();
    nodes[i].1.kill_9();
    // Its unfinished tables (ladder tables it created) must all be claimed by the survivors.
    let orphaned = count(
        &url,
        &format!("SELECT count(*) FROM tables WHERE owner = '{first}' AND state <> 'finished'"),
    )
    .await;

    // Another node leads and starts new matches within the lease and a few seconds.
    let took_over = wait_until(LEASE_SECS + 5, "no new leader", || async {
        leader(&url).await.is_some_and(|l| l != first)
    })
    .await;
    let sql = format!("SELECT count(*) FROM ladder_matches WHERE started_at > {killed_at_ms}");
    let started = wait_until(LEASE_SECS + 8, "no new match after the kill", || async {
        count(&url, &sql).await > 0
    })
    .await;
    eprintln!(
        "killed {first} with {} matches in flight; new leader after {took_over:?}, first new match after {started:?}",
        in_flight.len()
    );

    // The matches in flight at the kill finish and are rated.
    let start = Instant::now();
    loop {
        let now = playing(&url).await;
        if in_flight.iter().all(|m| !now.contains(m)) {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            dump(&nodes);
            panic!("matches in flight at the kill never rated: {now:?} of {in_flight:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // And the ladder goes on: two more rated after those.
    let rated = count(
        &url,
        "SELECT count(*) FROM ladder_matches WHERE state = 'rated'",
    )
    .await;
    wait_until(60, "two more matches rated", || async {
        count(
            &url,
            "SELECT count(*) FROM ladder_matches WHERE state = 'rated'",
        )
        .await
            >= rated + 2
    })
    .await;
    watcher.abort();
    for p in &players {
        p.abort();
    }
    let mut doubles = doubles.lock().unwrap().clone();
    doubles.dedup();
    if !doubles.is_empty() {
        dump(&nodes);
    }
    assert!(
        doubles.is_empty(),
        "bots seated at two unfinished tables: {doubles:?}"
    );

    // Rated once: each entrant's rating counts exactly the rated matches it played.
    let mut conn = db(&url).await;
    let counted: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT r.bot_id, r.matches, (SELECT count(*) FROM ladder_match_bots b \
           JOIN ladder_matches m ON m.id = b.match_id \
           WHERE b.bot_id = r.bot_id AND m.state = 'rated') \
         FROM ladder_ratings r WHERE r.ladder_id = 'cluster-3'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(counted.len() >= 3, "{counted:?}");
    for (bot, matches, rated) in &counted {
        assert_eq!(
            matches, rated,
            "{bot}: rating counts {matches}, {rated} rated"
        );
    }
    // One match at a time per bot (capacity 1): each starts after the bot's previous one was
    // rated, across both leaders.
    let rows: Vec<(String, i64, Option<i64>)> = sqlx::query_as(
        "SELECT b.bot_id, m.started_at, m.rated_at FROM ladder_match_bots b \
         JOIN ladder_matches m ON m.id = b.match_id \
         WHERE b.bot_id NOT LIKE 'house:%' ORDER BY b.bot_id, m.started_at",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    for w in rows.windows(2) {
        let ((bot, _, rated), (next_bot, started, _)) = (&w[0], &w[1]);
        if bot == next_bot {
            let Some(rated) = rated else {
                dump(&nodes);
                panic!("{bot}: an unrated match before another: {rows:?}");
            };
            if *started < *rated {
                dump(&nodes);
                panic!("{bot} was booked twice: {w:?}");
            }
        }
    }
    // The survivors took the dead leader's tables; no table is left to a dead node.
    let new = leader(&url).await.unwrap();
    assert_ne!(new, first);
    let survivors: Vec<&String> = nodes
        .iter()
        .filter(|(id, _)| *id != first)
        .filter(|(_, n)| n.log_text().contains("this node now schedules the ladder"))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(survivors, [&new]);

    // What the survivors' metrics say: one leader, two live nodes, the orphans claimed (each
    // timed from claim to playing), leases renewed and none failed, nothing lost.
    let mut claimed = 0;
    for (id, n) in nodes.iter().filter(|(id, _)| *id != first) {
        let m = n.metrics;
        assert_eq!(
            gauge(m, "bete_ladder_leader").await,
            i64::from(*id == new),
            "{id}"
        );
        wait_for_gauge(m, "bete_nodes_live", 2).await;
        assert!(gauge(m, "bete_lease_renewals_total{result=\"ok\"}").await > 0);
        assert_eq!(
            gauge(m, "bete_lease_renewals_total{result=\"failed\"}").await,
            0
        );
        assert_eq!(gauge(m, "bete_tables_lost_total").await, 0);
        let c = gauge(m, "bete_tables_claimed_total").await;
        assert_eq!(gauge(m, "bete_claim_to_playing_seconds_count").await, c);
        claimed += c;
    }
    assert!(
        claimed >= orphaned,
        "{claimed} tables claimed of {orphaned} orphaned"
    );
}

/// A rated match the store refuses to take (here a trigger makes PostgreSQL refuse every
/// rating for a while) is not lost: the writer retries, then the scheduler reloads from the
/// store and rates it again, once. Without that the match stayed unrated for good while its
/// entrants played on, and the ratings in memory (written with the next match) counted it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_the_store_refused_is_rated_again_once() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ladders = dir.path().join("ladders.toml");
    std::fs::write(&ladders, LADDERS).unwrap();
    let extra = ["--ladders", ladders.to_str().unwrap()];
    let lease = LEASE_SECS.to_string();
    let node = Node::start_with(&url, "solo", &lease, &dir, &extra);
    let ch = connect(node.addr).await;
    // (The node migrates the schema as it starts: until then there is no leader table.)
    wait_until(20, "no ladder leader", || async {
        sqlx::query_scalar::<_, String>("SELECT node FROM ladder_leader")
            .fetch_optional(&mut db(&url).await)
            .await
            .is_ok_and(|l| l.is_some())
    })
    .await;
    sqlx::raw_sql(
        "CREATE FUNCTION refuse_rating() RETURNS trigger AS $$ BEGIN \
           IF NEW.state = 'rated' THEN RAISE EXCEPTION 'ratings refused by the test'; END IF; \
           RETURN NEW; END $$ LANGUAGE plpgsql; \
         CREATE TRIGGER refuse_rating BEFORE UPDATE ON ladder_matches \
           FOR EACH ROW EXECUTE FUNCTION refuse_rating();",
    )
    .execute(&mut db(&url).await)
    .await
    .unwrap();
    let bot = register(&ch, "refused-bot").await;
    LadderServiceClient::with_interceptor(ch.clone(), Bearer(Some(bot.token.clone())))
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: "cluster-3".into(),
            capacity: 1,
        })
        .await
        .unwrap();
    let player = tokio::spawn(play_on(node.addr, bot.token.clone()));

    // The first match ends, its rating is refused past the retries: a reload.
    wait_until(90, "no reload after a refused rating", || async {
        node.log_text()
            .contains("reloading the ladder from the store")
    })
    .await;
    assert_eq!(
        count(
            &url,
            "SELECT count(*) FROM ladder_matches WHERE state = 'rated'"
        )
        .await,
        0
    );
    sqlx::raw_sql("DROP TRIGGER refuse_rating ON ladder_matches")
        .execute(&mut db(&url).await)
        .await
        .unwrap();
    wait_until(
        90,
        "three matches rated after the store took ratings again",
        || async {
            count(
                &url,
                "SELECT count(*) FROM ladder_matches WHERE state = 'rated'",
            )
            .await
                >= 3
        },
    )
    .await;
    player.abort();
    // Every entrant's rating counts exactly its rated matches: the refused one once.
    let counted: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT r.bot_id, r.matches, (SELECT count(*) FROM ladder_match_bots b \
           JOIN ladder_matches m ON m.id = b.match_id \
           WHERE b.bot_id = r.bot_id AND m.state = 'rated') \
         FROM ladder_ratings r WHERE r.ladder_id = 'cluster-3'",
    )
    .fetch_all(&mut db(&url).await)
    .await
    .unwrap();
    assert_eq!(counted.len(), 3, "{counted:?}");
    for (bot, matches, rated) in &counted {
        assert_eq!(
            matches, rated,
            "{bot}: rating counts {matches}, {rated} rated"
        );
    }
}

const STRICT: &str = r#"
[[ladder]]
id = "strict-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 50
max_strikes_per_match = 2
strike_window = 50
max_strike_share = 0.05
strike_cooldown_ms = 60000
house_entrants = ["random", "heuristic"]
"#;

/// A bot that holds a WatchBot stream on `addr` and never answers (each of its decisions times
/// out). Runs until aborted.
async fn silent_on(addr: SocketAddr, token: String) {
    let ch = connect(addr).await;
    let mut c = client_with(&ch, Some(&token));
    let mut stream = c
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    while let Ok(Some(_)) = stream.message().await {}
}

/// A bot taken off the ladder for timeouts by the leader cannot come straight back through
/// another node: the follower reads the removal's cooldown from the store and refuses
/// EnterLadder with FAILED_PRECONDITION / LADDER_COOLDOWN and the time actually left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_removed_on_the_leader_cannot_enter_through_a_follower() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ladders = dir.path().join("ladders.toml");
    std::fs::write(&ladders, STRICT).unwrap();
    let extra = ["--ladders", ladders.to_str().unwrap()];
    let lease = LEASE_SECS.to_string();
    let nodes: Vec<(String, Node)> = ["a", "b"]
        .iter()
        .map(|id| {
            (
                id.to_string(),
                Node::start_with(&url, id, &lease, &dir, &extra),
            )
        })
        .collect();
    // (The nodes migrate the schema as they start: until then there is no leader table.)
    wait_until(30, "no ladder leader", || async {
        sqlx::query_scalar::<_, String>("SELECT node FROM ladder_leader")
            .fetch_optional(&mut db(&url).await)
            .await
            .is_ok_and(|l| l.is_some())
    })
    .await;
    let lead = leader(&url).await.unwrap();
    let leader_addr = nodes.iter().find(|(id, _)| *id == lead).unwrap().1.addr;
    let follower_addr = nodes.iter().find(|(id, _)| *id != lead).unwrap().1.addr;
    let leader_ch = connect(leader_addr).await;
    let follower_ch = connect(follower_addr).await;

    let bot = register(&leader_ch, "griefer").await;
    let silent = tokio::spawn(silent_on(leader_addr, bot.token.clone()));
    let mut on_leader =
        LadderServiceClient::with_interceptor(leader_ch.clone(), Bearer(Some(bot.token.clone())));
    let enter = || pb::EnterLadderRequest {
        ladder_id: "strict-3".into(),
        capacity: 1,
    };
    on_leader.enter_ladder(enter()).await.unwrap();
    wait_until(60, "the silent bot was never taken off", || {
        let mut l = on_leader.clone();
        async move {
            let got = l
                .get_ladder(pb::GetLadderRequest {
                    ladder_id: "strict-3".into(),
                })
                .await
                .unwrap()
                .into_inner();
            got.entry.is_some_and(|e| !e.active)
        }
    })
    .await;
    silent.abort();
    let removed_at = Instant::now();

    let mut on_follower =
        LadderServiceClient::with_interceptor(follower_ch, Bearer(Some(bot.token.clone())));
    let refused = on_follower.enter_ladder(enter()).await.unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::FailedPrecondition,
        "{refused:?}"
    );
    assert_eq!(reason(&refused), "LADDER_COOLDOWN", "{refused:?}");
    use tonic_types::StatusExt;
    let details = refused.get_error_details();
    let retry = details
        .retry_info()
        .and_then(|r| r.retry_delay)
        .expect("RetryInfo");
    // The time actually left of the 60 s cooldown, not a fixed figure.
    let left = Duration::from_secs(60).saturating_sub(removed_at.elapsed());
    assert!(retry <= Duration::from_secs(60), "{retry:?}");
    assert!(
        retry + Duration::from_secs(10) >= left,
        "{retry:?} against {left:?} left"
    );
    assert_eq!(
        details
            .error_info()
            .and_then(|i| i.metadata.get("removals").cloned())
            .as_deref(),
        Some("1")
    );
    // The follower wrote no entry: the bot is still off the ladder.
    assert_eq!(
        count(
            &url,
            "SELECT count(*) FROM ladder_entries WHERE ladder_id = 'strict-3' AND active"
        )
        .await,
        0
    );
}
