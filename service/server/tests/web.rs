//! The web page's side of the API, over native gRPC and over gRPC-Web: spectators without a
//! token see listed tables only and can write nothing; ReplayService replays finished tables
//! and sent records, and refuses live deals and bad records; the web listener serves the page
//! and answers gRPC-Web over HTTP/1.1.
#![allow(clippy::unwrap_used)]

mod common;

use bete_api::pb;
use bete_api::pb::replay_service_client::ReplayServiceClient;
use common::*;
use prost::Message;
use tonic::Code;
use tonic::transport::Channel;

/// An all-house-bot table (3 seats, one round), listed or private, created by `bot`.
async fn house_table(bot: &mut Client, visibility: pb::Visibility) -> String {
    bot.create_table(pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        house_bots: (0..3)
            .map(|s| house(s, pb::HouseBotPolicy::Heuristic))
            .collect(),
        config: [("rounds".to_string(), "1".to_string())].into(),
        visibility: visibility.into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .table
    .unwrap()
    .table_id
}

/// Waits (at most 20 s) until table `id` is finished.
async fn finished(c: &mut Client, id: &str) {
    for _ in 0..2000 {
        let t = describe(c, id).await;
        if t.state == pb::TableState::Finished as i32 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("table {id} did not finish");
}

fn replay_client(ch: &Channel) -> ReplayServiceClient<Channel> {
    ReplayServiceClient::new(ch.clone())
}

#[tokio::test]
async fn a_spectator_without_a_token_reads_listed_tables_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = server.channel().await;
    let mut owner = register(&ch, "owner").await.client;
    let listed = house_table(&mut owner, pb::Visibility::Listed).await;
    let private = house_table(&mut owner, pb::Visibility::Private).await;
    finished(&mut owner, &listed).await;
    finished(&mut owner, &private).await;
    let mut anon = client_with(&ch, None);

    // ListTables: the listed table, never the private one.
    let ids: Vec<String> = anon
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .tables
        .into_iter()
        .map(|t| t.table_id)
        .collect();
    assert!(ids.contains(&listed), "{ids:?}");
    assert!(!ids.contains(&private), "{ids:?}");

    // GetTable, GetGameRecord, WatchTable, GetSeatView: listed yes, private TABLE_PRIVATE.
    let t = anon
        .get_table(pb::GetTableRequest {
            table_id: listed.clone(),
        })
        .await
        .unwrap();
    assert_eq!(t.into_inner().table.unwrap().table_id, listed);
    let record = anon
        .get_game_record(pb::GetGameRecordRequest {
            table_id: listed.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .record_json;
    assert!(record.contains("bete-record/1"));
    let mut watch = anon
        .watch_table(pb::WatchTableRequest {
            table_id: listed.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let first = watch.message().await.unwrap().unwrap();
    match first.kind {
        Some(pb::watch_table_response::Kind::Snapshot(v)) => {
            assert_eq!(v.viewer_seat, None, "the anonymous spectator holds no seat");
            assert!(v.hand.is_empty());
        }
        other => panic!("first message {other:?}"),
    }
    for s in [
        anon.get_table(pb::GetTableRequest {
            table_id: private.clone(),
        })
        .await
        .unwrap_err(),
        anon.get_game_record(pb::GetGameRecordRequest {
            table_id: private.clone(),
        })
        .await
        .unwrap_err(),
        anon.watch_table(pb::WatchTableRequest {
            table_id: private.clone(),
            from_seq: None,
        })
        .await
        .unwrap_err(),
        anon.get_seat_view(pb::GetSeatViewRequest {
            table_id: private.clone(),
        })
        .await
        .unwrap_err(),
        replay_client(&ch)
            .replay_record(pb::ReplayRecordRequest {
                source: Some(pb::replay_record_request::Source::TableId(private.clone())),
            })
            .await
            .unwrap_err(),
    ] {
        assert_eq!(s.code(), Code::PermissionDenied, "{s:?}");
        assert_eq!(reason(&s), "TABLE_PRIVATE");
    }
    // The creator still reads its private table.
    owner
        .get_game_record(pb::GetGameRecordRequest {
            table_id: private.clone(),
        })
        .await
        .unwrap();

    // Every write needs a token.
    let writes = [
        anon.create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            ..Default::default()
        })
        .await
        .unwrap_err(),
        anon.join_table(pb::JoinTableRequest {
            invitation_code: String::new(),
            table_id: listed.clone(),
            seat: None,
        })
        .await
        .unwrap_err(),
        anon.leave_table(pb::LeaveTableRequest {
            table_id: listed.clone(),
        })
        .await
        .unwrap_err(),
        anon.submit_action(pb::SubmitActionRequest {
            table_id: listed.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err(),
        anon.watch_bot(pb::WatchBotRequest::default())
            .await
            .unwrap_err(),
    ];
    for s in writes {
        assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
        assert_eq!(reason(&s), "UNAUTHENTICATED");
    }
    // A token, when sent, must be valid, reads included.
    let s = client_with(&ch, Some("bete_not-a-token"))
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unauthenticated);
    server.stop().await;
}

#[tokio::test]
async fn replay_steps_through_a_finished_table_with_every_hand_and_refuses_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = server.channel().await;
    let mut owner = register(&ch, "owner").await.client;
    let id = house_table(&mut owner, pb::Visibility::Listed).await;
    finished(&mut owner, &id).await;
    let mut replay = replay_client(&ch);
    let r = replay
        .replay_record(pb::ReplayRecordRequest {
            source: Some(pb::replay_record_request::Source::TableId(id.clone())),
        })
        .await
        .unwrap()
        .into_inner();
    let record: serde_json::Value = serde_json::from_str(&r.record_json).unwrap();
    let actions: usize = record["deals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["actions"].as_array().unwrap().len())
        .sum();
    assert_eq!(r.steps.len(), actions + 1, "step 0, then one per action");
    assert_eq!(r.seats, 3);
    let balances: Vec<i64> = record["balances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_i64().unwrap())
        .collect();
    assert_eq!(r.balances, balances);
    assert_eq!(r.steps[0].seat, None);
    assert!(r.steps[1].seat.is_some() && r.steps[1].action.is_some());
    // Every hand face up at the start of a deal: 5 cards each (Bête deals five).
    assert!(
        r.steps[0].hands.iter().all(|h| h.cards.len() == 5),
        "{:?}",
        r.steps[0].hands
    );
    // The spectator view carries no hand; the steps' events include each settlement's reveal.
    assert!(
        r.steps
            .iter()
            .all(|s| s.view.as_ref().unwrap().hand.is_empty())
    );
    let settled = r
        .steps
        .iter()
        .flat_map(|s| &s.events)
        .filter(
            |e| matches!(&e.body, Some(pb::event::Body::DealSettled(d)) if d.revealed.is_some()),
        )
        .count();
    assert!(settled >= 3, "one round of 3 seats settles 3 deals or more");
    assert!(r.steps.last().unwrap().view.as_ref().unwrap().match_over);

    // The same record, sent as text, replays to the same steps.
    let sent = replay
        .replay_record(pb::ReplayRecordRequest {
            source: Some(pb::replay_record_request::Source::RecordJson(
                r.record_json.clone(),
            )),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(sent.steps, r.steps);

    // Not a record; a record whose first action is changed; no source.
    let mut broken = record.clone();
    broken["deals"][0]["actions"][0]["action"] = "play ZZ".into();
    for (text, what) in [
        ("{\"format\": 1".to_string(), "not valid JSON"),
        ("{\"format\":\"x\"}".to_string(), "wrong format"),
        (broken.to_string(), "deal 0"),
    ] {
        let s = replay
            .replay_record(pb::ReplayRecordRequest {
                source: Some(pb::replay_record_request::Source::RecordJson(text)),
            })
            .await
            .unwrap_err();
        assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
        assert_eq!(reason(&s), "BAD_RECORD");
        assert!(s.message().contains(what), "{what}: {}", s.message());
    }
    let s = replay
        .replay_record(pb::ReplayRecordRequest { source: None })
        .await
        .unwrap_err();
    assert_eq!(reason(&s), "INVALID_ARGUMENT");

    // A table still waiting (a seat free) has no record: never a live deal.
    let waiting = owner
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![house(1, pb::HouseBotPolicy::Random)],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    let s = replay
        .replay_record(pb::ReplayRecordRequest {
            source: Some(pb::replay_record_request::Source::TableId(waiting)),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&s), "TABLE_NOT_FINISHED");
    let s = replay
        .replay_record(pb::ReplayRecordRequest {
            source: Some(pb::replay_record_request::Source::TableId("t_nope".into())),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&s), "TABLE_NOT_FOUND");
    server.stop().await;
}

/// A gRPC-Web call over HTTP/1.1 as a browser makes it: one length-prefixed message in, the
/// response body holds the message frame and then a trailers frame.
async fn grpc_web_post(addr: std::net::SocketAddr, path: &str, msg: &impl Message) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = msg.encode_to_vec();
    let mut framed = vec![0u8];
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(&body);
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nOrigin: http://elsewhere.example\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        framed.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&framed).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn the_web_listener_serves_the_page_and_grpc_web() {
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let server = TestServer::start(dir.path().to_path_buf(), |c| c.web_addr = Some(web)).await;
    let ch = server.channel().await;
    let mut owner = register(&ch, "owner").await.client;
    let listed = house_table(&mut owner, pb::Visibility::Listed).await;

    let page = http_get(web, "/").await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("text/html"), "{page}");
    assert!(page.contains("<title>"), "{page}");
    assert!(http_get(web, "/nope.js").await.starts_with("HTTP/1.1 404"));

    let answer = grpc_web_post(
        web,
        "/bete.v1.TableService/ListTables",
        &pb::ListTablesRequest::default(),
    )
    .await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("application/grpc-web"), "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("access-control-allow-origin: http://elsewhere.example"),
        "{text}"
    );
    assert!(text.contains(&listed), "the listed table is in the answer");
    assert!(text.contains("grpc-status:0"), "{text}");

    // Writes need a token on this listener too.
    let answer = grpc_web_post(
        web,
        "/bete.v1.TableService/CreateTable",
        &pb::CreateTableRequest::default(),
    )
    .await;
    let text = String::from_utf8_lossy(&answer);
    // An error without a message is "trailers-only": the status is in the headers.
    assert!(text.contains("grpc-status: 16"), "UNAUTHENTICATED: {text}");
    server.stop().await;
}

/// A table whose seats are all house bots starts at creation, without a join: ListTables'
/// state filter (the lobby's) finds it as playing.
#[tokio::test]
async fn a_house_bot_table_is_listed_as_playing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path().to_path_buf(), |c| {
        c.house_delay = std::time::Duration::from_millis(50);
    })
    .await;
    let ch = server.channel().await;
    let mut owner = register(&ch, "owner").await.client;
    let id = house_table(&mut owner, pb::Visibility::Listed).await;
    let mut found = false;
    for _ in 0..100 {
        let playing = client_with(&ch, None)
            .list_tables(pb::ListTablesRequest {
                state: pb::TableState::Playing.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .tables;
        if playing.iter().any(|t| t.table_id == id) {
            found = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(found, "the playing house-bot table is listed as playing");
    server.stop().await;
}

/// `house_tables`: a fresh server keeps that many listed house-bot tables playing, so the
/// page's lobby has live tables to open.
#[tokio::test]
async fn a_fresh_server_shows_house_tables() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path().to_path_buf(), |c| c.house_tables = 2).await;
    let ch = server.channel().await;
    let mut anon = client_with(&ch, None);
    let mut shown = Vec::new();
    for _ in 0..300 {
        shown = anon
            .list_tables(pb::ListTablesRequest {
                state: pb::TableState::Playing.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .tables;
        if shown.len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(shown.len(), 2, "{shown:?}");
    for t in &shown {
        assert_eq!(t.created_by, "house");
        assert!(
            t.seats
                .iter()
                .all(|s| s.occupant == pb::OccupantKind::HouseBot as i32)
        );
    }
    // No more than asked for, however often the keeper looks.
    tokio::time::sleep(std::time::Duration::from_millis(3500)).await;
    let all = anon
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .tables;
    assert_eq!(all.len(), 2, "{all:?}");
    server.stop().await;
}

/// A ladder set's tables: while the set is unrated the anonymous spectator gets neither their
/// description nor a replay (a later rotation shares the decks); once rated, both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_tables_are_replayed_only_once_their_set_is_rated() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::with_ladders(dir.path(), &duplicate_ladder("web-3"), |_| {}).await;
    let ch = server.channel().await;
    let me = register(&ch, "web-ladder-bot").await;
    let token = me.token.clone();
    ladder_client(&ch, Some(&token))
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: "web-3".into(),
            capacity: 3,
        })
        .await
        .unwrap();
    let bot = tokio::spawn(play_forever(server.addr, token, std::time::Duration::ZERO));
    let mut anon = client_with(&ch, None);
    let mut replay = replay_client(&ch);
    let (mut refused, mut served) = (0, 0);
    for _ in 0..1200 {
        for m in ladder_matches(&ch, "web-3").await {
            // A match just scheduled lists its first table once that table is created.
            let Some(first) = m.tables.first() else {
                continue;
            };
            let table = first.table_id.clone();
            let got = replay
                .replay_record(pb::ReplayRecordRequest {
                    source: Some(pb::replay_record_request::Source::TableId(table.clone())),
                })
                .await;
            let described = anon
                .get_table(pb::GetTableRequest {
                    table_id: table.clone(),
                })
                .await;
            // Read the set's state after the calls: if it is still unrated, both were refused.
            let rated_now = ladder_matches(&ch, "web-3")
                .await
                .iter()
                .any(|n| n.match_id == m.match_id && n.state == pb::LadderMatchState::Rated as i32);
            if !rated_now {
                let s = got.unwrap_err();
                assert!(
                    ["TABLE_PRIVATE", "TABLE_NOT_FINISHED"].contains(&reason(&s).as_str()),
                    "{s:?}"
                );
                assert_eq!(reason(&described.unwrap_err()), "TABLE_PRIVATE");
                refused += 1;
            } else if m.state == pb::LadderMatchState::Rated as i32 {
                // Rated before the calls: served, and described to the anonymous spectator.
                assert!(!got.unwrap().into_inner().steps.is_empty());
                assert_eq!(
                    described.unwrap().into_inner().table.unwrap().table_id,
                    table
                );
                served += 1;
            }
        }
        if refused > 0 && served > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(refused > 0, "an unrated set was looked at");
    assert!(served > 0, "a rated set was looked at");
    bot.abort();
    server.stop().await;
}

/// A GET with an `Accept-Encoding`, answered as bytes (a compressed body is not text).
async fn get_encoded(addr: std::net::SocketAddr, path: &str, accept: &str) -> (String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: {accept}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..split]).to_ascii_lowercase();
    (head, out[split + 4..].to_vec())
}

/// The page goes precompressed as the browser accepts (brotli first, then gzip, else plain),
/// and the rulebook the rules panels link to is served.
#[tokio::test]
async fn the_page_goes_compressed_as_accepted_and_the_rulebook_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let server = TestServer::start(dir.path().to_path_buf(), |c| c.web_addr = Some(web)).await;
    // The web listener binds beside the gRPC one: wait until it takes connections.
    for _ in 0..500 {
        if tokio::net::TcpStream::connect(web).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let (head, plain) = get_encoded(web, "/", "identity").await;
    assert!(!head.contains("content-encoding"), "{head}");
    assert!(String::from_utf8_lossy(&plain).contains("<title>"));
    let (head, br) = get_encoded(web, "/", "gzip, deflate, br").await;
    assert!(head.contains("content-encoding: br"), "{head}");
    assert!(head.contains("vary: accept-encoding"), "{head}");
    assert!(br.len() < plain.len(), "{} < {}", br.len(), plain.len());
    let (head, gz) = get_encoded(web, "/", "gzip").await;
    assert!(head.contains("content-encoding: gzip"), "{head}");
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "a gzip stream");
    // The compressed copies are not pages of their own.
    let (head, _) = get_encoded(web, "/index.html.gz", "identity").await;
    assert!(head.starts_with("http/1.1 404"), "{head}");
    let (head, book) = get_encoded(web, "/RULES.md", "identity").await;
    assert!(head.contains("text/plain"), "{head}");
    assert!(String::from_utf8_lossy(&book).starts_with("# The rulebook"));
    server.stop().await;
}

/// AnalyseTable: each decision with a choice gets the search's move and a cost; the answer is
/// kept per table; a live or unknown table and an oversized budget are refused.
#[tokio::test]
async fn a_finished_table_is_analysed_once_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = server.channel().await;
    let mut owner = register(&ch, "owner").await.client;
    let id = house_table(&mut owner, pb::Visibility::Listed).await;
    finished(&mut owner, &id).await;
    let mut replay = replay_client(&ch);
    let ask = |budget_ms| pb::AnalyseTableRequest {
        table_id: id.clone(),
        budget_ms,
    };
    let a = replay.analyse_table(ask(8000)).await.unwrap().into_inner();
    assert!(!a.decisions.is_empty());
    assert_eq!(a.budget_ms, 8000);
    let steps = replay
        .replay_record(pb::ReplayRecordRequest {
            source: Some(pb::replay_record_request::Source::TableId(id.clone())),
        })
        .await
        .unwrap()
        .into_inner()
        .steps;
    for d in &a.decisions {
        assert!(d.cost >= 0.0 && d.samples > 0, "{d:?}");
        let step = &steps[d.step as usize];
        assert_eq!(step.seat, Some(d.seat), "the decision is the step's");
        assert_eq!(step.action, d.played, "the move played is the step's");
    }
    // Kept: the same answer again, even for another budget.
    assert_eq!(replay.analyse_table(ask(1)).await.unwrap().into_inner(), a);
    let e = replay.analyse_table(ask(20_001)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    let e = replay
        .analyse_table(pb::AnalyseTableRequest {
            table_id: "t_0000000000000000".into(),
            budget_ms: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    server.stop().await;
}
