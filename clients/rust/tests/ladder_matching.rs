//! Ladders against a real server over loopback, with real bots: outside bots meet each other
//! (the house only fills what they cannot), and griefers are taken off at once, judged over
//! their recent decisions, and wait a doubling cooldown before they may enter again.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bete_client::{Client, Strategy, pb};
use common::ladder::{LadderServer as Server, entry, online_bot, reason_and_retry, taken_off};
use tokio_util::sync::CancellationToken;

fn enter_req(ladder: &str) -> pb::EnterLadderRequest {
    pb::EnterLadderRequest {
        ladder_id: ladder.into(),
        capacity: 1,
    }
}

/// Rated matches of `ladder` from WatchLadderResults until `enough` says so, or `secs` pass.
async fn rated_until(
    server: &Server,
    ladder: &str,
    secs: u64,
    enough: impl Fn(&[pb::LadderMatch]) -> bool,
) -> Vec<pb::LadderMatch> {
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
    let _ = tokio::time::timeout(Duration::from_secs(secs), async {
        while !enough(&out) {
            let msg = stream.message().await.unwrap().unwrap();
            if let Some(pb::watch_ladder_results_response::Kind::Rated(m)) = msg.kind {
                out.push(m);
            }
        }
    })
    .await;
    out
}

fn outside(m: &pb::LadderMatch) -> Vec<&str> {
    m.entrants
        .iter()
        .filter(|e| !e.bot_id.starts_with("house:"))
        .map(|e| e.bot_id.as_str())
        .collect()
}

const MEET: &str = r#"
[[ladder]]
id = "meet-4"
ruleset = "beste-boer"
seats = 4
deals_per_match = 4
decision_deadline_ms = 5000
max_group_meetings_per_day = 1000
house_fill_after_ms = 3000
"#;

/// Eight outside bots entering together, with the house entrants on the ladder: within six
/// sets each, at least 90 % of the seats at their tables are theirs and all 28 pairs met.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_outside_bots_fill_their_tables_and_every_pair_meets() {
    let server = Server::start(MEET, 17).await;
    let cancel = CancellationToken::new();
    let mut bots = Vec::new();
    for i in 0..8 {
        let strategy = if i % 2 == 0 {
            Strategy::Heuristic
        } else {
            Strategy::Random
        };
        bots.push(online_bot(&server, &format!("b{i}"), strategy, &cancel).await);
    }
    // Every stream open before the first entry, and the entries sent together.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut entering = Vec::new();
    for b in &bots {
        let mut l = server.ladders(b.token()).await;
        entering.push(tokio::spawn(async move {
            l.enter_ladder(enter_req("meet-4"))
                .await
                .unwrap()
                .into_inner()
                .entry
                .unwrap()
                .bot_id
        }));
    }
    let mut ids = Vec::new();
    for e in entering {
        ids.push(e.await.unwrap());
    }
    let sets =
        |ms: &[pb::LadderMatch], id: &str| ms.iter().filter(|m| outside(m).contains(&id)).count();
    let matches = rated_until(&server, "meet-4", 400, |ms| {
        ids.iter().all(|id| sets(ms, id) >= 6)
    })
    .await;
    cancel.cancel();
    assert!(
        ids.iter().all(|id| sets(&matches, id) >= 6),
        "not every bot played six sets: {} rated",
        matches.len()
    );
    // Each bot's first six sets.
    let mut counted: HashMap<&str, usize> = HashMap::new();
    let (mut theirs, mut seats) = (0usize, 0usize);
    let mut pairs: HashSet<(String, String)> = HashSet::new();
    for m in &matches {
        let out = outside(m);
        if out
            .iter()
            .all(|id| counted.get(id).copied().unwrap_or(0) >= 6)
        {
            continue;
        }
        for id in &out {
            *counted.entry(id).or_default() += 1;
        }
        theirs += out.len();
        seats += m.entrants.len();
        for (k, a) in out.iter().enumerate() {
            for b in &out[k + 1..] {
                let p = if a < b {
                    (a.to_string(), b.to_string())
                } else {
                    (b.to_string(), a.to_string())
                };
                pairs.insert(p);
            }
        }
    }
    let share = theirs as f64 / seats as f64;
    eprintln!(
        "outside seats {theirs} of {seats} ({:.1} %), pairs met {} of 28",
        share * 100.0,
        pairs.len()
    );
    assert!(
        share >= 0.9,
        "outside bots held {:.1} % of their seats",
        share * 100.0
    );
    assert_eq!(pairs.len(), 28, "pairs met: {pairs:?}");
    server.stop().await;
}

/// Two outside bots online with the house entrants meet within their first three sets, and
/// the house fills the seats no outside bot could take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_outside_bots_meet_within_three_sets() {
    let server = Server::start(MEET, 23).await;
    let cancel = CancellationToken::new();
    let a = online_bot(&server, "a", Strategy::Heuristic, &cancel).await;
    let b = online_bot(&server, "b", Strategy::Random, &cancel).await;
    let ida = server
        .ladders(a.token())
        .await
        .enter_ladder(enter_req("meet-4"))
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap()
        .bot_id;
    // The second a little later: the first is already playing the house.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let idb = server
        .ladders(b.token())
        .await
        .enter_ladder(enter_req("meet-4"))
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap()
        .bot_id;
    let together = |m: &pb::LadderMatch| {
        let o = outside(m);
        o.contains(&ida.as_str()) && o.contains(&idb.as_str())
    };
    let matches = rated_until(&server, "meet-4", 240, |ms| {
        ms.iter().any(together) || ms.len() >= 6
    })
    .await;
    cancel.cancel();
    let first = matches
        .iter()
        .position(together)
        .expect("the two bots never met");
    for id in [&ida, &idb] {
        let before = matches[..=first]
            .iter()
            .filter(|m| outside(m).contains(&id.as_str()))
            .count();
        assert!(
            before <= 3,
            "{id} met the other bot only in its set {before}"
        );
    }
    assert_eq!(matches[first].entrants.len(), 4);
    server.stop().await;
}

const STRICT: &str = r#"
[[ladder]]
id = "strict-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 40
max_strikes_per_match = 2
strike_window = 50
max_strike_share = 0.05
strike_cooldown_ms = 1500
house_entrants = ["random", "heuristic"]
"#;

/// A bot that holds a WatchBot stream and answers only after its first `skip` decisions at
/// each table (the rest with the first legal action): `skip` timeouts per table.
fn partial_bot(bot: Client, skip: usize, cancel: CancellationToken) {
    skipping_bot(bot, skip, true, cancel);
}

/// [`partial_bot`], skipping its first `skip` decisions at each table (`per_table`) or only its
/// first `skip` decisions of all.
fn skipping_bot(bot: Client, skip: usize, per_table: bool, cancel: CancellationToken) {
    tokio::spawn(async move {
        let mut stream = bot.open_watch_bot(HashMap::new()).await.unwrap();
        let mut seen: HashMap<String, usize> = HashMap::new();
        loop {
            let msg = tokio::select! {
                () = cancel.cancelled() => return,
                m = stream.message() => m,
            };
            let Ok(Some(msg)) = msg else { return };
            let Some(pb::watch_bot_response::Kind::Decision(d)) = msg.kind else {
                continue;
            };
            let n = seen
                .entry(if per_table {
                    d.table_id.clone()
                } else {
                    String::new()
                })
                .or_default();
            *n += 1;
            if *n <= skip {
                continue;
            }
            let Some(action) = d
                .view
                .as_ref()
                .and_then(|v| v.legal_actions.first().cloned())
            else {
                continue;
            };
            let _ = bot.submit_action(&d.table_id, &action, d.seq).await;
        }
    });
}

/// A bot that never answers is taken off at its first timeout past the window's allowance
/// (two of fifty here): at once, not at the table's end; its seat is auto-moved at once from
/// then on, the set is played out and rated with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_bot_is_taken_off_at_its_first_strike_past_the_limit() {
    let server = Server::start(STRICT, 9).await;
    let bot = common::bot_at(&server.url, "silent").await;
    let cancel = CancellationToken::new();
    partial_bot(bot.clone(), usize::MAX, cancel.clone());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ladders = server.ladders(bot.token()).await;
    ladders.enter_ladder(enter_req("strict-3")).await.unwrap();
    let set = rated_until(&server, "strict-3", 60, |ms| !ms.is_empty())
        .await
        .remove(0);
    let e = entry(&mut ladders, "strict-3").await;
    assert!(!e.active);
    assert!(
        e.removed_reason.contains("3 of its last 3 decisions"),
        "removed at the third timeout: {e:?}"
    );
    let me = set
        .entrants
        .iter()
        .find(|x| !x.bot_id.starts_with("house:"))
        .unwrap();
    // Every decision of its seat timed out or was auto-moved after the removal.
    assert!(me.strikes > 3, "{me:?}");
    // Played out with it in it, no further set for it.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let all = ladders
        .list_ladder_matches(pb::ListLadderMatchesRequest {
            ladder_id: "strict-3".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .matches;
    assert_eq!(all.len(), 1, "{all:?}");
    cancel.cancel();
    server.stop().await;
}

/// A bot timing out exactly the per-table limit (two) at every table was never taken off by
/// the per-table rule; the window of its last fifty decisions catches it within two tables.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timing_out_the_per_table_limit_at_every_table_is_caught() {
    let server = Server::start(STRICT, 5).await;
    let bot = common::bot_at(&server.url, "sly").await;
    let cancel = CancellationToken::new();
    partial_bot(bot.clone(), 2, cancel.clone());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ladders = server.ladders(bot.token()).await;
    ladders.enter_ladder(enter_req("strict-3")).await.unwrap();
    let removed = taken_off(&mut ladders, "strict-3", 120).await;
    assert!(
        removed.removed_reason.contains("of its last"),
        "{removed:?}"
    );
    // Taken off by the window, never by one table's count: no table had more than two.
    let set = rated_until(&server, "strict-3", 60, |ms| !ms.is_empty()).await;
    let mine: Vec<u32> = set
        .iter()
        .flat_map(|m| m.entrants.iter())
        .filter(|e| !e.bot_id.starts_with("house:"))
        .map(|e| e.strikes)
        .collect();
    assert!(!mine.is_empty());
    cancel.cancel();
    server.stop().await;
}

/// A removed bot entering again is refused with LADDER_COOLDOWN and a RetryInfo delay; after
/// the delay it may enter, and a second removal doubles the wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_bot_waits_a_cooldown_that_doubles() {
    let server = Server::start(STRICT, 3).await;
    let bot = common::bot_at(&server.url, "again").await;
    let cancel = CancellationToken::new();
    partial_bot(bot.clone(), usize::MAX, cancel.clone());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ladders = server.ladders(bot.token()).await;
    let mut waits = Vec::new();
    for removal in 1..=2u32 {
        ladders.enter_ladder(enter_req("strict-3")).await.unwrap();
        tokio::time::timeout(Duration::from_secs(60), async {
            while entry(&mut ladders, "strict-3").await.active {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("not taken off");
        let e = ladders
            .enter_ladder(enter_req("strict-3"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
        let (reason, retry, meta) = reason_and_retry(&e);
        assert_eq!(reason, "LADDER_COOLDOWN", "{e:?}");
        assert_eq!(meta.get("removals"), Some(&removal.to_string()), "{meta:?}");
        let retry = retry.expect("RetryInfo");
        assert!(
            retry <= Duration::from_millis(1500u64 << (removal - 1)),
            "{retry:?}"
        );
        waits.push(retry);
        tokio::time::sleep(retry + Duration::from_millis(50)).await;
    }
    // The second wait is about twice the first (both measured just after the removal).
    assert!(waits[1] > Duration::from_millis(1600), "{waits:?}");
    assert!(waits[0] <= Duration::from_millis(1500), "{waits:?}");
    // After the second wait it may enter again.
    ladders.enter_ladder(enter_req("strict-3")).await.unwrap();
    cancel.cancel();
    server.stop().await;
}

/// A removal outlives a restart: the cooldown is in the store, so the restarted server still
/// refuses the bot with LADDER_COOLDOWN, its RetryInfo the time actually left (not a fresh
/// wait, nor none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_bot_still_waits_after_a_restart() {
    let server = Server::start(
        &STRICT.replace("strike_cooldown_ms = 1500", "strike_cooldown_ms = 60000"),
        4,
    )
    .await;
    let bot = common::bot_at(&server.url, "restarted").await;
    let token = bot.token();
    let cancel = CancellationToken::new();
    partial_bot(bot.clone(), usize::MAX, cancel.clone());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ladders = server.ladders(token.clone()).await;
    ladders.enter_ladder(enter_req("strict-3")).await.unwrap();
    taken_off(&mut ladders, "strict-3", 60).await;
    let removed_at = std::time::Instant::now();
    cancel.cancel();

    let server = server.restart(4).await;
    let mut ladders = server.ladders(token).await;
    let e = ladders
        .enter_ladder(enter_req("strict-3"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    let (reason, retry, meta) = reason_and_retry(&e);
    assert_eq!(reason, "LADDER_COOLDOWN", "{e:?}");
    assert_eq!(
        meta.get("removals").map(String::as_str),
        Some("1"),
        "{meta:?}"
    );
    let retry = retry.expect("RetryInfo");
    let left = Duration::from_secs(60).saturating_sub(removed_at.elapsed());
    assert!(
        retry <= left + Duration::from_secs(1),
        "{retry:?} against {left:?} left"
    );
    assert!(
        retry + Duration::from_secs(5) >= left,
        "{retry:?} against {left:?} left"
    );
    // The entry stayed off and its reason readable.
    let again = entry(&mut ladders, "strict-3").await;
    assert!(
        !again.active && again.removed_reason.contains("taken off"),
        "{again:?}"
    );
    server.stop().await;
}

const WINDOW: &str = r#"
[[ladder]]
id = "window-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 500
duplicate = false
luck_adjusted = false
max_strikes_per_match = 100
strike_window = 50
max_strike_share = 0.05
strike_cooldown_ms = 60000
house_entrants = ["random", "heuristic"]
"#;

/// The strike window outlives a restart: a bot with two timeouts in its window (the most the
/// ladder allows) that comes back after a restart and lets one more decision time out is taken
/// off at that one, judged with the decisions before the restart ("3 of its last N", N > 3).
/// A window forgotten by the restart would let it off until its third timeout after it
/// ("3 of its last 3").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_the_strike_window() {
    let server = Server::start(WINDOW, 6).await;
    let bot = common::bot_at(&server.url, "twice").await;
    let token = bot.token().unwrap();
    let cancel = CancellationToken::new();
    // Its first two decisions time out, then it answers every one.
    skipping_bot(bot.clone(), 2, false, cancel.clone());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ladders = server.ladders(Some(token.clone())).await;
    ladders.enter_ladder(enter_req("window-3")).await.unwrap();
    let first = rated_until(&server, "window-3", 60, |ms| !ms.is_empty()).await;
    let me = first[0]
        .entrants
        .iter()
        .find(|e| !e.bot_id.starts_with("house:"))
        .unwrap();
    assert_eq!(me.strikes, 2, "{me:?}");
    // It leaves (its decisions from now on are not judged: a table of it still playing may
    // auto-move it through the restart) and stops.
    ladders
        .leave_ladder(pb::LeaveLadderRequest {
            ladder_id: "window-3".into(),
        })
        .await
        .unwrap();
    cancel.cancel();

    let server = server.restart(6).await;
    let mut ladders = server.ladders(Some(token.clone())).await;
    // Never taken off: it enters again at once, and comes back silent.
    ladders.enter_ladder(enter_req("window-3")).await.unwrap();
    let bot = Client::connect(&server.url)
        .await
        .unwrap()
        .with_token(&token)
        .unwrap();
    let cancel = CancellationToken::new();
    partial_bot(bot, usize::MAX, cancel.clone());
    let removed = taken_off(&mut ladders, "window-3", 60).await;
    let why = &removed.removed_reason;
    let of: usize = why
        .split("3 of its last ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("removed for {why:?}, not at its third timeout"));
    assert!(
        of > 3,
        "judged without the decisions before the restart: {why:?}"
    );
    cancel.cancel();
    server.stop().await;
}

/// Entering and leaving in a loop runs into the per-bot limit of ladder entries (20 at once,
/// then one a second), refused with RATE_LIMITED and a RetryInfo delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enter_leave_loop_is_rate_limited() {
    let server = Server::start(STRICT, 1).await;
    let bot = common::bot_at(&server.url, "churn").await;
    let mut ladders = server.ladders(bot.token()).await;
    let mut refused = None;
    for i in 0..30 {
        let r = if i % 2 == 0 {
            ladders
                .enter_ladder(enter_req("strict-3"))
                .await
                .map(|_| ())
        } else {
            ladders
                .leave_ladder(pb::LeaveLadderRequest {
                    ladder_id: "strict-3".into(),
                })
                .await
                .map(|_| ())
        };
        if let Err(e) = r {
            refused = Some((i, e));
            break;
        }
    }
    let (i, e) = refused.expect("thirty enters and leaves all passed");
    assert_eq!(i, 20, "refused after the burst of 20");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    let (reason, retry, _) = reason_and_retry(&e);
    assert_eq!(reason, "RATE_LIMITED");
    assert!(retry.is_some());
    server.stop().await;
}
