//! The `search` house policy at real tables: it plays matches to the end (a Part II ruleset
//! included), its budget is bounded, and it answers within the smallest deadline a table may
//! have.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;

use bete_api::pb;
use common::*;
use tonic::Code;

/// At most one search runs per core in a process (the limit is the server's, process-wide), so
/// this file's tests, which share a process, run one at a time to count each table's own.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn search(seat: u32, budget_ms: u32) -> pb::HouseBotSeat {
    pb::HouseBotSeat {
        seat,
        policy: pb::HouseBotPolicy::Search.into(),
        search_budget_ms: budget_ms,
    }
}

/// A one-round table of house bots (seat 0 searches with `budget_ms`, unless `all_search`),
/// played to its end; returns the finished table.
async fn play_house_table(
    c: &mut Client,
    ruleset: pb::Ruleset,
    seats: u32,
    budget_ms: u32,
    deadline_ms: u32,
    all_search: bool,
) -> pb::Table {
    let house_bots = (0..seats)
        .map(|s| {
            if s == 0 || all_search {
                search(s, budget_ms)
            } else {
                house(s, pb::HouseBotPolicy::Heuristic)
            }
        })
        .collect();
    let t = c
        .create_table(pb::CreateTableRequest {
            ruleset: ruleset.into(),
            seats,
            config: HashMap::from([("rounds".to_string(), "1".to_string())]),
            decision_deadline_ms: deadline_ms,
            house_bots,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    let id = t.table_id;
    for _ in 0..1_200 {
        let t = c
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        if t.state == pb::TableState::Finished as i32 {
            return t;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{ruleset:?}: the house table {id} did not finish in 120 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_house_bot_plays_matches_to_the_end() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "search-watcher").await;
    // Part I and Part II rulesets.
    for (ruleset, seats) in [
        (pb::Ruleset::BesteBoer, 4),
        (pb::Ruleset::Bete, 4),
        (pb::Ruleset::Mouche, 4),
    ] {
        let t = play_house_table(&mut me.client, ruleset, seats, 5, 0, false).await;
        let s0 = &t.seats[0];
        assert_eq!(s0.occupant, pb::OccupantKind::HouseBot as i32);
        assert_eq!(s0.policy, pb::HouseBotPolicy::Search as i32);
        assert_eq!(s0.search_budget_ms, 5);
        assert_eq!(s0.bot_name, "house:search:5ms");
        assert_eq!(s0.strikes, 0, "{ruleset:?}");
        assert_eq!(t.seats[1].search_budget_ms, 0);
        let record = me
            .client
            .get_game_record(pb::GetGameRecordRequest {
                table_id: t.table_id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .record_json;
        // The record replays in the engine: every move the search made was legal.
        assert!(
            bete_rules::record::replay_json(&record).is_ok(),
            "{ruleset:?}"
        );
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_budgets_out_of_bounds_are_refused() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "search-bounds").await;
    let create = |h: pb::HouseBotSeat| pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        house_bots: vec![h],
        ..Default::default()
    };
    let bad = [
        search(1, 0),
        search(1, 3_600_000),
        search(1, 10_001),
        pb::HouseBotSeat {
            seat: 1,
            policy: pb::HouseBotPolicy::Heuristic.into(),
            search_budget_ms: 50,
        },
    ];
    for h in bad {
        let e = me.client.create_table(create(h)).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{h:?}");
        assert_eq!(reason(&e), "SEARCH_BUDGET_OUT_OF_RANGE", "{h:?}");
        assert_eq!(bad_fields(&e), ["house_bots[0].search_budget_ms"], "{h:?}");
    }
    // The bounds themselves are accepted, and the table shows the budget asked for.
    for ms in [1, 10_000] {
        let t = me
            .client
            .create_table(create(search(1, ms)))
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        assert_eq!(t.seats[1].policy, pb::HouseBotPolicy::Search as i32);
        assert_eq!(t.seats[1].search_budget_ms, ms);
        assert_eq!(t.seats[1].bot_name, format!("house:search:{ms}ms"));
    }
    srv.stop().await;
}

/// Every seat searches with a budget of ten seconds at a table with the smallest deadline: each
/// decision is cut to a quarter of the deadline, so the seats answer in time (a late house bot
/// gets the safe action and a strike, like any seat). Without the cap the searches would hold
/// every core for ten seconds and be late, and the decisions after them would find no core
/// (the server's `bete_house_searches_total` counts each outcome). A machine loaded far beyond
/// its cores can still make a decision miss 20 ms now and then (the store's own commit counts
/// against the deadline too), so the test allows one late decision in ten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_bot_answers_within_the_smallest_deadline() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| c.metrics_addr = Some(metrics)).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "search-deadline").await;
    let smallest = bete_server::config::MIN_DEADLINE_MS as u32;
    let t = play_house_table(
        &mut me.client,
        pb::Ruleset::BesteBoer,
        4,
        10_000,
        smallest,
        true,
    )
    .await;
    assert_eq!(t.decision_deadline_ms, smallest);
    let searches = |outcome: &'static str| {
        let name = format!("bete_house_searches_total{{outcome=\"{outcome}\"}}");
        async move {
            let body = http_get(metrics, "/metrics").await;
            body.lines()
                .find_map(|l| l.strip_prefix(name.as_str())?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        }
    };
    let answered = searches("answered").await;
    let late = searches("late").await;
    let no_core = searches("no_core").await;
    // Only this table searches here, one seat at a time.
    assert_eq!(no_core, 0);
    assert!(answered >= 20, "{answered} answered");
    assert!(late * 10 <= answered, "{late} late, {answered} answered");
    let strikes: u32 = t.seats.iter().map(|s| s.strikes).sum();
    assert_eq!(u64::from(strikes), late);
    for s in &t.seats {
        assert_eq!(s.policy, pb::HouseBotPolicy::Search as i32);
    }
    srv.stop().await;
}

/// A ladder that enters `search` seats it with the ladder's budget at its tables, and the match
/// is played to the end against a real bot on its WatchBot stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladder_enters_search_house_bots() {
    use bete_api::pb::ladder_service_client::LadderServiceClient;
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ladders = dir.path().join("ladders.toml");
    std::fs::write(
        &ladders,
        "[[ladder]]\nid = \"search-3\"\nruleset = \"beste-boer\"\nseats = 3\n\
         deals_per_match = 3\nduplicate = false\nsearch_budget_ms = 7\n\
         house_entrants = [\"search\", \"search-2\"]\n",
    )
    .unwrap();
    let srv = TestServer::start(dir.path().join("data"), |c| c.ladders = Some(ladders)).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "ladder-player").await;
    let mut ladder =
        LadderServiceClient::with_interceptor(ch.clone(), Bearer(Some(me.token.clone())));
    let l = ladder
        .get_ladder(pb::GetLadderRequest {
            ladder_id: "search-3".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .ladder
        .unwrap();
    assert_eq!(
        l.house_entrants,
        [
            pb::HouseBotPolicy::Search as i32,
            pb::HouseBotPolicy::Search as i32
        ]
    );
    assert_eq!(
        l.search_budget_ms, 7,
        "the house entrants' strength is shown"
    );
    let mut stream = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    ladder
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: "search-3".into(),
            capacity: 1,
        })
        .await
        .unwrap();
    let mut table_id = None;
    let mut n = 0;
    while let Some(m) = timeout(120, stream.message()).await.unwrap().unwrap() {
        use pb::watch_bot_response::Kind;
        match m.kind.unwrap() {
            Kind::Seated(s) => table_id = Some(s.table_id),
            Kind::Decision(d) => {
                let view = d.view.unwrap();
                n += 1;
                me.client
                    .submit_action(pb::SubmitActionRequest {
                        table_id: d.table_id.clone(),
                        action: Some(view.legal_actions[0].clone()),
                        expected_seq: d.seq,
                        request_id: format!("r{n}"),
                    })
                    .await
                    .unwrap();
            }
            Kind::Event(e) => {
                if let Some(pb::event::Body::MatchEnded(_)) = e.body {
                    break;
                }
            }
            _ => {}
        }
    }
    let t = me
        .client
        .get_table(pb::GetTableRequest {
            table_id: table_id.unwrap(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(t.state, pb::TableState::Finished as i32);
    let searchers: Vec<_> = t
        .seats
        .iter()
        .filter(|s| s.policy == pb::HouseBotPolicy::Search as i32)
        .collect();
    assert_eq!(searchers.len(), 2, "{:?}", t.seats);
    for s in searchers {
        assert_eq!(s.search_budget_ms, 7);
        assert_eq!(s.bot_name, "house:search:7ms");
        assert_eq!(s.strikes, 0);
    }
    srv.stop().await;
}
