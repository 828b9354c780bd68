//! Bad input and refused calls: each gets its documented status and ErrorInfo reason, and the
//! server keeps serving. Also: a seat that never answers gets auto-moves and the match ends.
#![allow(clippy::unwrap_used)]

mod common;

use bete_api::pb;
use common::*;
use prost::Message;
use tonic::Code;

fn create(
    ruleset: pb::Ruleset,
    seats: u32,
    house_bots: Vec<pb::HouseBotSeat>,
) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: ruleset.into(),
        seats,
        house_bots,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_precise_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut alice = register(&ch, "alice-bot").await;
    let mut bob = register(&ch, "bob-bot").await;
    let mut carol = register(&ch, "carol-bot").await;

    // Identity. Without a token only a spectator's reads pass (tests/web.rs); writes need one.
    let mut anon = client_with(&ch, None);
    expect(
        anon.create_table(pb::CreateTableRequest::default()).await,
        Code::Unauthenticated,
        "UNAUTHENTICATED",
    );
    let mut forged = client_with(&ch, Some("bete_not-a-real-token"));
    expect(
        forged.list_tables(pb::ListTablesRequest::default()).await,
        Code::Unauthenticated,
        "UNAUTHENTICATED",
    );
    let mut bots = bete_api::pb::bot_service_client::BotServiceClient::new(ch.clone());
    let s = expect(
        bots.register_bot(pb::RegisterBotRequest::default()).await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["name"]);

    // Empty and malformed requests.
    let s = expect(
        alice
            .client
            .create_table(pb::CreateTableRequest::default())
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["ruleset", "seats"]);
    let s = expect(
        alice
            .client
            .create_table(pb::CreateTableRequest {
                ruleset: 99,
                seats: 3,
                visibility: 7,
                ..Default::default()
            })
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["ruleset", "visibility"]);
    let s = expect(
        alice
            .client
            .create_table(pb::CreateTableRequest {
                house_bots: vec![
                    pb::HouseBotSeat {
                        seat: 9,
                        policy: 1,
                        search_budget_ms: 0,
                    },
                    pb::HouseBotSeat {
                        seat: 0,
                        policy: 42,
                        search_budget_ms: 0,
                    },
                ],
                ..create(pb::Ruleset::Bete, 3, vec![])
            })
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(
        bad_fields(&s),
        ["house_bots[0].seat", "house_bots[1].policy"]
    );
    let s = expect(
        alice
            .client
            .create_table(pb::CreateTableRequest {
                seed: "xyz".into(),
                ..create(pb::Ruleset::Bete, 3, vec![])
            })
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["seed"]);
    let mut bad_config = create(pb::Ruleset::Bete, 3, vec![]);
    bad_config
        .config
        .insert("win_rule".into(), "sometimes".into());
    let s = expect(
        alice.client.create_table(bad_config).await,
        Code::InvalidArgument,
        "BAD_CONFIG",
    );
    assert_eq!(bad_fields(&s), ["config.win_rule"]);
    assert!(s.message().contains("strict"), "{}", s.message());
    let s = expect(
        alice
            .client
            .create_table(create(pb::Ruleset::Beast, 7, vec![]))
            .await,
        Code::InvalidArgument,
        "BAD_CONFIG",
    );
    assert_eq!(bad_fields(&s), ["seats"]);
    // Oversized: refused with INVALID_ARGUMENT before anything else is looked at.
    let mut big = create(pb::Ruleset::Bete, 3, vec![]);
    big.config.insert("padding".into(), "x".repeat(100 * 1024));
    assert!(big.encoded_len() > 64 * 1024);
    expect(
        alice.client.create_table(big).await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    expect(
        alice
            .client
            .list_tables(pb::ListTablesRequest {
                state: 12,
                ..Default::default()
            })
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    expect(
        alice
            .client
            .list_tables(pb::ListTablesRequest {
                page_token: "garbage".into(),
                ..Default::default()
            })
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    let s = expect(
        alice
            .client
            .submit_action(pb::SubmitActionRequest::default())
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["table_id"]);

    // Unknown table.
    expect(
        alice
            .client
            .get_table(pb::GetTableRequest {
                table_id: "t_nope".into(),
            })
            .await,
        Code::NotFound,
        "TABLE_NOT_FOUND",
    );
    expect(
        alice.join("t_nope", None).await,
        Code::NotFound,
        "TABLE_NOT_FOUND",
    );

    // A table with alice and bob and a house bot; carol is a spectator.
    let t = alice
        .client
        .create_table(pb::CreateTableRequest {
            decision_deadline_ms: 60_000,
            ..create(
                pb::Ruleset::Bete,
                3,
                vec![house(2, pb::HouseBotPolicy::Random)],
            )
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    let id = t.table_id.clone();
    expect(
        alice.join(&id, Some(2)).await,
        Code::FailedPrecondition,
        "SEAT_TAKEN",
    );
    let s = expect(
        alice.join(&id, Some(5)).await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["seat"]);
    let pass = pb::Action {
        kind: pb::ActionKind::Pass.into(),
        ..Default::default()
    };
    let submit = |action: pb::Action, expected_seq: u64| pb::SubmitActionRequest {
        table_id: id.clone(),
        action: Some(action),
        expected_seq,
        request_id: String::new(),
    };
    alice.join(&id, Some(0)).await.unwrap();
    expect(
        alice.join(&id, None).await,
        Code::FailedPrecondition,
        "ALREADY_SEATED",
    );
    // Not started yet.
    expect(
        alice.client.submit_action(submit(pass.clone(), 0)).await,
        Code::FailedPrecondition,
        "ILLEGAL_ACTION",
    );
    bob.join(&id, None).await.unwrap();
    expect(
        carol.join(&id, None).await,
        Code::ResourceExhausted,
        "TABLE_FULL",
    );
    expect(
        carol.client.submit_action(submit(pass.clone(), 0)).await,
        Code::PermissionDenied,
        "SPECTATOR_CANNOT_ACT",
    );

    // Find who is to act (seat 0 = alice or seat 1 = bob; the house bot acts by itself).
    let (mut actor, mut other, view) = loop {
        let v = alice
            .client
            .get_seat_view(pb::GetSeatViewRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .view
            .unwrap();
        match v.to_act {
            Some(0) => break (alice, bob, v),
            Some(1) => {
                let bv = bob
                    .client
                    .get_seat_view(pb::GetSeatViewRequest {
                        table_id: id.clone(),
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .view
                    .unwrap();
                break (bob, alice, bv);
            }
            _ => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    };
    assert!(!view.legal_actions.is_empty());
    expect(
        other.client.submit_action(submit(pass.clone(), 0)).await,
        Code::PermissionDenied,
        "NOT_YOUR_SEAT",
    );
    // A card code that is not a card; an unknown action kind; a card not in hand.
    let s = expect(
        actor
            .client
            .submit_action(submit(
                pb::Action {
                    kind: pb::ActionKind::Card.into(),
                    cards: vec!["ZZ".into()],
                    text: String::new(),
                },
                0,
            ))
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["action.cards[0]"]);
    let s = expect(
        actor
            .client
            .submit_action(submit(
                pb::Action {
                    kind: 77,
                    ..Default::default()
                },
                0,
            ))
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert_eq!(bad_fields(&s), ["action.kind"]);
    let not_mine = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "AH", "KH"]
        .into_iter()
        .find(|c| !view.hand.iter().any(|h| h == c))
        .unwrap();
    // Bidding phase: a card is illegal now whatever it is; the reason names only that card.
    let s = expect(
        actor
            .client
            .submit_action(submit(
                pb::Action {
                    kind: pb::ActionKind::Card.into(),
                    cards: vec![not_mine.into()],
                    text: String::new(),
                },
                0,
            ))
            .await,
        Code::FailedPrecondition,
        "ILLEGAL_ACTION",
    );
    for c in cards_in(
        &s.message()
            .split(' ')
            .map(str::to_string)
            .collect::<Vec<_>>(),
    ) {
        assert_eq!(
            c.to_string(),
            not_mine,
            "error message names another card: {}",
            s.message()
        );
    }
    // Stale expected_seq: nothing applied, metadata names the current seq.
    let s = expect(
        actor
            .client
            .submit_action(submit(view.legal_actions[0].clone(), view.seq - 1))
            .await,
        Code::Aborted,
        "STALE_SEQ",
    );
    {
        use tonic_types::StatusExt;
        assert_eq!(
            s.get_error_details().error_info().unwrap().metadata["last_seq"],
            view.seq.to_string()
        );
    }
    // From_seq beyond the end.
    let s = expect(
        actor
            .client
            .watch_table(pb::WatchTableRequest {
                table_id: id.clone(),
                from_seq: Some(view.seq + 1000),
            })
            .await
            .map(|_| ()),
        Code::OutOfRange,
        "FROM_SEQ_OUT_OF_RANGE",
    );
    assert!(s.message().contains("beyond"));
    expect(
        actor
            .client
            .get_game_record(pb::GetGameRecordRequest {
                table_id: id.clone(),
            })
            .await,
        Code::FailedPrecondition,
        "TABLE_NOT_FINISHED",
    );
    // Leave: a seat at a running table becomes free; a spectator cannot leave.
    expect(
        carol
            .client
            .leave_table(pb::LeaveTableRequest {
                table_id: id.clone(),
            })
            .await,
        Code::FailedPrecondition,
        "NOT_SEATED",
    );

    // Private tables: not listed, not watchable by outsiders.
    let private = actor
        .client
        .create_table(pb::CreateTableRequest {
            visibility: pb::Visibility::Private.into(),
            ..create(pb::Ruleset::Beast, 3, vec![])
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    expect(
        carol
            .client
            .watch_table(pb::WatchTableRequest {
                table_id: private.table_id.clone(),
                from_seq: None,
            })
            .await
            .map(|_| ()),
        Code::PermissionDenied,
        "TABLE_PRIVATE",
    );
    let listed = carol
        .client
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(listed.tables.iter().all(|t| t.table_id != private.table_id));
    assert!(listed.tables.iter().any(|t| t.table_id == id));

    // Still serving: a fresh bot can register and act.
    let mut dave = register(&ch, "dave-bot").await;
    dave.client
        .list_tables(pb::ListTablesRequest {
            ruleset: pb::Ruleset::Bete.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let _ = (&mut actor, &mut other);
    srv.stop().await;
}

/// A seat that never answers: the server plays its safe action at each deadline, marks it auto,
/// counts strikes, and the match still ends; then a move for the finished table is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_play_auto_moves_until_the_match_ends() {
    let dir = tempfile::tempdir().unwrap();
    // Finished tables leave memory quickly here, to check they load again on demand.
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.idle_unload = std::time::Duration::from_millis(100)
    })
    .await;
    let ch = srv.channel().await;
    let mut sleepy = register(&ch, "sleepy-bot").await;
    let t = sleepy
        .client
        .create_table(pb::CreateTableRequest {
            decision_deadline_ms: 25,
            seed: format!("{:064x}", 77),
            ..create(
                pb::Ruleset::BesterBube,
                3,
                vec![
                    house(1, pb::HouseBotPolicy::Heuristic),
                    house(2, pb::HouseBotPolicy::Random),
                ],
            )
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    let id = t.table_id;
    let mut watch = sleepy
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    sleepy.join(&id, None).await.unwrap();
    let mut autos = 0u32;
    let mut last_strikes = 0u32;
    let mut ended = false;
    while let Some(m) = timeout(60, watch.message()).await.unwrap().unwrap() {
        if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind {
            match e.body {
                Some(pb::event::Body::StrikeCounted(s)) => {
                    assert_eq!(s.seat, 0);
                    assert_eq!(s.strikes, last_strikes + 1);
                    last_strikes = s.strikes;
                }
                Some(pb::event::Body::MatchEnded(_)) => ended = true,
                _ if e.auto => autos += 1,
                _ => {}
            }
        }
    }
    assert!(ended, "the stream ends after MatchEnded");
    assert!(last_strikes > 0 && autos >= last_strikes);
    let table = sleepy
        .client
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(table.seats[0].strikes, last_strikes);
    let record = sleepy
        .client
        .get_game_record(pb::GetGameRecordRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .record_json;
    assert_eq!(record.matches("\"auto\":true").count() as u32, last_strikes);
    bete_rules::record::replay_json(&record).unwrap();
    expect(
        sleepy
            .client
            .submit_action(pb::SubmitActionRequest {
                table_id: id.clone(),
                action: Some(pb::Action {
                    kind: pb::ActionKind::Stand.into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await,
        Code::FailedPrecondition,
        "TABLE_FINISHED",
    );
    expect(
        sleepy.join(&id, None).await,
        Code::FailedPrecondition,
        "TABLE_FINISHED",
    );
    // After the actor unloads, the finished table is rebuilt from the store on demand.
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let again = sleepy
        .client
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(again.last_seq, table.last_seq);
    assert_eq!(again.seats[0].strikes, last_strikes);
    let mut w = sleepy
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(table.last_seq - 1),
        })
        .await
        .unwrap()
        .into_inner();
    let m = w.message().await.unwrap().unwrap();
    assert!(matches!(
        m.kind,
        Some(pb::watch_table_response::Kind::Event(pb::Event {
            body: Some(pb::event::Body::MatchEnded(_)),
            ..
        }))
    ));
    assert!(
        w.message().await.unwrap().is_none(),
        "the stream of a finished table ends"
    );
    srv.stop().await;
}

/// ListTables pages newest first with opaque tokens and filters by ruleset and state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tables_pages_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "lister-bot").await;
    let mut made = Vec::new();
    for i in 0..5 {
        let ruleset = if i % 2 == 0 {
            pb::Ruleset::Beast
        } else {
            pb::Ruleset::Lanterlui
        };
        let t = me
            .client
            .create_table(create(ruleset, 3, vec![]))
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        made.push(t.table_id);
    }
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = me
            .client
            .list_tables(pb::ListTablesRequest {
                page_size: 2,
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(page.tables.len() <= 2);
        seen.extend(page.tables.into_iter().map(|t| t.table_id));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    made.reverse();
    assert_eq!(seen, made, "every table once, newest first");
    let beast = me
        .client
        .list_tables(pb::ListTablesRequest {
            ruleset: pb::Ruleset::Beast.into(),
            state: pb::TableState::Waiting.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(beast.tables.len(), 3);
    assert!(
        beast
            .tables
            .iter()
            .all(|t| t.ruleset == pb::Ruleset::Beast as i32)
    );
    let playing = me
        .client
        .list_tables(pb::ListTablesRequest {
            state: pb::TableState::Playing.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(playing.tables.is_empty());
    srv.stop().await;
}
