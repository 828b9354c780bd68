//! Waiting tables kept as store rows (issue 26): a table at most one bot sits at has no actor
//! in memory until a call needs one (a second seat, a seat view), answers every read exactly as
//! a loaded one does, is joined (also with an invitation code) as before, survives a restart as
//! a row, and expires on time.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use bete_api::pb;
use common::*;
use tonic::Code;

fn table(seats: u32, house_bots: Vec<pb::HouseBotSeat>, private: bool) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats,
        house_bots,
        visibility: if private {
            pb::Visibility::Private
        } else {
            pb::Visibility::Listed
        }
        .into(),
        ..Default::default()
    }
}

async fn listed(c: &mut Client, id: &str) -> pb::Table {
    c.list_tables(pb::ListTablesRequest {
        page_size: 100,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .tables
    .into_iter()
    .find(|t| t.table_id == id)
    .unwrap()
}

/// (tables_loaded, tables_waiting_stored)
async fn memory(metrics: SocketAddr) -> (i64, i64) {
    (
        gauge(metrics, "bete_tables_loaded").await,
        gauge(metrics, "bete_tables_waiting_stored").await,
    )
}

/// Created tables stay rows while only read: GetTable and ListTables answer from the row what
/// the actor answers once loaded (seats, the house bot's seat, seq, state), a join without the
/// invitation code is refused without loading, and the first call that needs the actor (a
/// seat view, a join with the code) loads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_table_is_a_row_until_a_call_needs_its_actor() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.metrics_addr = Some(metrics);
    })
    .await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "creator").await;
    let mut b = register(&ch, "joiner").await;
    let (loaded0, stored0) = memory(metrics).await;
    assert_eq!(stored0, 0);

    let open = a
        .client
        .create_table(table(3, vec![house(2, pb::HouseBotPolicy::Random)], false))
        .await
        .unwrap()
        .into_inner();
    let private = a
        .client
        .create_table(table(3, Vec::new(), true))
        .await
        .unwrap()
        .into_inner();
    let created = open.table.unwrap();
    let id = created.table_id.clone();
    let pid = private.table.unwrap().table_id;
    assert_eq!(created.state, pb::TableState::Waiting as i32);
    // The house bot's seat is an event already, as a loaded table counts it.
    assert_eq!(created.last_seq, 1);
    assert_eq!(
        memory(metrics).await,
        (loaded0, 2),
        "created tables were loaded"
    );

    // Reads answer from the row.
    let from_row = describe(&mut b.client, &id).await;
    assert_eq!(from_row, created);
    let row_listed = listed(&mut b.client, &id).await;
    assert_eq!(row_listed, created);
    assert_eq!(describe(&mut a.client, &pid).await.table_id, pid);
    let e = b
        .client
        .get_table(pb::GetTableRequest {
            table_id: pid.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::PermissionDenied, "TABLE_PRIVATE")
    );
    // A join without the code is refused before any actor is needed.
    let e = b
        .client
        .join_table(pb::JoinTableRequest {
            table_id: pid.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "INVITATION_REQUIRED");
    assert_eq!(memory(metrics).await, (loaded0, 2), "a read loaded a table");

    // A seat view needs the actor: loaded, and it answers what the row did.
    let view = b
        .client
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(view.seq, created.last_seq);
    assert_eq!(memory(metrics).await, (loaded0 + 1, 1));
    assert_eq!(describe(&mut b.client, &id).await, from_row);
    assert_eq!(listed(&mut b.client, &id).await, row_listed);

    // The private table joined with its code: the first seat is stored, the table still a row.
    let joined = b
        .client
        .join_table(pb::JoinTableRequest {
            table_id: pid.clone(),
            seat: Some(1),
            invitation_code: private.invitation_code.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.seat, 1);
    let one_seated = joined.table.unwrap();
    assert_eq!(one_seated.seats[1].bot_id, b.id);
    assert_eq!(one_seated.last_seq, 1);
    assert_eq!(memory(metrics).await, (loaded0 + 1, 1));
    assert_eq!(describe(&mut b.client, &pid).await, one_seated);
    // The same seat again, or a seat taken, is refused as the actor refuses it.
    let e = b
        .client
        .join_table(pb::JoinTableRequest {
            table_id: pid.clone(),
            seat: Some(2),
            invitation_code: private.invitation_code.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "ALREADY_SEATED");
    // The second seat loads the actor, which has the first join from the store.
    let e = a
        .client
        .join_table(pb::JoinTableRequest {
            table_id: pid.clone(),
            seat: Some(1),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "SEAT_TAKEN");
    assert_eq!(memory(metrics).await, (loaded0 + 2, 0));
    assert_eq!(describe(&mut b.client, &pid).await, one_seated);
    let joined = a
        .client
        .join_table(pb::JoinTableRequest {
            table_id: pid.clone(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.seat, 0);
    assert_eq!(joined.table.unwrap().last_seq, 2);
    srv.stop().await;
}

/// A waiting table nobody joined expires within its waiting time plus a sweep, without ever
/// being joined: it is closed (TABLE_CLOSED to a late joiner) and its creator's place freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_row_nobody_joined_expires() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.metrics_addr = Some(metrics);
        c.waiting_ttl = Duration::from_secs(1);
        c.limits.open_tables_per_bot = 1;
    })
    .await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "waiter").await;
    let id = a
        .client
        .create_table(table(3, Vec::new(), false))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    assert_eq!(memory(metrics).await.1, 1);
    let e = a
        .client
        .create_table(table(3, Vec::new(), false))
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "TOO_MANY_TABLES");
    wait_for_gauge(metrics, "bete_tables_waiting_stored", 0).await;
    let mut closed = false;
    for _ in 0..100 {
        if describe(&mut a.client, &id).await.state == pb::TableState::Finished as i32 {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(closed, "the waiting row never expired");
    let mut b = register(&ch, "late").await;
    let e = b
        .client
        .join_table(pb::JoinTableRequest {
            table_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::FailedPrecondition, "TABLE_CLOSED")
    );
    a.client
        .create_table(table(3, Vec::new(), false))
        .await
        .unwrap();
    srv.stop().await;
}

/// After a restart a waiting table with one bot seated is kept as its row again (not loaded),
/// still counts against its creator, answers as before, and the seat that fills it loads it
/// and starts the match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_row_stays_a_row_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let start = || {
        TestServer::start(dir.path().to_path_buf(), |c| {
            c.metrics_addr = Some(metrics);
            c.limits.open_tables_per_bot = 1;
        })
    };
    let srv = start().await;
    let ch = srv.channel().await;
    let mut a = register(&ch, "before").await;
    let id = a
        .client
        .create_table(table(3, vec![house(0, pb::HouseBotPolicy::Random)], false))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    let seated = a
        .client
        .join_table(pb::JoinTableRequest {
            table_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(seated.seat, 1);
    let before = seated.table.unwrap();
    assert_eq!(memory(metrics).await, (0, 1));
    srv.stop().await;

    let srv = start().await;
    let ch = srv.channel().await;
    let mut a = client_with(&ch, Some(&a.token));
    let mut b = register(&ch, "after").await;
    assert_eq!(memory(metrics).await, (0, 1));
    assert_eq!(describe(&mut a, &id).await, before);
    let e = a
        .create_table(table(3, Vec::new(), false))
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "TOO_MANY_TABLES");
    let joined = b
        .client
        .join_table(pb::JoinTableRequest {
            table_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.seat, 2);
    assert_eq!(memory(metrics).await, (1, 0));
    assert_eq!(
        describe(&mut a, &id).await.state,
        pb::TableState::Playing as i32
    );
    srv.stop().await;
}
