//! The client library's LadderService and AccountService calls against a real server: entering,
//! the documented refusals (unknown ladder, entering twice, leaving when not entered), the
//! caller's entry in GetLadder, and bots registered under an account.
#![allow(clippy::unwrap_used)]

mod common;

use bete_client::pb::ErrorReason;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_and_leave_a_default_ladder_with_their_refusals() {
    let server = common::TestServer::start().await;
    let bot = server.bot("ladder-client").await;

    let ladders = bot.list_ladders().await.unwrap();
    let ids: Vec<&str> = ladders.iter().map(|l| l.ladder_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "bete-4",
            "bete-ace-high-4",
            "beast-4",
            "beste-boer-4",
            "lanterlui-4",
            "bester-bube-4",
            "mouche-4",
            "mistigri-4",
            "loo-4",
            "rams-4"
        ]
    );
    assert!(ladders.iter().all(|l| l.seat_count == 4 && l.duplicate));

    let unknown = bot.enter_ladder("no-such-ladder", 1).await.unwrap_err();
    assert_eq!(unknown.reason(), Some(ErrorReason::LadderNotFound));
    let not_entered = bot.leave_ladder("beste-boer-4").await.unwrap_err();
    assert_eq!(not_entered.reason(), Some(ErrorReason::LadderNotEntered));

    // Without a WatchBot stream the entry is accepted; no games come until the bot is online.
    let entry = bot.enter_ladder("beste-boer-4", 2).await.unwrap();
    assert_eq!(entry.ladder_id, "beste-boer-4");
    assert_eq!(entry.capacity, 2);
    assert!(entry.active);
    let again = bot.enter_ladder("beste-boer-4", 1).await.unwrap_err();
    assert_eq!(again.reason(), Some(ErrorReason::LadderAlreadyEntered));

    let seen = bot.get_ladder("beste-boer-4").await.unwrap();
    assert_eq!(seen.ladder.unwrap().ladder_id, "beste-boer-4");
    assert_eq!(seen.entry.unwrap().bot_id, entry.bot_id);

    let left = bot.leave_ladder("beste-boer-4").await.unwrap();
    assert!(!left.active);
    assert_eq!(
        bot.leave_ladder("beste-boer-4").await.unwrap_err().reason(),
        Some(ErrorReason::LadderNotEntered)
    );

    // The public reads need no token.
    let anonymous = bete_client::Client::connect(&server.url).await.unwrap();
    assert_eq!(anonymous.list_ladders().await.unwrap().len(), 10);
    let board = anonymous.get_standings("beste-boer-4").await.unwrap();
    assert!(
        board.iter().all(|s| s.house),
        "only house entrants rated: {board:?}"
    );
    let page = anonymous
        .list_ladder_matches("beste-boer-4", "", 0, "")
        .await
        .unwrap();
    assert!(page.matches.is_empty());
    assert_eq!(
        anonymous
            .get_standings("no-such-ladder")
            .await
            .unwrap_err()
            .reason(),
        Some(ErrorReason::LadderNotFound)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_registers_versions_of_its_bots_and_lists_them() {
    let server = common::TestServer::start().await;
    let client = bete_client::Client::connect(&server.url).await.unwrap();
    let account = client.create_account("team-rocket").await.unwrap();
    assert!(!account.account_id.is_empty() && !account.token.is_empty());

    let v1 = client
        .register_owned(&account.token, "rocket", "")
        .await
        .unwrap();
    let v2 = client
        .register_owned(&account.token, "rocket", "2")
        .await
        .unwrap();
    assert_ne!(v1.bot_id, v2.bot_id, "a new version is a new bot id");
    // The client now plays as the last bot registered.
    assert_eq!(client.token().as_deref(), Some(v2.token.as_str()));
    let again = client
        .register_owned(&account.token, "rocket", "2")
        .await
        .unwrap_err();
    assert_eq!(again.reason(), Some(ErrorReason::BotVersionExists));

    let owner = client.with_token(&account.token).unwrap();
    let bots = owner.list_account_bots().await.unwrap();
    assert_eq!(bots.account_id, account.account_id);
    let listed: Vec<(&str, &str, &str)> = bots
        .bots
        .iter()
        .map(|b| (b.bot_id.as_str(), b.name.as_str(), b.version.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (v1.bot_id.as_str(), "rocket", "1"),
            (v2.bot_id.as_str(), "rocket", "2")
        ]
    );
    server.stop().await;
}
