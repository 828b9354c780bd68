//! Accounts against the real server: open and closed signup, the admin token, owners, bot
//! versions and the account's bot list.
#![allow(clippy::unwrap_used)]

mod common;

use bete_api::pb;
use bete_api::pb::account_service_client::AccountServiceClient;
use bete_api::pb::bot_service_client::BotServiceClient;
use common::*;
use tonic::transport::Channel;

fn accounts(
    ch: &Channel,
    token: Option<&str>,
) -> AccountServiceClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
    AccountServiceClient::with_interceptor(ch.clone(), Bearer(token.map(str::to_string)))
}

fn bots(
    ch: &Channel,
    token: Option<&str>,
) -> BotServiceClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
    BotServiceClient::with_interceptor(ch.clone(), Bearer(token.map(str::to_string)))
}

fn bot(name: &str, version: &str) -> pb::RegisterBotRequest {
    pb::RegisterBotRequest {
        name: name.into(),
        owner: "tests".into(),
        version: version.into(),
    }
}

#[tokio::test]
async fn closed_signup_takes_accounts_from_the_operator_only() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.open_signup = false;
        c.admin_token = Some("s3cret-admin".into());
    })
    .await;
    let ch = srv.channel().await;
    // No account: no bot.
    let e = bots(&ch, None)
        .register_bot(bot("loner", ""))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (tonic::Code::PermissionDenied, "SIGNUP_CLOSED")
    );
    // No admin token, or a wrong one: no account.
    for token in [None, Some("guess")] {
        let e = accounts(&ch, token)
            .create_account(pb::CreateAccountRequest {
                name: "team".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(
            (e.code(), reason(&e).as_str()),
            (tonic::Code::PermissionDenied, "ADMIN_REQUIRED")
        );
    }
    let acct = accounts(&ch, Some("s3cret-admin"))
        .create_account(pb::CreateAccountRequest {
            name: "team".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(acct.token.starts_with("beteacct_"));
    let r = bots(&ch, Some(&acct.token))
        .register_bot(bot("alpha", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.owner_id, acct.account_id);
    assert_eq!(r.version, "1");
    // A new version is a new bot of the same lineage; the same version again is refused.
    let r2 = bots(&ch, Some(&acct.token))
        .register_bot(bot("alpha", "2"))
        .await
        .unwrap()
        .into_inner();
    assert_ne!(r2.bot_id, r.bot_id);
    let e = bots(&ch, Some(&acct.token))
        .register_bot(bot("alpha", "2"))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (tonic::Code::AlreadyExists, "BOT_VERSION_EXISTS")
    );
    // A bot token is not an account token.
    let e = bots(&ch, Some(&r.token))
        .register_bot(bot("beta", ""))
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "SIGNUP_CLOSED");
    let e = bots(&ch, Some("beteacct_forged"))
        .register_bot(bot("beta", ""))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated);
    let list = accounts(&ch, Some(&acct.token))
        .list_account_bots(pb::ListAccountBotsRequest {})
        .await
        .unwrap()
        .into_inner();
    let got: Vec<(String, String)> = list
        .bots
        .iter()
        .map(|b| (b.name.clone(), b.version.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("alpha".to_string(), "1".to_string()),
            ("alpha".to_string(), "2".to_string())
        ]
    );
    // The bot plays with its own token as ever.
    let mut c = client_with(&ch, Some(&r2.token));
    c.list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap();
    srv.stop().await;
}

#[tokio::test]
async fn open_signup_keeps_the_old_registration_and_refuses_bad_names() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let r = bots(&ch, None)
        .register_bot(bot("old-style", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        r.owner_id, r.bot_id,
        "a bot without an account is its own owner"
    );
    let acct = accounts(&ch, None)
        .create_account(pb::CreateAccountRequest {
            name: "anyone".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mine = bots(&ch, Some(&acct.token))
        .register_bot(bot("mine", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(mine.owner_id, acct.account_id);
    for name in ["house:heuristic", "a\u{1b}[31m", "x\u{202e}y", "", " pad"] {
        let e = bots(&ch, None)
            .register_bot(bot(name, ""))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{name:?}");
        assert_eq!(bad_fields(&e), ["name"], "{name:?}");
    }
    let e = bots(&ch, None)
        .register_bot(bot("ok", "has space"))
        .await
        .unwrap_err();
    assert_eq!(bad_fields(&e), ["version"]);
    // An account's name follows a bot name's rules, reserved names included.
    for name in [
        "\n",
        "house",
        "house:heuristic",
        "a\u{1b}[31m",
        "x\u{202e}y",
        " pad",
    ] {
        let e = accounts(&ch, None)
            .create_account(pb::CreateAccountRequest { name: name.into() })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{name:?}");
        assert_eq!(bad_fields(&e), ["name"], "{name:?}");
    }
    let e = accounts(&ch, Some(&r.token))
        .list_account_bots(pb::ListAccountBotsRequest {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated);
    srv.stop().await;
}
