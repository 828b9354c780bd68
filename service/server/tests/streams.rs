//! Idempotency, racing submits, resume without gap or duplicate, and slow watchers.
#![allow(clippy::unwrap_used)]

mod common;

use bete_api::pb;
use common::*;
use tonic::Code;

/// Wait until the table rests: our turn or the match over. Returns its last seq.
async fn my_turn_or_end(bot: &mut Bot, id: &str) -> u64 {
    view_when(&mut bot.client, id, "the table never rested", |v| {
        v.to_act == Some(0) || v.match_over
    })
    .await
    .seq
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_request_id_applies_once_and_races_have_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "retry-bot").await;
    let id = me
        .create(against_house(pb::Ruleset::Bete, 3, 60_000, 4242))
        .await;
    me.sit(&id, 0).await;

    // Same request_id twice: the second returns the first result, nothing applied twice.
    let v = me.turn_of(&id, 0).await;
    let req = pb::SubmitActionRequest {
        table_id: id.clone(),
        action: Some(v.legal_actions[0].clone()),
        expected_seq: v.seq,
        request_id: "once-only".into(),
    };
    let first = me
        .client
        .submit_action(req.clone())
        .await
        .unwrap()
        .into_inner();
    assert!(!first.replayed);
    let again = me
        .client
        .submit_action(req.clone())
        .await
        .unwrap()
        .into_inner();
    assert!(again.replayed);
    assert_eq!(again.seq, first.seq);
    let record_len = |t: &pb::Table| t.last_seq;
    let t1 = me
        .client
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert!(record_len(&t1) >= first.seq);
    // Same id, different action: refused.
    if v.legal_actions.len() > 1 {
        let mut other = req.clone();
        other.action = Some(v.legal_actions[1].clone());
        let s = me.client.submit_action(other).await.unwrap_err();
        assert_eq!(s.code(), Code::AlreadyExists);
        assert_eq!(reason(&s), "DUPLICATE_REQUEST_CONFLICT");
    }

    // Two different moves for the same decision at once: exactly one applies. Play on until
    // a decision offers two choices.
    let mut applied = 1;
    let v = loop {
        let v = me.turn_of(&id, 0).await;
        if v.legal_actions.len() >= 2 {
            break v;
        }
        let r = pb::SubmitActionRequest {
            table_id: id.clone(),
            action: Some(v.legal_actions[0].clone()),
            expected_seq: v.seq,
            request_id: format!("forced-{}", v.seq),
        };
        me.client.submit_action(r).await.unwrap();
        applied += 1;
    };
    let mk = |i: usize, rid: &str| pb::SubmitActionRequest {
        table_id: id.clone(),
        action: Some(v.legal_actions[i].clone()),
        expected_seq: v.seq,
        request_id: rid.into(),
    };
    let (mut c1, mut c2) = (me.client.clone(), me.client.clone());
    let (a, b) = tokio::join!(
        c1.submit_action(mk(0, "race-a")),
        c2.submit_action(mk(1, "race-b"))
    );
    let loser = match (a, b) {
        (Ok(_), Err(e)) | (Err(e), Ok(_)) => e,
        other => panic!("{other:?}"),
    };
    applied += 1;
    assert_eq!(loser.code(), Code::Aborted);
    assert_eq!(reason(&loser), "STALE_SEQ");
    // The log holds each applied action of ours once: count them up to where the table rests
    // (our turn again, or the end).
    let rest = my_turn_or_end(&mut me, &id).await;
    let mut watch = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(0),
        })
        .await
        .unwrap()
        .into_inner();
    let mut mine = 0;
    let mut seq = 0;
    while seq < rest {
        let m = timeout(10, watch.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind {
            seq = e.seq;
            match &e.body {
                Some(pb::event::Body::Spoke(s)) if s.seat == 0 => mine += 1,
                Some(pb::event::Body::CardPlayed(s)) if s.seat == 0 => mine += 1,
                _ => {}
            }
        }
    }
    assert_eq!(mine, applied, "each applied action of ours appears once");
    srv.stop().await;
}

fn seqs_of(msgs: &[pb::WatchTableResponse]) -> Vec<u64> {
    msgs.iter()
        .filter_map(|m| match &m.kind {
            Some(pb::watch_table_response::Kind::Event(e)) => Some(e.seq),
            _ => None,
        })
        .collect()
}

/// A watcher that disconnects mid-deal and resumes from its last seq sees every event once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_has_no_gap_and_no_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "watcher-bot").await;
    // The seat we hold is never played by us: it times out, so the match moves on by itself.
    let mut req = against_house(pb::Ruleset::Lanterlui, 4, 20, 4242);
    req.house_bots[1].policy = pb::HouseBotPolicy::Heuristic.into();
    let id = me.create(req).await;
    let mut w = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let first = w.message().await.unwrap().unwrap();
    let snap_seq = match first.kind.unwrap() {
        pb::watch_table_response::Kind::Snapshot(v) => v.seq,
        k => panic!("first message is not a snapshot: {k:?}"),
    };
    me.sit(&id, 0).await;
    let mut got = Vec::new();
    while got.len() < 40 {
        got.push(timeout(20, w.message()).await.unwrap().unwrap().unwrap());
    }
    drop(w);
    let mut seqs = seqs_of(&got);
    let last = *seqs.last().unwrap();
    let mut w = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(last),
        })
        .await
        .unwrap()
        .into_inner();
    while let Some(m) = timeout(60, w.message()).await.unwrap().unwrap() {
        assert!(
            !matches!(m.kind, Some(pb::watch_table_response::Kind::Snapshot(_))),
            "a resume sends no snapshot"
        );
        seqs.extend(seqs_of(&[m]));
    }
    let expected: Vec<u64> = (snap_seq + 1..=*seqs.last().unwrap()).collect();
    assert_eq!(seqs, expected, "gap or duplicate across the resume");
    let t = me
        .client
        .get_table(pb::GetTableRequest { table_id: id })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(t.last_seq, *seqs.last().unwrap());
    assert_eq!(t.state, pb::TableState::Finished as i32);
    srv.stop().await;
}

/// A watcher that does not read is cut with WATCHER_TOO_SLOW (and the last delivered seq)
/// while the table plays on; resuming from that seq continues with no gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_watcher_is_cut_and_can_resume() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| c.watch_buffer = 8).await;
    let ch = srv.narrow_channel().await;
    let mut me = register(&ch, "slow-bot").await;
    let id = me
        .create(against_house(pb::Ruleset::Lanterlui, 7, 20, 4242))
        .await;
    let mut w = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    me.sit(&id, 0).await;
    // Do not read until the match is over.
    for _ in 0..600 {
        let t = me
            .client
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        if t.state == pb::TableState::Finished as i32 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut got = Vec::new();
    let cut = loop {
        match timeout(20, w.message()).await.unwrap() {
            Ok(Some(m)) => got.push(m),
            Ok(None) => panic!(
                "stream ended without being cut after {} messages",
                got.len()
            ),
            Err(s) => break s,
        }
    };
    assert_eq!(cut.code(), Code::ResourceExhausted);
    assert_eq!(reason(&cut), "WATCHER_TOO_SLOW");
    let from: u64 = {
        use tonic_types::StatusExt;
        cut.get_error_details().error_info().unwrap().metadata["from_seq"]
            .parse()
            .unwrap()
    };
    let mut seqs = seqs_of(&got);
    assert_eq!(
        *seqs.last().unwrap(),
        from,
        "from_seq is the last delivered event"
    );
    let mut w = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(from),
        })
        .await
        .unwrap()
        .into_inner();
    while let Some(m) = timeout(20, w.message()).await.unwrap().unwrap() {
        seqs.extend(seqs_of(&[m]));
    }
    let first = seqs[0];
    let expected: Vec<u64> = (first..=*seqs.last().unwrap()).collect();
    assert_eq!(seqs, expected);
    // The drop is counted in the metrics.
    srv.stop().await;
}

/// WatchBot resumes per table from `from_seq`: no snapshot, the missed events, then decisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_resumes_per_table() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "multi-bot").await;
    let a = me
        .create(against_house(pb::Ruleset::Bete, 3, 60_000, 4242))
        .await;
    let b = me
        .create(against_house(pb::Ruleset::BesteBoer, 3, 60_000, 4242))
        .await;
    me.sit(&a, 0).await;
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    // Joining b later attaches it to the open stream.
    me.sit(&b, 0).await;
    use pb::watch_bot_response::Kind;
    let mut last = std::collections::HashMap::<String, u64>::new();
    let mut seated = std::collections::HashSet::new();
    let mut decisions = 0;
    // Play five decisions over both tables, then disconnect.
    while decisions < 5 {
        let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
        match m.kind.unwrap() {
            Kind::Seated(x) => {
                seated.insert(x.table_id);
            }
            Kind::Snapshot(v) => {
                last.insert(m.table_id.clone(), v.seq);
            }
            Kind::Event(e) => {
                let prev = last.insert(m.table_id.clone(), e.seq).unwrap();
                assert_eq!(e.seq, prev + 1, "gap in {}", m.table_id);
            }
            Kind::Decision(d) => {
                assert_eq!(d.seq, last[&m.table_id]);
                let v = d.view.unwrap();
                me.client
                    .submit_action(pb::SubmitActionRequest {
                        table_id: d.table_id.clone(),
                        action: Some(v.legal_actions[0].clone()),
                        expected_seq: d.seq,
                        request_id: String::new(),
                    })
                    .await
                    .unwrap();
                decisions += 1;
            }
            Kind::Heartbeat(_) | Kind::Resync(_) => {}
        }
    }
    assert_eq!(seated.len(), 2);
    drop(s);
    // Resume both tables where we stopped.
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest {
            from_seq: last.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut resumed = std::collections::HashSet::new();
    while resumed.len() < 2 {
        let m = timeout(20, s.message()).await.unwrap().unwrap().unwrap();
        match m.kind.unwrap() {
            Kind::Snapshot(_) => panic!("a resumed table sends no snapshot"),
            Kind::Event(e) => {
                let prev = last.insert(m.table_id.clone(), e.seq).unwrap();
                assert_eq!(
                    e.seq,
                    prev + 1,
                    "gap or duplicate in {} after resume",
                    m.table_id
                );
            }
            Kind::Decision(d) => {
                assert_eq!(d.seq, last[&m.table_id], "decision at the latest seq");
                resumed.insert(m.table_id.clone());
            }
            _ => {}
        }
    }
    srv.stop().await;
}

/// Shutting down: open streams end with UNAVAILABLE SHUTTING_DOWN and `run` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_streams_with_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "drain-bot").await;
    let id = me
        .create(pb::CreateTableRequest {
            seats: 3,
            ..against_house(pb::Ruleset::Bete, 1, 60_000, 4242)
        })
        .await;
    let mut w = me
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id,
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(matches!(
        w.message().await.unwrap().unwrap().kind,
        Some(pb::watch_table_response::Kind::Snapshot(_))
    ));
    let stopping = tokio::spawn(srv.stop());
    let end = timeout(20, w.message()).await.unwrap().unwrap_err();
    assert_eq!(end.code(), Code::Unavailable);
    assert_eq!(reason(&end), "SHUTTING_DOWN");
    timeout(20, stopping).await.unwrap().unwrap();
}

/// A bot that reconnects WatchBot naming a table whose match ended while it was away still gets
/// the events it missed, up to and including `MatchEnded` (issue 3 follow-up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_bot_resume_reaches_match_end() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "late-bot").await;
    let a = me
        .create(against_house(pb::Ruleset::Bete, 3, 60_000, 4242))
        .await;
    me.sit(&a, 0).await;
    // Play the whole match with no stream open; remember the seq of our last decision.
    let mut last_decision = 0;
    let final_seq = loop {
        let v = me
            .client
            .get_seat_view(pb::GetSeatViewRequest {
                table_id: a.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .view
            .unwrap();
        if v.match_over {
            break v.seq;
        }
        if v.to_act != Some(0) {
            my_turn_or_end(&mut me, &a).await;
            continue;
        }
        last_decision = v.seq;
        me.client
            .submit_action(pb::SubmitActionRequest {
                table_id: a.clone(),
                action: Some(v.legal_actions[0].clone()),
                expected_seq: v.seq,
                request_id: String::new(),
            })
            .await
            .unwrap();
    };
    assert!(last_decision > 0 && last_decision < final_seq);
    // Resume from that decision: the finished table must still be served.
    let from_seq = std::collections::HashMap::from([(a.clone(), last_decision)]);
    let mut s = me
        .client
        .watch_bot(pb::WatchBotRequest {
            from_seq,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    use pb::watch_bot_response::Kind;
    let mut last = last_decision;
    // One bound for the whole resume: heartbeats alone must not keep the test waiting.
    let until = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let m = tokio::time::timeout_at(until, s.message())
            .await
            .expect("the missed events never came")
            .unwrap()
            .unwrap();
        match m.kind.unwrap() {
            Kind::Seated(x) => assert_eq!(x.table_id, a),
            Kind::Event(e) => {
                assert_eq!(e.seq, last + 1, "gap or duplicate after resume");
                last = e.seq;
                if matches!(e.body, Some(pb::event::Body::MatchEnded(_))) {
                    break;
                }
            }
            Kind::Heartbeat(_) => {}
            other => panic!("unexpected {other:?} after resuming a finished table"),
        }
    }
    assert_eq!(last, final_seq);
    srv.stop().await;
}

/// The caller's deadline is the server's too (the hyper accept loop once lost tonic's
/// `grpc-timeout` handling): a WatchBot stream of a bot with no tables, which would wait for its
/// first message until a heartbeat, ends at its short deadline with DEADLINE_EXCEEDED and the
/// server's ErrorInfo (so the server ended it, not the client); the server let go of the
/// stream (the bot's only stream place is free again); a malformed deadline is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_ends_at_its_deadline_server_side() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        // The first message would be a heartbeat, long after the deadline.
        c.heartbeat_interval = std::time::Duration::from_secs(30);
        c.limits.streams_per_bot = 1;
    })
    .await;
    let ch = srv.channel().await;
    let mut bot = register(&ch, "in-a-hurry").await;
    for _ in 0..2 {
        let mut req = tonic::Request::new(pb::WatchBotRequest::default());
        req.set_timeout(std::time::Duration::from_millis(300));
        let started = std::time::Instant::now();
        let mut stream = bot.client.watch_bot(req).await.unwrap().into_inner();
        let end = timeout(10, stream.message()).await.unwrap();
        let s = end.expect_err("the stream should end at its deadline");
        assert_eq!(s.code(), Code::DeadlineExceeded, "{s:?}");
        assert_eq!(reason(&s), "DEADLINE_EXCEEDED", "{s:?}");
        assert!(s.message().contains("300 ms"), "{s:?}");
        assert!(started.elapsed() >= std::time::Duration::from_millis(300));
        // The server dropped its side: the next round opens a stream again (the bot's one
        // place), where a stream still held would get TOO_MANY_STREAMS.
    }
    // Without a deadline the stream stays open.
    let mut stream = bot
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(600), stream.message())
            .await
            .is_err()
    );
    drop(stream);
    // A unary call within its deadline is answered as usual.
    let mut req = tonic::Request::new(pb::ListTablesRequest::default());
    req.set_timeout(std::time::Duration::from_secs(5));
    bot.client.list_tables(req).await.unwrap();
    // A deadline that is not one is refused with the field named.
    let mut req = tonic::Request::new(pb::ListTablesRequest::default());
    req.metadata_mut()
        .insert("grpc-timeout", "soon".parse().unwrap());
    let s = bot.client.list_tables(req).await.unwrap_err();
    assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
    assert_eq!(bad_fields(&s), ["grpc-timeout"]);
    srv.stop().await;
}
