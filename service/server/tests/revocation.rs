//! Token rotation and revocation against the real server: the owner rotates a bot's token; the
//! old token's open streams end at once with UNAUTHENTICATED / TOKEN_REVOKED, its next call
//! gets the same, the new token works at the bot's seats, and all of it survives a restart.
#![allow(clippy::unwrap_used)]

mod common;

use bete_api::pb;
use bete_api::pb::account_service_client::AccountServiceClient;
use bete_api::pb::bot_service_client::BotServiceClient;
use common::*;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::transport::Channel;

type Intercepted = tonic::service::interceptor::InterceptedService<Channel, Bearer>;

fn bots(ch: &Channel, token: &str) -> BotServiceClient<Intercepted> {
    BotServiceClient::with_interceptor(ch.clone(), Bearer(Some(token.to_string())))
}

async fn rotate(ch: &Channel, caller: &str, bot_id: &str) -> Result<String, tonic::Status> {
    bots(ch, caller)
        .rotate_bot_token(pb::RotateBotTokenRequest {
            bot_id: bot_id.into(),
        })
        .await
        .map(|r| {
            let r = r.into_inner();
            assert_eq!(r.bot_id, bot_id);
            r.token
        })
}

fn revoked(s: &tonic::Status) {
    assert_eq!(
        (s.code(), reason(s).as_str()),
        (Code::Unauthenticated, "TOKEN_REVOKED"),
        "{s:?}"
    );
}

/// Reads a stream until it ends; it must end with TOKEN_REVOKED.
macro_rules! ends_revoked {
    ($stream:expr) => {
        loop {
            match timeout(10, $stream.message())
                .await
                .expect("the stream did not end")
            {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the stream ended without a status"),
                Err(s) => {
                    revoked(&s);
                    break;
                }
            }
        }
    };
}

/// A bot without an account rotates its own token while seated with three streams open: all
/// three end with TOKEN_REVOKED, the old token is refused, the new one plays on at the same
/// seat; after a restart the old token is still revoked and the new one still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_token_ends_its_streams_and_stays_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "rotating").await;
    let table = me
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![house(1, pb::HouseBotPolicy::Random)],
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    me.sit(&table, 0).await;
    let mut watch_bot = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut watch_table = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: table.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let (_submit_tx, submit_rx) = tokio::sync::mpsc::channel(1);
    let mut submits = me
        .client
        .submit_actions(ReceiverStream::new(submit_rx))
        .await
        .unwrap()
        .into_inner();
    // Each stream is live before the rotation (the first message of each watch arrived).
    timeout(10, watch_bot.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    timeout(10, watch_table.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();

    let new = rotate(&ch, &me.token, &me.id).await.unwrap();
    assert_ne!(new, me.token);
    assert!(new.starts_with("bete_"));

    // Every open stream ends with TOKEN_REVOKED (after what was already queued).
    ends_revoked!(watch_bot);
    ends_revoked!(watch_table);
    ends_revoked!(submits);

    // The next call with the old token: TOKEN_REVOKED; and rotating again with it too.
    let s = me
        .client
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: table.clone(),
        })
        .await
        .unwrap_err();
    revoked(&s);
    revoked(&rotate(&ch, &me.token, &me.id).await.unwrap_err());
    // A token never issued is still plain UNAUTHENTICATED.
    let e = client_with(&ch, Some("bete_never_issued"))
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: table.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "UNAUTHENTICATED");

    // The new token is the same bot at the same seat.
    let mut fresh = client_with(&ch, Some(&new));
    let view = fresh
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: table.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(view.viewer_seat, Some(0));
    let mut stream = fresh
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    timeout(10, stream.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    drop(stream);
    srv.stop().await;

    // After a restart: the stored hash changed, the old one is recorded as revoked.
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let s = client_with(&ch, Some(&me.token))
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: table.clone(),
        })
        .await
        .unwrap_err();
    revoked(&s);
    let view = client_with(&ch, Some(&new))
        .get_seat_view(pb::GetSeatViewRequest { table_id: table })
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(view.viewer_seat, Some(0));
    // And it rotates again: the second token is revoked in its turn.
    let third = rotate(&ch, &new, &me.id).await.unwrap();
    revoked(&rotate(&ch, &new, &me.id).await.unwrap_err());
    rotate(&ch, &third, &me.id).await.unwrap();
    srv.stop().await;
}

/// Only the owner rotates: a bot of an account by its account's token, never by its own token
/// (a leaked bot token cannot lock the owner out) nor by another account or another bot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_owner_rotates_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let account = |name: &'static str| {
        let ch = ch.clone();
        async move {
            AccountServiceClient::new(ch)
                .create_account(pb::CreateAccountRequest { name: name.into() })
                .await
                .unwrap()
                .into_inner()
                .token
        }
    };
    let (team, rival) = (account("team").await, account("rival").await);
    let owned = bots(&ch, &team)
        .register_bot(pb::RegisterBotRequest {
            name: "owned".into(),
            owner: "tests".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let loner = register(&ch, "loner").await;

    let denied = |s: tonic::Status| {
        assert_eq!(
            (s.code(), reason(&s).as_str()),
            (Code::PermissionDenied, "NOT_BOT_OWNER"),
            "{s:?}"
        )
    };
    denied(rotate(&ch, &owned.token, &owned.bot_id).await.unwrap_err());
    denied(rotate(&ch, &rival, &owned.bot_id).await.unwrap_err());
    denied(rotate(&ch, &loner.token, &owned.bot_id).await.unwrap_err());
    denied(rotate(&ch, &team, &loner.id).await.unwrap_err());
    let s = rotate(&ch, &team, "b_nobody").await.unwrap_err();
    assert_eq!(
        (s.code(), reason(&s).as_str()),
        (Code::NotFound, "BOT_NOT_FOUND")
    );
    let s = rotate(&ch, "beteacct_unknown", &owned.bot_id)
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unauthenticated);

    let new = rotate(&ch, &team, &owned.bot_id).await.unwrap();
    let mut old = client_with(&ch, Some(&owned.token));
    revoked(
        &old.list_tables(pb::ListTablesRequest::default())
            .await
            .unwrap_err(),
    );
    client_with(&ch, Some(&new))
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap();
    srv.stop().await;
}
