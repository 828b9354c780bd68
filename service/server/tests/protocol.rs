//! The protocol as an outside bot author meets it (issue #13): WatchBot refuses a resume point
//! beyond a table, request ids belong to the bot and not the seat (live and after a replay),
//! one reason for a seat count the ruleset does not allow, an ErrorInfo on requests over the
//! transport limit, one message to act on per decision, chip conservation from `on_table`, and
//! a WatchBot stream that lets go of a table its bot left.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;

use bete_api::pb;
use common::*;
use pb::watch_bot_response::Kind;
use tonic::Code;
use tonic_types::StatusExt;

/// A three-seat Bête table with house bots at seats 1 and 2 and a long deadline.
fn bete_vs_house() -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        house_bots: vec![
            house(1, pb::HouseBotPolicy::Random),
            house(2, pb::HouseBotPolicy::Random),
        ],
        decision_deadline_ms: 60_000,
        seed: format!("{:064x}", 1313),
        ..Default::default()
    }
}

/// Waits for seat 0's turn; returns the view with its legal actions.
async fn turn_of_seat_0(c: &mut Client, id: &str) -> pb::SeatView {
    view_when(c, id, "seat 0 never got the turn", |v| {
        v.to_act == Some(0) && !v.legal_actions.is_empty()
    })
    .await
}

fn submit(v: &pb::SeatView, request_id: &str) -> pb::SubmitActionRequest {
    pb::SubmitActionRequest {
        table_id: v.table_id.clone(),
        action: Some(v.legal_actions[0].clone()),
        expected_seq: v.seq,
        request_id: request_id.into(),
    }
}

fn metadata(s: &tonic::Status) -> HashMap<String, String> {
    s.get_error_details()
        .error_info()
        .map(|i| i.metadata.clone())
        .unwrap_or_default()
}

/// Item 11: a WatchBot `from_seq` beyond its table's last seq fails the stream at open with
/// FROM_SEQ_OUT_OF_RANGE naming that table (it used to be accepted silently with a snapshot);
/// the last seq itself resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_refuses_a_from_seq_beyond_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "resume-bot").await;
    let a = me.create(bete_vs_house()).await;
    let b = me.create(bete_vs_house()).await;
    me.sit(&a, 0).await;
    me.sit(&b, 0).await;
    let last_a = turn_of_seat_0(&mut me.client, &a).await.seq;
    let last_b = turn_of_seat_0(&mut me.client, &b).await.seq;

    let beyond = HashMap::from([(a.clone(), last_a), (b.clone(), last_b + 100)]);
    let s = me
        .client
        .watch_bot(pb::WatchBotRequest {
            from_seq: beyond,
            ..Default::default()
        })
        .await
        .expect_err("a from_seq beyond the table is refused at open");
    assert_eq!(s.code(), Code::OutOfRange, "{s:?}");
    assert_eq!(reason(&s), "FROM_SEQ_OUT_OF_RANGE");
    assert_eq!(bad_fields(&s), [format!("from_seq[{b}]")]);
    let meta = metadata(&s);
    assert_eq!(meta["table_id"], b);
    assert_eq!(meta["last_seq"], last_b.to_string());

    // At the last seq of each: resumed, no snapshot, and the pending decision comes.
    let at_end = HashMap::from([(a.clone(), last_a), (b.clone(), last_b)]);
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest {
            from_seq: at_end,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut decided = std::collections::HashSet::new();
    while decided.len() < 2 {
        let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
        match m.kind.unwrap() {
            Kind::Snapshot(_) => panic!("a resumed table sends no snapshot"),
            Kind::Decision(d) => {
                decided.insert(d.table_id);
            }
            _ => {}
        }
    }
    srv.stop().await;
}

/// Item 3: when the bot must act as the stream opens, the snapshot carries no legal actions
/// and no deadline, and exactly one DecisionRequest for that seq follows: one message to act on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_sends_one_message_to_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "decide-once").await;
    let a = me.create(bete_vs_house()).await;
    me.sit(&a, 0).await;
    let pending = turn_of_seat_0(&mut me.client, &a).await;
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut kinds = Vec::new();
    let decision = loop {
        let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
        match m.kind.unwrap() {
            Kind::Seated(_) => kinds.push("seated"),
            Kind::Snapshot(v) => {
                kinds.push("snapshot");
                assert_eq!(v.seq, pending.seq);
                assert_eq!(
                    v.to_act,
                    Some(0),
                    "the snapshot still says whose turn it is"
                );
                assert!(v.legal_actions.is_empty(), "{:?}", v.legal_actions);
                assert_eq!(v.deadline, None);
            }
            Kind::Decision(d) => {
                kinds.push("decision");
                break d;
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(kinds, ["seated", "snapshot", "decision"]);
    assert_eq!(decision.seq, pending.seq);
    let view = decision.view.unwrap();
    assert_eq!(view.legal_actions, pending.legal_actions);
    assert!(view.deadline.is_some());
    me.client
        .submit_action(submit(&view, "only-once"))
        .await
        .unwrap();
    // Nothing else asks for that seq: the next decision (if any) is for a later one.
    loop {
        let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
        if let Some(Kind::Decision(d)) = m.kind {
            assert!(d.seq > pending.seq, "seq {} asked twice", d.seq);
            break;
        }
    }
    srv.stop().await;
}

/// Item 7: request ids are the bot's. A bot taking over a freed seat and reusing its
/// predecessor's id gets its own move applied, not `replayed` (live, and after a restart that
/// rebuilds the table from its log); its own retry is still `replayed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_belong_to_the_bot_not_the_seat() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut first = register(&ch, "first-occupant").await;
    let mut next = register(&ch, "next-occupant").await;
    let id = first.create(bete_vs_house()).await;
    first.sit(&id, 0).await;
    for rid in ["move-1", "move-2"] {
        let v = turn_of_seat_0(&mut first.client, &id).await;
        let r = first
            .client
            .submit_action(submit(&v, rid))
            .await
            .unwrap()
            .into_inner();
        assert!(!r.replayed);
    }
    first
        .client
        .leave_table(pb::LeaveTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap();
    next.sit(&id, 0).await;

    let v = turn_of_seat_0(&mut next.client, &id).await;
    let mine = submit(&v, "move-1");
    let r = next
        .client
        .submit_action(mine.clone())
        .await
        .unwrap()
        .into_inner();
    assert!(!r.replayed, "another bot's request id is not ours");
    assert!(r.seq > v.seq, "the move was applied");
    let applied = r.seq;
    srv.stop().await;

    // Rebuilt from the log: the keys are derived from the log's joins, not the seats.
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut next = Bot {
        client: client_with(&ch, Some(&next.token)),
        ..next
    };
    let again = next.client.submit_action(mine).await.unwrap().into_inner();
    assert_eq!(
        (again.seq, again.replayed),
        (applied, true),
        "our own retry"
    );
    let v = view_when(&mut next.client, &id, "never our turn again", |v| {
        (v.to_act == Some(0) && !v.legal_actions.is_empty()) || v.match_over
    })
    .await;
    if !v.match_over {
        let r = next
            .client
            .submit_action(submit(&v, "move-2"))
            .await
            .unwrap()
            .into_inner();
        assert!(!r.replayed, "after the replay, too");
        assert!(r.seq > v.seq);
    }
    srv.stop().await;
}

/// Item 6: a seat count the ruleset does not allow is BAD_CONFIG on `seats`, however large;
/// a missing count is INVALID_ARGUMENT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_count_the_ruleset_does_not_allow_is_bad_config() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "seat-counter").await;
    for (ruleset, seats) in [
        (pb::Ruleset::Bete, 9),
        (pb::Ruleset::Bete, 300),
        (pb::Ruleset::Bete, 2),
        (pb::Ruleset::Beast, 6),
        (pb::Ruleset::Lanterlui, 1),
    ] {
        let s = me
            .client
            .create_table(pb::CreateTableRequest {
                ruleset: ruleset.into(),
                seats,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            s.code(),
            Code::InvalidArgument,
            "{ruleset:?} {seats}: {s:?}"
        );
        assert_eq!(reason(&s), "BAD_CONFIG", "{ruleset:?} {seats}: {s:?}");
        assert_eq!(bad_fields(&s), ["seats"]);
        assert!(
            s.message().contains(&format!("{seats} seats (allowed: ")),
            "{}",
            s.message()
        );
    }
    let s = me
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&s), "INVALID_ARGUMENT");
    assert_eq!(bad_fields(&s), ["seats"]);
    srv.stop().await;
}

/// Item 8: a request over the 1 MiB transport limit, refused by tonic before any handler,
/// carries the same ErrorInfo as one over the configured limit: unary calls of both services,
/// a server-streaming call, and the SubmitActions stream (which ends with it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_transport_limit_carries_error_info() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "big-requests").await;
    let huge = "x".repeat(1100 * 1024);
    let check = |s: tonic::Status, what: &str| {
        assert_eq!(s.code(), Code::InvalidArgument, "{what}: {s:?}");
        assert_eq!(reason(&s), "INVALID_ARGUMENT", "{what}: {s:?}");
        assert_eq!(bad_fields(&s), ["(request)"], "{what}");
        assert!(s.message().contains("the limit is 65536"), "{what}: {s:?}");
        s
    };
    // Between the configured limit and the transport's: the gate, as before.
    let s = me
        .client
        .get_table(pb::GetTableRequest {
            table_id: "x".repeat(100 * 1024),
        })
        .await
        .unwrap_err();
    check(s, "GetTable over 64 KiB");
    let s = me
        .client
        .get_table(pb::GetTableRequest {
            table_id: huge.clone(),
        })
        .await
        .unwrap_err();
    check(s, "GetTable over 1 MiB");
    let mut bots = pb::bot_service_client::BotServiceClient::new(ch.clone());
    let s = bots
        .register_bot(pb::RegisterBotRequest {
            name: huge.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(s, "RegisterBot over 1 MiB");
    let s = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: huge.clone(),
            from_seq: None,
        })
        .await
        .unwrap_err();
    check(s, "WatchTable over 1 MiB");
    let unary = me
        .client
        .submit_action(pb::SubmitActionRequest {
            table_id: huge.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    let unary = check(unary, "SubmitAction over 1 MiB");

    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let mut answers = me
        .client
        .submit_actions(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    tx.send(pb::SubmitActionsRequest {
        table_id: huge,
        ..Default::default()
    })
    .await
    .unwrap();
    let end = timeout(20, answers.message())
        .await
        .unwrap()
        .expect_err("the stream ends");
    let end = check(end, "SubmitActions over 1 MiB");
    assert_eq!(end.message(), unary.message());
    // The server serves on.
    me.client
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap();
    srv.stop().await;
}

/// Item 5: every pool snapshot carries `on_table` and `fiche_value`; balances plus `on_table`
/// is zero in every view and every settled deal, and the table's typed `fiche_value` matches
/// its config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_table_makes_chip_conservation_visible() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "accountant").await;
    let mut req = bete_vs_house();
    req.config.insert("fiche_value".into(), "10".into());
    let created = me
        .client
        .create_table(req)
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(created.fiche_value, 10);
    assert_eq!(created.config["fiche_value"], "10");
    let id = created.table_id;
    me.sit(&id, 0).await;
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let (mut views, mut settled, mut nonzero) = (0, 0, 0);
    let conserved = |v: &pb::SeatView| {
        let p = v.pools.clone().unwrap();
        assert_eq!(p.fiche_value, 10);
        let balances: i64 = v.seat_states.iter().map(|s| s.balance).sum();
        assert_eq!(balances + p.on_table, 0, "seq {}: {p:?}", v.seq);
        p.on_table
    };
    loop {
        let m = timeout(30, s.message()).await.unwrap().unwrap().unwrap();
        match m.kind.unwrap() {
            Kind::Snapshot(v) => {
                conserved(&v);
                views += 1;
            }
            Kind::Decision(d) => {
                let v = d.view.unwrap();
                if conserved(&v) != 0 {
                    nonzero += 1;
                }
                views += 1;
                me.client.submit_action(submit(&v, "")).await.unwrap();
            }
            Kind::Event(e) => match e.body.unwrap() {
                pb::event::Body::DealSettled(d) => {
                    let p = d.pools.unwrap();
                    let want = p.pot
                        + p.fiches * 10
                        + p.king_pool
                        + p.staked_bete.unwrap_or(0)
                        + p.bete_queue.iter().sum::<i64>();
                    assert_eq!(p.on_table, want, "{p:?}");
                    assert_eq!(d.balances.iter().sum::<i64>() + p.on_table, 0);
                    settled += 1;
                }
                pb::event::Body::MatchEnded(_) => break,
                _ => {}
            },
            _ => {}
        }
    }
    assert!(
        views > 2 && settled > 0 && nonzero > 0,
        "{views} {settled} {nonzero}"
    );
    srv.stop().await;
}

/// Item 4: a WatchBot stream follows the tables its bot sits at. After LeaveTable on a listed
/// table, SeatLeft is the last it hears of that table (it used to go on in spectator form):
/// the next bot's SeatTaken there is not sent, the next table's Seated is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_lets_go_of_a_table_the_bot_left() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "leaver").await;
    let mut other = register(&ch, "taker").await;
    let a = me.create(bete_vs_house()).await;
    let b = me.create(bete_vs_house()).await;
    me.sit(&a, 0).await;
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    // Up to the pending decision: the stream is live at `a`.
    loop {
        let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
        if let Some(Kind::Decision(_)) = m.kind {
            break;
        }
    }
    me.client
        .leave_table(pb::LeaveTableRequest {
            table_id: a.clone(),
        })
        .await
        .unwrap();
    other.sit(&a, 0).await;
    me.sit(&b, 0).await;
    let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
    match m.kind.unwrap() {
        Kind::Event(e) => assert!(
            matches!(e.body, Some(pb::event::Body::SeatLeft(_))),
            "{e:?}"
        ),
        other => panic!("expected SeatLeft, got {other:?}"),
    }
    let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
    assert_eq!(m.table_id, b, "nothing more of the table we left: {m:?}");
    assert!(matches!(m.kind, Some(Kind::Seated(_))), "{m:?}");
    srv.stop().await;
}
