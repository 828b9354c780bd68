//! Ladders against a real server: scheduling, duplicate sets, ratings, owner exclusion and
//! provable deals, with real bots on the SDK's runner (the same WatchBot stream every SDK uses).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bete_client::{Client, Runner, Strategy, pb};
use common::ladder::{Bearer, LadderServer as Server, online_bot};
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

async fn enter(server: &Server, bot: &Client, ladder: &str, capacity: u32) -> pb::LadderEntry {
    server
        .ladders(bot.token())
        .await
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: ladder.into(),
            capacity,
        })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap()
}

/// Waits for `n` rated matches of `ladder` on WatchLadderResults.
async fn rated(server: &Server, ladder: &str, n: usize, secs: u64) -> Vec<pb::LadderMatch> {
    let mut stream = server
        .ladders(None)
        .await
        .watch_ladder_results(pb::WatchLadderResultsRequest {
            ladder_id: ladder.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(secs), async {
        while out.len() < n {
            let msg = stream.message().await.unwrap().unwrap();
            if let Some(pb::watch_ladder_results_response::Kind::Rated(m)) = msg.kind {
                out.push(m);
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("only {} of {n} matches rated in {secs} s", out.len()));
    out
}

async fn standings(server: &Server, ladder: &str) -> Vec<pb::Standing> {
    server
        .ladders(None)
        .await
        .get_standings(pb::GetStandingsRequest {
            ladder_id: ladder.into(),
            page_size: 100,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .standings
}

const SOLO: &str = r#"
[[ladder]]
id = "solo-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 5000
house_entrants = ["random", "heuristic"]
"#;

/// One bot and the two house entrants: the scheduler seats the bot at a duplicate set (three
/// tables, one per rotation, one seed), deals the same decks at every rotation, rates the set
/// once for all three, and every table's record proves its seed against the published
/// commitment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_bot_plays_duplicate_sets_against_the_house() {
    let server = Server::start(SOLO, 7).await;
    let cancel = CancellationToken::new();
    let bot = online_bot(&server, "solo", Strategy::Heuristic, &cancel).await;
    let watching = tokio::spawn({
        let url = server.url.clone();
        async move {
            let s = Server::at(url);
            rated(&s, "solo-3", 2, 120).await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let entry = enter(&server, &bot, "solo-3", 1).await;
    assert!(entry.active);
    let sets = watching.await.unwrap();
    cancel.cancel();

    let me = bot.token().unwrap();
    let client = bot.with_token(&me).unwrap();
    for set in &sets {
        assert_eq!(set.state, pb::LadderMatchState::Rated as i32);
        assert!(set.duplicate);
        assert_eq!(set.tables.len(), 3, "{set:?}");
        assert_eq!(set.deals, 9, "three tables of three deals");
        let ids: HashSet<&str> = set.entrants.iter().map(|e| e.bot_id.as_str()).collect();
        assert!(ids.contains("house:random") && ids.contains("house:heuristic"));
        // The set's nets sum to zero (chips are conserved at every table).
        assert_eq!(set.entrants.iter().map(|e| e.net).sum::<i64>(), 0);
        let mine = set
            .entrants
            .iter()
            .position(|e| !e.bot_id.starts_with("house:"))
            .unwrap();
        let mut decks = Vec::new();
        for t in &set.tables {
            let table = client.get_table(&t.table_id).await.unwrap();
            assert_eq!(table.ladder_id, "solo-3");
            assert_eq!(table.ladder_match_id, set.match_id);
            assert!(!table.seed_chosen);
            assert_eq!(table.seed_sha256, t.seed_sha256);
            // Entrant i sits at seat (i + rotation) mod 3.
            let seat = (mine + t.rotation as usize) % 3;
            assert_eq!(table.seats[seat].bot_id, entry.bot_id, "{table:?}");
            let record = client.get_game_record(&t.table_id).await.unwrap();
            let rec = bete_rules::record::Record::from_json(&record).unwrap();
            let seed = rec.seed.unwrap();
            assert_eq!(
                seed.commitment(),
                t.seed_sha256,
                "the record's seed is the committed one"
            );
            // Ladder records list every deck (checked against the seed when parsed).
            let json: serde_json::Value = serde_json::from_str(&record).unwrap();
            assert!(
                json["deals"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|d| d["deck"].is_array())
            );
            decks.push(format!("{:?}", rec.decks));
        }
        assert!(
            decks.windows(2).all(|w| w[0] == w[1]),
            "every rotation deals the same decks"
        );
    }
    let lines = standings(&server, "solo-3").await;
    assert_eq!(lines.len(), 3);
    for l in &lines {
        assert_eq!(l.matches, 2, "{l:?}");
        assert!((l.rating - (l.mu - 3.0 * l.sigma)).abs() < 1e-9);
    }
    assert!(
        lines.windows(2).all(|w| w[0].rating >= w[1].rating),
        "best first"
    );
    server.stop().await;
}

const DUEL: &str = r#"
[[ladder]]
id = "duel-4"
ruleset = "bete"
seats = 4
deals_per_match = 4
decision_deadline_ms = 5000
house_entrants = []
max_group_meetings_per_day = 1000
"#;

/// Two heuristic and two random bots: within a bounded number of duplicate sets (fixed seeds)
/// both heuristics stand above both randoms on the leaderboard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heuristics_rise_above_randoms() {
    let server = Server::start(DUEL, 11).await;
    let cancel = CancellationToken::new();
    let mut bots = Vec::new();
    for (name, strategy) in [
        ("h1", Strategy::Heuristic),
        ("h2", Strategy::Heuristic),
        ("r1", Strategy::Random),
        ("r2", Strategy::Random),
    ] {
        let b = online_bot(&server, name, strategy, &cancel).await;
        bots.push((name, enter(&server, &b, "duel-4", 1).await.bot_id));
    }
    let mut stream = server
        .ladders(None)
        .await
        .watch_ladder_results(pb::WatchLadderResultsRequest {
            ladder_id: "duel-4".into(),
        })
        .await
        .unwrap()
        .into_inner();
    const MAX_SETS: usize = 12;
    let mut sets = 0;
    let ranked = tokio::time::timeout(Duration::from_secs(240), async {
        while sets < MAX_SETS {
            let msg = stream.message().await.unwrap().unwrap();
            if !matches!(
                msg.kind,
                Some(pb::watch_ladder_results_response::Kind::Rated(_))
            ) {
                continue;
            }
            sets += 1;
            let lines = standings(&server, "duel-4").await;
            let rank = |name: &str| {
                let id = &bots.iter().find(|(n, _)| *n == name).unwrap().1;
                lines.iter().position(|l| &l.bot_id == id).unwrap()
            };
            if rank("h1").max(rank("h2")) < rank("r1").min(rank("r2")) {
                return true;
            }
        }
        false
    })
    .await
    .unwrap();
    cancel.cancel();
    assert!(
        ranked,
        "heuristics not both above randoms after {MAX_SETS} sets"
    );
    eprintln!("heuristics ranked above randoms after {sets} sets");
    server.stop().await;
}

async fn account_bot(server: &Server, account_token: &str, name: &str) -> Client {
    let ch = Channel::from_shared(server.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let reg = pb::bot_service_client::BotServiceClient::with_interceptor(
        ch,
        Bearer(Some(account_token.to_string())),
    )
    .register_bot(pb::RegisterBotRequest {
        name: name.into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner();
    let client = Client::connect(&server.url).await.unwrap();
    client.set_token(&reg.token).unwrap();
    client
}

const TRIO: &str = r#"
[[ladder]]
id = "trio-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
duplicate = false
decision_deadline_ms = 5000
house_entrants = []
max_group_meetings_per_day = 1000
"#;

/// Three bots of one account and two bots of their own: every scheduled table holds exactly
/// one bot of the account, over many tables.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_bots_of_one_owner_never_share_a_table() {
    let server = Server::start(TRIO, 5).await;
    let ch = Channel::from_shared(server.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let account = pb::account_service_client::AccountServiceClient::new(ch)
        .create_account(pb::CreateAccountRequest {
            name: "one team".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let cancel = CancellationToken::new();
    let mut team = HashSet::new();
    for i in 0..3 {
        let b = account_bot(&server, &account.token, &format!("team-{i}")).await;
        let runner = Runner::new(b.clone(), |_: &pb::Seated| Strategy::Random.bot())
            .with_cancel(cancel.clone());
        tokio::spawn(runner.run());
        team.insert(enter(&server, &b, "trio-3", 2).await.bot_id);
    }
    for name in ["solo-a", "solo-b"] {
        let b = online_bot(&server, name, Strategy::Random, &cancel).await;
        enter(&server, &b, "trio-3", 4).await;
    }
    let matches = rated(&server, "trio-3", 12, 240).await;
    cancel.cancel();
    for m in &matches {
        let of_team = m
            .entrants
            .iter()
            .filter(|e| team.contains(&e.bot_id))
            .count();
        assert_eq!(of_team, 1, "{:?}", m.entrants);
    }
    server.stop().await;
}

fn reason(status: &tonic::Status) -> String {
    common::ladder::reason_and_retry(status).0
}

/// Every wrong way in gets its documented status and reason, and nothing is scheduled for a
/// bot that entered without a WatchBot stream until it opens one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_entries_get_clear_statuses() {
    let server = Server::start(SOLO, 3).await;
    let bot = common::bot_at(&server.url, "careful").await;
    let mut ladders = server.ladders(bot.token()).await;
    let enter_req = |id: &str, capacity| pb::EnterLadderRequest {
        ladder_id: id.into(),
        capacity,
    };
    let e = ladders
        .enter_ladder(enter_req("nope", 1))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (tonic::Code::NotFound, "LADDER_NOT_FOUND")
    );
    let e = ladders
        .enter_ladder(enter_req("solo-3", 1_000_000))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (tonic::Code::InvalidArgument, "INVALID_ARGUMENT")
    );
    let e = ladders
        .leave_ladder(pb::LeaveLadderRequest {
            ladder_id: "solo-3".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (tonic::Code::FailedPrecondition, "LADDER_NOT_ENTERED")
    );
    // Without a token: UNAUTHENTICATED.
    let e = server
        .ladders(None)
        .await
        .enter_ladder(enter_req("solo-3", 1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated);
    // Capacity 0 means 1.
    let entry = ladders
        .enter_ladder(enter_req("solo-3", 0))
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    assert_eq!(entry.capacity, 1);
    let e = ladders
        .enter_ladder(enter_req("solo-3", 1))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (tonic::Code::AlreadyExists, "LADDER_ALREADY_ENTERED")
    );
    // Entered but offline: no match comes.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let none = ladders
        .list_ladder_matches(pb::ListLadderMatchesRequest {
            ladder_id: "solo-3".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(none.matches.is_empty(), "{none:?}");
    // Online: a set starts; its tables refuse JoinTable and LeaveTable, and hold back their
    // records until the whole set is rated.
    let cancel = CancellationToken::new();
    let runner = Runner::new(bot.clone(), |_: &pb::Seated| Strategy::Heuristic.bot())
        .with_cancel(cancel.clone());
    tokio::spawn(runner.run());
    let first = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let m = ladders
                .list_ladder_matches(pb::ListLadderMatchesRequest {
                    ladder_id: "solo-3".into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .matches;
            if let Some(t) = m.first().and_then(|m| m.tables.first()) {
                return t.table_id.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap();
    let intruder = common::bot_at(&server.url, "intruder").await;
    let e = intruder.join_table(&first, None).await.unwrap_err();
    assert!(format!("{e:?}").contains("LADDER_TABLE"), "{e:?}");
    let e = bot.leave_table(&first).await.unwrap_err();
    assert!(format!("{e:?}").contains("LADDER_TABLE"), "{e:?}");
    let e = bot.get_game_record(&first).await.unwrap_err();
    assert!(format!("{e:?}").contains("TABLE_NOT_FINISHED"), "{e:?}");
    // A bot with a view of another table of the set must not fetch its record either.
    let e = intruder.get_game_record(&first).await.unwrap_err();
    assert!(
        format!("{e:?}").contains("TABLE_NOT_FINISHED")
            || format!("{e:?}").contains("TABLE_PRIVATE"),
        "{e:?}"
    );
    cancel.cancel();
    server.stop().await;
}

const SLOW: &str = r#"
[[ladder]]
id = "slow-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 30
max_strikes_per_match = 2
house_entrants = ["random", "heuristic"]
"#;

/// A bot that holds its stream but never answers is taken off the ladder after its first
/// table, with a reason it can read; the set still finishes on auto-moves and is rated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_never_answers_is_taken_off() {
    let server = Server::start(SLOW, 9).await;
    let bot = common::bot_at(&server.url, "sleepy").await;
    // A WatchBot stream, never read from and never answered: online, but silent.
    let _stream = bot.open_watch_bot(HashMap::new()).await.unwrap();
    let mut ladders = server.ladders(bot.token()).await;
    ladders
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: "slow-3".into(),
            capacity: 1,
        })
        .await
        .unwrap();
    let set = rated(&server, "slow-3", 1, 60).await.remove(0);
    let me = set
        .entrants
        .iter()
        .find(|e| !e.bot_id.starts_with("house:"))
        .unwrap();
    assert!(me.strikes > 2, "{me:?}");
    let entry = ladders
        .get_ladder(pb::GetLadderRequest {
            ladder_id: "slow-3".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    assert!(!entry.active);
    assert!(entry.removed_reason.contains("timed out"), "{entry:?}");
    server.stop().await;
}

/// A bot that leaves the ladder in the middle of a set: the set is played out (the bot keeps
/// playing its seats) and rated with it in it; no new match comes for it afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_mid_set_lets_the_set_finish_and_count() {
    let server = Server::start(SOLO, 21).await;
    let cancel = CancellationToken::new();
    let bot = online_bot(&server, "quitter", Strategy::Heuristic, &cancel).await;
    let id = enter(&server, &bot, "solo-3", 1).await.bot_id;
    let mut ladders = server.ladders(bot.token()).await;
    // Leave as soon as the first set has a table.
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let m = ladders
                .list_ladder_matches(pb::ListLadderMatchesRequest {
                    ladder_id: "solo-3".into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .matches;
            if !m.is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    let left = ladders
        .leave_ladder(pb::LeaveLadderRequest {
            ladder_id: "solo-3".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    assert!(!left.active);
    let set = rated(&server, "solo-3", 1, 60).await.remove(0);
    assert!(set.entrants.iter().any(|e| e.bot_id == id));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let all = ladders
        .list_ladder_matches(pb::ListLadderMatchesRequest {
            ladder_id: "solo-3".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .matches;
    assert_eq!(all.len(), 1, "no match after leaving: {all:?}");
    let line = standings(&server, "solo-3")
        .await
        .into_iter()
        .find(|l| l.bot_id == id)
        .unwrap();
    assert_eq!(line.matches, 1);
    assert!(!line.active);
    cancel.cancel();
    server.stop().await;
}

/// The newcomer's case: the default `beste-boer-4`, one bot alone; the house fills the other
/// three seats and the set is rated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_bot_gets_games_on_a_default_four_seat_ladder() {
    let server = Server::start_default().await;
    let cancel = CancellationToken::new();
    let bot = online_bot(&server, "newcomer", Strategy::Heuristic, &cancel).await;
    let id = enter(&server, &bot, "beste-boer-4", 1).await.bot_id;
    let set = rated(&server, "beste-boer-4", 1, 120).await.remove(0);
    cancel.cancel();
    assert_eq!(set.tables.len(), 4);
    let ids: Vec<&str> = set.entrants.iter().map(|e| e.bot_id.as_str()).collect();
    assert!(ids.contains(&id.as_str()));
    for h in ["house:random", "house:heuristic", "house:heuristic-2"] {
        assert!(ids.contains(&h), "{ids:?}");
    }
    let lines = standings(&server, "beste-boer-4").await;
    assert!(lines.iter().any(|l| l.bot_id == id && l.matches == 1));
    server.stop().await;
}
