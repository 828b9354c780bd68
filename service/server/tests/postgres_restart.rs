//! PostgreSQL restarting mid-play under a real bete-server: moves sent while it is down fail
//! with UNAVAILABLE / STORE_UNAVAILABLE (never an OK without a commit), the same request retried
//! once it is back is applied exactly once, and the match plays to the end.
//!
//! A test binary of its own: it stops the shared test PostgreSQL for a while, which no other
//! test may see. Needs `BETE_TEST_DATABASE_URL` and `BETE_TEST_PG_RESTART` (scripts/pg.sh).
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bete_api::pb;
use common::pg::*;
use common::*;
use sqlx::Connection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_mid_play_loses_nothing_and_applies_nothing_twice() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let Ok(restart) = std::env::var("BETE_TEST_PG_RESTART") else {
        eprintln!("SKIPPED (PostgreSQL restart): BETE_TEST_PG_RESTART is not set (scripts/pg.sh)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let node = Node::start(&url, "r1", "3", &dir);
    let ch = connect(node.addr).await;
    let me = register(&ch, "patient-bot").await;
    let mut c = me.client;
    let id = new_table(&mut c).await;
    let mut acked = Vec::new();
    play(&mut c, &id, 3, &mut acked).await;
    let v = my_turn(&mut c, &id).await;
    let action = v.legal_actions[acked.len() % v.legal_actions.len()].clone();
    let req = pb::SubmitActionRequest {
        table_id: id.clone(),
        action: Some(action.clone()),
        expected_seq: v.seq,
        request_id: "during-the-restart".into(),
    };

    // PostgreSQL down for 8 s: longer than the server waits for a connection (5 s), so the
    // call fails rather than waits (a call that waited and then committed is rightly OK).
    let restarting = std::thread::spawn(move || {
        std::process::Command::new(&restart)
            .arg("8")
            .status()
            .unwrap()
    });
    let mut down = false;
    // (A fast stop writes a checkpoint first: seconds on a busy machine, and more than 20 s
    // was seen with the machine's two cores busy with other work.)
    for _ in 0..1200 {
        // Down for good: the connection refused, not "shutting down" (while PostgreSQL shuts
        // down, sessions already open may still commit, and a move they commit is rightly
        // acknowledged).
        if let Err(sqlx::Error::Io(_)) = sqlx::PgConnection::connect(&url).await {
            down = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(down, "PostgreSQL did not go down");

    // The move, sent and retried with the same request id until it is acknowledged: every
    // refusal is UNAVAILABLE with the store's reason.
    let mut refused = 0;
    let answer = loop {
        match c.submit_action(req.clone()).await {
            Ok(r) => break r.into_inner(),
            Err(s) => {
                assert_eq!(s.code(), tonic::Code::Unavailable, "{s:?}");
                assert_eq!(reason(&s), "STORE_UNAVAILABLE", "{s:?}");
                refused += 1;
                assert!(refused < 300, "PostgreSQL never came back");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert!(
        refused > 0,
        "a move was acknowledged while PostgreSQL was down: {answer:?}"
    );
    assert!(restarting.join().unwrap().success());
    acked.push(action.text);
    assert!(answer.seq > v.seq);
    // Retried once more: recognised, not applied again.
    let again = c.submit_action(req).await.unwrap().into_inner();
    assert!(again.replayed);

    play(&mut c, &id, 1000, &mut acked).await;
    assert!(my_turn(&mut c, &id).await.match_over);
    assert_record(&mut c, &id, &acked).await;
}
