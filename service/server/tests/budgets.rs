//! What one address may take (issue 26): failed authentications and unfinished tables have
//! budgets; a refusal is RESOURCE_EXHAUSTED / BUDGET_EXHAUSTED naming the budget, with a
//! RetryInfo delay; the address's clients with good tokens are not held.
#![allow(clippy::unwrap_used)]

mod common;

use bete_api::pb;
use common::*;
use tonic::Code;
use tonic_types::StatusExt;

/// The budget a refusal names, checking its code, reason and delay.
fn budget(s: &tonic::Status) -> String {
    assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    assert_eq!(reason(s), "BUDGET_EXHAUSTED", "{s:?}");
    let d = s.get_error_details();
    assert!(
        d.retry_info().and_then(|r| r.retry_delay).is_some(),
        "{s:?}"
    );
    d.error_info().unwrap().metadata["budget"].clone()
}

fn list() -> pb::ListTablesRequest {
    pb::ListTablesRequest::default()
}

/// Wrong tokens from one address: the first few are UNAUTHENTICATED, then the address's
/// budget is spent and its calls with unknown tokens are refused before any lookup, while a
/// bot of the same address whose token is good goes on being served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_authentications_are_limited_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.auth_failures_per_address = "1/3".parse().unwrap();
    })
    .await;
    let ch = srv.channel().await;
    let mut good = register(&ch, "good").await;
    good.client.list_tables(list()).await.unwrap();
    let mut refused = None;
    for i in 0..10 {
        let mut wrong = client_with(&ch, Some(&format!("bete_{i:064x}")));
        let s = wrong.list_tables(list()).await.unwrap_err();
        if s.code() == Code::Unauthenticated {
            assert!(i < 3, "failure {i} was still answered UNAUTHENTICATED");
            continue;
        }
        refused = Some(s);
        break;
    }
    let s = refused.expect("wrong tokens were never limited");
    assert_eq!(budget(&s), "auth_failures_per_address");
    // The good token is served all along.
    for _ in 0..5 {
        good.client.list_tables(list()).await.unwrap();
    }
    srv.stop().await;
}

/// Unfinished tables per address: past the budget CreateTable is refused with its name; a
/// table closed frees its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_tables_are_budgeted_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.open_tables_per_address = 2;
    })
    .await;
    let ch = srv.channel().await;
    let req = || pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        ..Default::default()
    };
    // Two bots from one address: the budget is the address's, not each bot's.
    let mut a = register(&ch, "a").await;
    let mut b = register(&ch, "b").await;
    a.client.create_table(req()).await.unwrap();
    b.client.create_table(req()).await.unwrap();
    let s = a.client.create_table(req()).await.unwrap_err();
    assert_eq!(budget(&s), "open_tables_per_address");
    let s = b.client.create_table(req()).await.unwrap_err();
    assert_eq!(budget(&s), "open_tables_per_address");
    srv.stop().await;
}

/// A client that ignores RetryInfo and calls again at once: its address's refusals past
/// `refusals_per_address` are held a second before they are sent (and counted), so it spins
/// at the pace of its own concurrency; calls that are served are never held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_past_their_rate_are_held_back() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.metrics_addr = Some(metrics);
        c.limits.open_tables_per_address = 1;
        c.limits.refusals_per_address = "1/3".parse().unwrap();
    })
    .await;
    let ch = srv.channel().await;
    let mut bot = register(&ch, "spinner").await;
    let create = || pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        ..Default::default()
    };
    bot.client.create_table(create()).await.unwrap();
    // The address's budget of one unfinished table is spent: every creation is refused. The
    // first refusals (the burst of 3) come at once; the ones after it are held.
    let mut held = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let s = bot.client.create_table(create()).await.unwrap_err();
        assert_eq!(budget(&s), "open_tables_per_address");
        held.push(t.elapsed() >= bete_server::edge::TARPIT_DELAY);
    }
    // (The rate refills one a second, during the hold too: the fifth may go out at once.)
    assert_eq!(held[..4], [false, false, false, true], "{held:?}");
    let delayed = gauge(metrics, "bete_refusals_delayed_total").await;
    assert_eq!(delayed, held.iter().filter(|h| **h).count() as i64);
    // A served call of the same address is neither held nor counted.
    bot.client.list_tables(list()).await.unwrap();
    assert_eq!(gauge(metrics, "bete_refusals_delayed_total").await, delayed);
    srv.stop().await;
}

/// Bots and accounts are counted per address (issue 26): past the address's count, RegisterBot
/// is refused whatever token it carries (a fresh account's included: accounts do not multiply
/// the address's budget), and so is CreateAccount past its own count; each refusal names its
/// budget with a delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_and_accounts_are_counted_per_address() {
    use bete_api::pb::account_service_client::AccountServiceClient;
    use bete_api::pb::bot_service_client::BotServiceClient;
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.bots_per_address = 3;
        c.limits.accounts_per_address_count = 2;
    })
    .await;
    let ch = srv.channel().await;
    let bots = |token: Option<&str>| {
        BotServiceClient::with_interceptor(ch.clone(), Bearer(token.map(str::to_string)))
    };
    let bot = |name: &str| pb::RegisterBotRequest {
        name: name.into(),
        owner: "tests".into(),
        ..Default::default()
    };
    // A refused registration (a bad name) takes no place.
    bots(None).register_bot(bot("")).await.unwrap_err();
    register(&ch, "one").await;
    let mut accounts = AccountServiceClient::new(ch.clone());
    let mut tokens = Vec::new();
    for name in ["team-a", "team-b"] {
        let acct = accounts
            .create_account(pb::CreateAccountRequest { name: name.into() })
            .await
            .unwrap()
            .into_inner();
        tokens.push(acct.token);
    }
    let s = accounts
        .create_account(pb::CreateAccountRequest {
            name: "team-c".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(budget(&s), "accounts_per_address");
    bots(Some(&tokens[0]))
        .register_bot(bot("two"))
        .await
        .unwrap();
    bots(Some(&tokens[1]))
        .register_bot(bot("three"))
        .await
        .unwrap();
    for token in [None, Some(tokens[0].as_str()), Some(tokens[1].as_str())] {
        let s = bots(token).register_bot(bot("four")).await.unwrap_err();
        assert_eq!(budget(&s), "bots_per_address");
    }
    srv.stop().await;
}
