//! The attacks of issue #14, run against the real server over real gRPC: each test failed on the
//! main of before the fix and passes now.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::admin_service_client::AdminServiceClient;
use bete_api::pb::bot_service_client::BotServiceClient;
use common::*;
use tokio::io::AsyncReadExt;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;

fn bete(seats: u32) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats,
        ..Default::default()
    }
}

async fn create(bot: &mut Bot, req: pb::CreateTableRequest) -> pb::Table {
    bot.client
        .create_table(req)
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
}

async fn get(bot: &mut Bot, id: &str) -> Result<pb::Table, tonic::Status> {
    bot.client
        .get_table(pb::GetTableRequest {
            table_id: id.into(),
        })
        .await
        .map(|r| r.into_inner().table.unwrap())
}

async fn leave(bot: &mut Bot, id: &str) {
    bot.client
        .leave_table(pb::LeaveTableRequest {
            table_id: id.into(),
        })
        .await
        .unwrap();
}

type Admin = AdminServiceClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>>;

fn admin(ch: &Channel, token: &str) -> Admin {
    AdminServiceClient::with_interceptor(ch.clone(), Bearer(Some(token.into())))
}

fn retry_delay(s: &tonic::Status) -> Duration {
    s.get_error_details()
        .retry_info()
        .and_then(|r| r.retry_delay)
        .expect("a RetryInfo delay")
}

/// Hole 2: `rounds` and `max_extra_deals` without bounds made a match that never ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_matches_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "endless").await;
    for (key, value) in [
        ("rounds", "4294967295"),
        ("rounds", "21"),
        ("max_extra_deals", "4294967295"),
        ("max_extra_deals", "51"),
    ] {
        let s = expect(
            a.client
                .create_table(pb::CreateTableRequest {
                    config: HashMap::from([(key.to_string(), value.to_string())]),
                    house_bots: (0..3)
                        .map(|i| house(i, pb::HouseBotPolicy::Random))
                        .collect(),
                    ..bete(3)
                })
                .await,
            Code::InvalidArgument,
            "BAD_CONFIG",
        );
        assert_eq!(bad_fields(&s), [format!("config.{key}")]);
        assert!(s.message().contains("at most"), "{s:?}");
    }
    srv.stop().await;
}

/// Hole 2/5: unfinished tables per creator and per seated bot are bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_per_bot_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.open_tables_per_bot = 3;
        c.limits.seats_per_bot = 2;
    })
    .await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "hoarder").await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create(&mut a, bete(3)).await.table_id);
    }
    let s = expect(
        a.client.create_table(bete(3)).await,
        Code::ResourceExhausted,
        "TOO_MANY_TABLES",
    );
    assert_eq!(
        s.get_error_details().error_info().unwrap().metadata["limit"],
        "3"
    );
    a.join(&ids[0], None).await.unwrap();
    a.join(&ids[1], None).await.unwrap();
    expect(
        a.join(&ids[2], None).await,
        Code::ResourceExhausted,
        "TOO_MANY_TABLES",
    );
    // Leaving a waiting table frees the seat.
    leave(&mut a, &ids[1]).await;
    a.join(&ids[2], None).await.unwrap();
    srv.stop().await;
}

/// Hole 2: an operator stops a table that plays for ever; it stays stopped after a restart, and
/// only the admin token may do it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_stops_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = |c: &mut bete_server::ServerConfig| {
        c.admin_token = Some("op-secret".into());
        c.limits.open_tables_per_bot = 1;
    };
    let srv = TestServer::start(dir.path().to_path_buf(), cfg).await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "creator").await;
    let mut spectator = register(&ch, "spectator").await;
    let t = create(
        &mut a,
        pb::CreateTableRequest {
            config: HashMap::from([("rounds".to_string(), "20".to_string())]),
            house_bots: (0..3)
                .map(|i| house(i, pb::HouseBotPolicy::Random))
                .collect(),
            ..bete(3)
        },
    )
    .await;
    let id = t.table_id;
    let mut watch = spectator
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();

    let stop = pb::StopTableRequest {
        table_id: id.clone(),
        reason: "runaway".into(),
    };
    expect(
        admin(&ch, &a.token).stop_table(stop.clone()).await,
        Code::PermissionDenied,
        "ADMIN_REQUIRED",
    );
    let stopped = admin(&ch, "op-secret")
        .stop_table(stop.clone())
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(stopped.state, pb::TableState::Finished as i32);
    expect(
        admin(&ch, "op-secret").stop_table(stop).await,
        Code::FailedPrecondition,
        "TABLE_CLOSED",
    );

    // The watcher's stream ends with TABLE_CLOSED.
    let end = timeout(10, async {
        loop {
            match watch.message().await {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the stream ended without a status"),
                Err(s) => return s,
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(reason(&end), "TABLE_CLOSED", "{end:?}");

    // Nothing moves any more; the table has no record; no one joins.
    let before = get(&mut a, &id).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = get(&mut a, &id).await.unwrap();
    assert_eq!(before.last_seq, after.last_seq);
    assert_eq!(after.state, pb::TableState::Finished as i32);
    expect(
        a.client
            .get_game_record(pb::GetGameRecordRequest {
                table_id: id.clone(),
            })
            .await,
        Code::FailedPrecondition,
        "TABLE_CLOSED",
    );
    // Its place among the creator's open tables is free again.
    create(&mut a, bete(3)).await;
    srv.stop().await;

    // After a restart it is still stopped, and does not play.
    let srv = TestServer::start(dir.path().to_path_buf(), cfg).await;
    let ch = srv.channel().await;
    let mut b = register(&ch, "late").await;
    let again = get(&mut b, &id).await.unwrap();
    assert_eq!(again.state, pb::TableState::Finished as i32);
    assert_eq!(again.last_seq, after.last_seq);
    expect(
        b.join(&id, None).await,
        Code::FailedPrecondition,
        "TABLE_CLOSED",
    );
    srv.stop().await;
}

/// Hole 5: waiting tables expire, and their creator's place is freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_tables_expire() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.waiting_ttl = Duration::from_secs(1);
        c.limits.open_tables_per_bot = 1;
    })
    .await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "waiter").await;
    let id = create(&mut a, bete(3)).await.table_id;
    a.join(&id, None).await.unwrap();
    expect(
        a.client.create_table(bete(3)).await,
        Code::ResourceExhausted,
        "TOO_MANY_TABLES",
    );
    let mut closed = false;
    for _ in 0..100 {
        if get(&mut a, &id).await.unwrap().state == pb::TableState::Finished as i32 {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(closed, "the waiting table never expired");
    let mut b = register(&ch, "joiner").await;
    expect(
        b.join(&id, None).await,
        Code::FailedPrecondition,
        "TABLE_CLOSED",
    );
    create(&mut a, bete(3)).await;
    srv.stop().await;
}

/// Hole 6: a bot that left a seat mid-deal may not sit at another seat in that deal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seen_hand_stays_seen() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "peeker").await;
    let mut b = register(&ch, "other-b").await;
    let mut c = register(&ch, "other-c").await;
    let id = create(&mut a, bete(3)).await.table_id;
    assert_eq!(a.join(&id, Some(0)).await.unwrap(), 0);
    assert_eq!(b.join(&id, Some(1)).await.unwrap(), 1);
    assert_eq!(c.join(&id, Some(2)).await.unwrap(), 2);
    let v = view_when(&mut a.client, &id, "never started", |v| !v.hand.is_empty()).await;
    assert_eq!(v.viewer_seat, Some(0));

    leave(&mut b, &id).await;
    leave(&mut a, &id).await;
    let s = expect(
        a.join(&id, Some(1)).await,
        Code::FailedPrecondition,
        "SEAT_CHANGE_REFUSED",
    );
    assert_eq!(
        s.get_error_details().error_info().unwrap().metadata["seat"],
        "0"
    );
    // Its own seat again, asked for or not.
    assert_eq!(a.join(&id, None).await.unwrap(), 0);
    assert_eq!(b.join(&id, Some(1)).await.unwrap(), 1);
    srv.stop().await;
}

/// Hole 10: GetTable of a private table answers only its creator and its seats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_tables_are_private_to_get_table() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "owner").await;
    let mut b = register(&ch, "nosy").await;
    let mut c = register(&ch, "invited").await;
    let created = a
        .client
        .create_table(pb::CreateTableRequest {
            visibility: pb::Visibility::Private.into(),
            ..bete(3)
        })
        .await
        .unwrap()
        .into_inner();
    let id = created.table.unwrap().table_id;
    get(&mut a, &id).await.unwrap();
    expect(
        get(&mut b, &id).await,
        Code::PermissionDenied,
        "TABLE_PRIVATE",
    );
    // Invited: with the table's code (tests/private.rs tries every wrong way in).
    c.client
        .join_table(pb::JoinTableRequest {
            invitation_code: created.invitation_code,
            table_id: id.clone(),
            seat: None,
        })
        .await
        .unwrap();
    get(&mut c, &id).await.unwrap();
    srv.stop().await;
}

/// Hole 4: names that drive terminals or pose as the server are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut bots = BotServiceClient::new(ch.clone());
    for name in [
        "\u{1b}[31mred",
        "\u{1b}]0;pwned\u{7}",
        "line\r\nbreak",
        "nul\0",
        "evil\u{202e}txt.exe",
        "zero\u{200b}width",
        "house:heuristic",
        "house",
    ] {
        let s = expect(
            bots.register_bot(pb::RegisterBotRequest {
                name: name.into(),
                owner: String::new(),
                ..Default::default()
            })
            .await,
            Code::InvalidArgument,
            "INVALID_ARGUMENT",
        );
        assert_eq!(bad_fields(&s), ["name"], "{name:?}");
    }
    let s = expect(
        bots.register_bot(pb::RegisterBotRequest {
            name: "fine".into(),
            owner: "team\u{1b}[2J".into(),
            ..Default::default()
        })
        .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["owner"]);
    register(&ch, "plain name 7").await;
    srv.stop().await;
}

/// Hole 11: an error reply stays small whatever the request held, so the client gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_replies_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "verbose").await;
    let s = expect(
        a.client
            .create_table(pb::CreateTableRequest {
                house_bots: (0..5000)
                    .map(|i| house(i, pb::HouseBotPolicy::Random))
                    .collect(),
                ..bete(3)
            })
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["house_bots"]);
    let s = expect(
        a.client
            .create_table(pb::CreateTableRequest {
                config: HashMap::from([("k".repeat(30_000), "1".to_string())]),
                ..bete(3)
            })
            .await,
        Code::InvalidArgument,
        "BAD_CONFIG",
    );
    assert!(s.message().len() <= 1024, "{}", s.message().len());
    assert!(s.details().len() <= 2048, "{}", s.details().len());
    srv.stop().await;
}

/// Sends raw bytes as a request and decodes nothing of the answer.
#[derive(Clone, Copy, Default)]
struct RawCodec;
struct RawEncoder;
struct NoDecoder;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = ();
    type Encoder = RawEncoder;
    type Decoder = NoDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> NoDecoder {
        NoDecoder
    }
}

impl tonic::codec::Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(
        &mut self,
        item: Vec<u8>,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        use prost::bytes::BufMut;
        dst.put_slice(&item);
        Ok(())
    }
}

impl tonic::codec::Decoder for NoDecoder {
    type Item = ();
    type Error = tonic::Status;
    fn decode(
        &mut self,
        _src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<()>, tonic::Status> {
        Ok(Some(()))
    }
}

/// Hole 12: bytes that are not a message are INVALID_ARGUMENT with an ErrorInfo, never INTERNAL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_requests_are_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let a = register(&ch, "garbler").await;
    for path in [
        "/bete.v1.TableService/GetTable",
        "/bete.v1.TableService/CreateTable",
        "/bete.v1.BotService/RegisterBot",
        "/bete.v1.TableService/WatchTable",
    ] {
        let mut grpc = tonic::client::Grpc::new(ch.clone());
        grpc.ready().await.unwrap();
        let mut req = tonic::Request::new(vec![0xff, 0xff, 0xff, 0xff, 0x0f]);
        req.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", a.token).parse().unwrap(),
        );
        let r = if path.ends_with("WatchTable") {
            grpc.server_streaming(req, path.parse().unwrap(), RawCodec)
                .await
                .map(|_| ())
        } else {
            grpc.unary(req, path.parse().unwrap(), RawCodec)
                .await
                .map(|_| ())
        };
        let s = expect(r, Code::InvalidArgument, "INVALID_ARGUMENT");
        assert_eq!(bad_fields(&s), ["(request)"], "{path}");
    }
    srv.stop().await;
}

/// Reads until the server closes the connection.
async fn closed(s: &mut tokio::net::TcpStream) {
    let mut buf = [0u8; 256];
    while let Ok(n) = s.read(&mut buf).await {
        if n == 0 {
            return;
        }
    }
}

/// Hole 3: a connection that never sends the HTTP/2 preface is closed, and connections are
/// capped (the one over the cap is closed at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.preface_timeout = Duration::from_secs(3);
        c.max_connections = 2;
    })
    .await;
    let mut idle1 = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    let _idle2 = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    assert!(
        timeout(2, closed(&mut over)).await.is_ok(),
        "the connection over the cap was not closed"
    );
    // The idle ones are closed after the preface deadline (the server's own SETTINGS frame
    // may come first).
    assert!(
        timeout(10, closed(&mut idle1)).await.is_ok(),
        "an idle connection was not closed"
    );
    // And then a real client gets in.
    let ch = srv.channel().await;
    register(&ch, "after-the-idlers").await;
    srv.stop().await;
}

/// Hole 5 and the limits: GCRA rate limits per bot, per address and on creations, each
/// RESOURCE_EXHAUSTED / RATE_LIMITED with a RetryInfo delay that, honoured, lets the call in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_answer_with_a_delay() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.calls_per_bot = "5/5".parse().unwrap();
        c.limits.registrations_per_address = "2/3".parse().unwrap();
        c.limits.creations_per_bot = "1/2".parse().unwrap();
    })
    .await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "r1").await;
    register(&ch, "r2").await;
    register(&ch, "r3").await;
    let mut bots = BotServiceClient::new(ch.clone());
    let s = expect(
        bots.register_bot(pb::RegisterBotRequest {
            name: "r4".into(),
            owner: String::new(),
            ..Default::default()
        })
        .await,
        Code::ResourceExhausted,
        "RATE_LIMITED",
    );
    let d = retry_delay(&s);
    assert!(
        d > Duration::ZERO && d <= Duration::from_millis(500),
        "{d:?}"
    );

    create(&mut a, bete(3)).await;
    create(&mut a, bete(3)).await;
    let s = expect(
        a.client.create_table(bete(3)).await,
        Code::ResourceExhausted,
        "RATE_LIMITED",
    );
    tokio::time::sleep(retry_delay(&s)).await;
    create(&mut a, bete(3)).await;

    // Calls: 5 in a burst (3 used above by the creations), then refused, then let in.
    let mut refused = None;
    for _ in 0..10 {
        if let Err(s) = a.client.list_tables(pb::ListTablesRequest::default()).await {
            refused = Some(s);
            break;
        }
    }
    let s = refused.expect("never rate limited");
    assert_eq!(reason(&s), "RATE_LIMITED");
    tokio::time::sleep(retry_delay(&s)).await;
    a.client
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap();
    srv.stop().await;
}

/// Streams per bot are capped; a closed stream frees its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_per_bot_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.streams_per_bot = 2;
    })
    .await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "streamer").await;
    let s1 = a
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap();
    let _s2 = a
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap();
    expect(
        a.client.watch_bot(pb::WatchBotRequest::default()).await,
        Code::ResourceExhausted,
        "TOO_MANY_STREAMS",
    );
    drop(s1);
    let mut ok = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if a.client
            .watch_bot(pb::WatchBotRequest::default())
            .await
            .is_ok()
        {
            ok = true;
            break;
        }
    }
    assert!(ok, "a closed stream did not free its place");
    srv.stop().await;
}

use bete_api::pb::account_service_client::AccountServiceClient;

fn accounts(
    ch: &Channel,
    token: Option<&str>,
) -> AccountServiceClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
    AccountServiceClient::with_interceptor(ch.clone(), Bearer(token.map(str::to_string)))
}

async fn create_account(ch: &Channel, name: &str) -> Result<String, tonic::Status> {
    accounts(ch, None)
        .create_account(pb::CreateAccountRequest { name: name.into() })
        .await
        .map(|r| r.into_inner().token)
}

/// Registers a bot with an account's token.
async fn register_with(ch: &Channel, account: &str, name: &str) -> Result<Bot, tonic::Status> {
    let mut bots = BotServiceClient::with_interceptor(ch.clone(), Bearer(Some(account.into())));
    let r = bots
        .register_bot(pb::RegisterBotRequest {
            name: name.into(),
            ..Default::default()
        })
        .await?
        .into_inner();
    Ok(Bot {
        id: r.bot_id,
        client: client_with(ch, Some(&r.token)),
        token: r.token,
    })
}

/// The limits keyed by the account, not only by the bot: an owner's many bots share one rate
/// of calls and of table creations, an account registers bots at a bounded rate, and creating
/// accounts (a call without a token) is held per client address. Each refusal is
/// RESOURCE_EXHAUSTED / RATE_LIMITED with a RetryInfo delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accounts_bots_share_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.limits.calls_per_account = "1/6".parse().unwrap();
        c.limits.creations_per_account = "1/3".parse().unwrap();
        c.limits.registrations_per_account = "1/3".parse().unwrap();
        c.limits.accounts_per_address = "1/2".parse().unwrap();
    })
    .await;
    let ch = srv.channel().await;
    let owner = create_account(&ch, "Owner").await.unwrap();
    create_account(&ch, "Second").await.unwrap();
    let s = expect(
        create_account(&ch, "Third").await,
        Code::ResourceExhausted,
        "RATE_LIMITED",
    );
    assert!(retry_delay(&s) > Duration::ZERO);

    let mut a = register_with(&ch, &owner, "acct-a").await.unwrap();
    let mut b = register_with(&ch, &owner, "acct-b").await.unwrap();
    register_with(&ch, &owner, "acct-c").await.unwrap();
    let s = expect(
        register_with(&ch, &owner, "acct-d").await.map(|b| b.id),
        Code::ResourceExhausted,
        "RATE_LIMITED",
    );
    assert!(retry_delay(&s) > Duration::ZERO);

    // Creations: 3 for the account, whichever of its bots makes them (each is also a call).
    create(&mut a, bete(3)).await;
    create(&mut b, bete(3)).await;
    create(&mut a, bete(3)).await;
    let s = expect(
        b.client.create_table(bete(3)).await,
        Code::ResourceExhausted,
        "RATE_LIMITED",
    );
    assert!(retry_delay(&s) > Duration::ZERO);
    // Calls: a burst of 6 for the whole account; 4 are spent. A bot of no account, meanwhile,
    // is held by its own rate only.
    let mut lone = register(&ch, "lone-bot").await;
    let mut refused = None;
    for i in 0..6 {
        let c = if i % 2 == 0 { &mut a } else { &mut b };
        if let Err(s) = c.client.list_tables(pb::ListTablesRequest::default()).await {
            refused = Some((i, s));
            break;
        }
    }
    let (i, s) = refused.expect("the account's bots were never held");
    assert!(
        i <= 2,
        "the account's burst was not shared: refused only at call {i}"
    );
    assert_eq!(reason(&s), "RATE_LIMITED");
    for _ in 0..5 {
        lone.client
            .list_tables(pb::ListTablesRequest::default())
            .await
            .unwrap();
    }
    tokio::time::sleep(retry_delay(&s)).await;
    a.client
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap();
    srv.stop().await;
}

/// A gRPC-Web call over HTTP/1.1 (as a browser makes it), answered in full.
async fn grpc_web_post(addr: std::net::SocketAddr, path: &str) -> String {
    use tokio::io::AsyncWriteExt;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nContent-Length: 5\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&[0, 0, 0, 0, 0]).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// The web listener (gRPC-Web and the page) is guarded as the gRPC listener is: a connection
/// cap (its own: the gRPC listener full does not lock the page out) and the same deadline for
/// a connection's first bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_listener_is_guarded() {
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.web_addr = Some(web);
        c.preface_timeout = Duration::from_secs(4);
        c.web_max_connections = 2;
        c.max_connections = 1;
    })
    .await;
    web_up(web).await;
    // Long enough for the server to see the probe's connections close and free their places.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // The cap: two idle web connections fill it; the next is closed at once. (The gRPC
    // listener's own cap, full with one idle connection, is not the web's.)
    let mut idle_web = tokio::net::TcpStream::connect(web).await.unwrap();
    let _idle_web2 = tokio::net::TcpStream::connect(web).await.unwrap();
    let _idle_grpc = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = tokio::net::TcpStream::connect(web).await.unwrap();
    assert!(
        timeout(2, closed(&mut over)).await.is_ok(),
        "a web connection over the cap was not closed"
    );
    // The idle one is closed once its deadline passes without a byte.
    assert!(
        timeout(10, closed(&mut idle_web)).await.is_ok(),
        "an idle web connection was not closed"
    );
    srv.stop().await;
}

/// Web up: the page answers (that connection closes after its answer).
async fn web_up(web: std::net::SocketAddr) {
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(web).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(http_get(web, "/").await.starts_with("HTTP/1.1 200"));
}

/// Load shedding on the web listener: OVERLOADED with a RetryInfo for a gRPC-Web call, 503
/// with Retry-After for a page file; shared with the gRPC listener (one CPU).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_listener_sheds_load() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.web_addr = Some(web);
        c.max_in_flight = 1;
    })
    .await;
    web_up(web).await;
    // A call whose body never finishes holds the one place for calls in progress.
    let mut holder = tokio::net::TcpStream::connect(web).await.unwrap();
    holder
        .write_all(
            b"POST /bete.v1.TableService/ListTables HTTP/1.1\r\nHost: x\r\n\
              Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n\
              Content-Length: 100\r\n\r\n\0\0",
        )
        .await
        .unwrap();
    let mut shed = String::new();
    for _ in 0..50 {
        shed = grpc_web_post(web, "/bete.v1.TableService/ListTables").await;
        if shed.contains("grpc-status: 14") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(shed.contains("grpc-status: 14"), "not shed: {shed}");
    let details = shed
        .lines()
        .find_map(|l| l.strip_prefix("grpc-status-details-bin: "))
        .expect("no error details");
    let status =
        tonic::Status::with_details(Code::Unavailable, "", base64_decode(details.trim()).into());
    let d = status.get_error_details();
    assert_eq!(d.error_info().unwrap().reason, "OVERLOADED");
    assert!(d.retry_info().unwrap().retry_delay.is_some());
    let page = http_get(web, "/").await;
    assert!(page.starts_with("HTTP/1.1 503"), "{page}");
    assert!(
        page.to_ascii_lowercase().contains("retry-after: 1"),
        "{page}"
    );
    // The held call's connection closes: its place is free again.
    drop(holder);
    let mut served = false;
    for _ in 0..50 {
        if http_get(web, "/").await.starts_with("HTTP/1.1 200") {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(served, "the page was not served once the held call ended");
    srv.stop().await;
}

/// Standard base64 (with or without padding), as gRPC carries binary metadata.
fn base64_decode(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = ALPHABET.iter().position(|a| *a == c).unwrap() as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}
