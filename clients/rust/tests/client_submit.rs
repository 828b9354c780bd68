//! SubmitAction through the client against a real server: a retry after an injected
//! UNAVAILABLE (the answer lost after the server applied the action) applies once, and
//! refusals come back as typed reasons.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bete_client::{Client, WatchItem, pb};
use common::TestServer;
use tonic::body::Body;
use tonic::transport::Channel;

/// Lets the first `lose` SubmitAction calls reach the server, then throws the answer away and
/// reports UNAVAILABLE, as if the link broke after the server stored the action.
#[derive(Clone)]
struct LoseAnswers {
    inner: Channel,
    lose: Arc<AtomicUsize>,
    seen: Arc<AtomicUsize>,
}

impl tower::Service<http::Request<Body>> for LoseAnswers {
    type Response = http::Response<Body>;
    type Error = tonic::transport::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let submit = request.uri().path() == "/bete.v1.TableService/SubmitAction";
        if submit {
            self.seen.fetch_add(1, Ordering::SeqCst);
        }
        let lose = submit
            && self
                .lose
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        let call = self.inner.call(request);
        Box::pin(async move {
            let response = call.await?;
            if lose {
                // The server answered, so the action is stored; the client never hears it.
                drop(response);
                return Ok(tonic::Status::unavailable("injected: the answer was lost").into_http());
            }
            Ok(response)
        })
    }
}

/// A table of three seats, each held by a bot we control; nothing moves unless we act.
async fn three_bot_table(server: &TestServer) -> (String, Vec<Client>) {
    let creator = server.bot("creator").await;
    let table = creator
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Beast as i32,
            seats: 3,
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .expect("create");
    let mut seats = Vec::new();
    for i in 0..3 {
        let bot = server.bot(&format!("seat{i}")).await;
        let joined = bot
            .join_table(&table.table_id, Some(i))
            .await
            .expect("join");
        assert_eq!(joined.seat, i);
        seats.push(bot);
    }
    (table.table_id, seats)
}

/// Waits until the table asks some seat to act; returns its view.
async fn view_to_act(seats: &[Client], table_id: &str) -> pb::SeatView {
    for _ in 0..100 {
        let view = seats[0].get_seat_view(table_id).await.expect("view");
        if let Some(to_act) = view.to_act {
            return seats[to_act as usize]
                .get_seat_view(table_id)
                .await
                .expect("view");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nobody is asked to act");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_submit_after_a_lost_answer_applies_once() {
    let server = TestServer::start().await;
    let (table_id, seats) = three_bot_table(&server).await;
    let view = view_to_act(&seats, &table_id).await;
    let seat = view.to_act.expect("to act");
    let token_holder = &seats[seat as usize];

    // The same bot, through a channel that loses the first SubmitAction answer.
    let channel = Channel::from_shared(server.url.clone())
        .expect("url")
        .connect()
        .await
        .expect("connect");
    let lose = Arc::new(AtomicUsize::new(1));
    let seen = Arc::new(AtomicUsize::new(0));
    let flaky = Client::from_service(LoseAnswers {
        inner: channel,
        lose: lose.clone(),
        seen: seen.clone(),
    });
    let token = token_of(token_holder);
    flaky.set_token(&token).expect("token");

    let action = view.legal_actions[0].clone();
    let submitted = flaky
        .submit_action(&table_id, &action, view.seq)
        .await
        .expect("submit");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "one lost attempt and one retry"
    );
    assert_eq!(submitted.attempts, 2);
    assert!(
        submitted.replayed,
        "the retry returned the stored result of the first attempt"
    );

    // Exactly one action by that seat is in the log between the view and now.
    let after = seats[0].get_seat_view(&table_id).await.expect("view");
    assert_eq!(after.seq, submitted.seq, "nothing else happened");
    let mut watch = seats[0].watch_table(&table_id, Some(view.seq));
    let mut acted = 0;
    while let Ok(Ok(Some(item))) = tokio::time::timeout(Duration::from_secs(2), watch.next()).await
    {
        if let WatchItem::Event(event) = item {
            use pb::event::Body as B;
            match &event.body {
                Some(B::CardPlayed(c)) if c.seat == seat => acted += 1,
                Some(B::HiddenLead(h)) if h.seat == seat => acted += 1,
                Some(B::Spoke(s)) if s.seat == seat => acted += 1,
                Some(B::Exchanged(e)) if e.seat == seat => acted += 1,
                _ => {}
            }
            if event.seq >= submitted.seq {
                break;
            }
        }
    }
    assert_eq!(acted, 1, "the action was applied exactly once");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_a_typed_reason() {
    let server = TestServer::start().await;
    let (table_id, seats) = three_bot_table(&server).await;
    let view = view_to_act(&seats, &table_id).await;
    let seat = view.to_act.expect("to act") as usize;
    let other = (seat + 1) % 3;
    let action = view.legal_actions[0].clone();

    // Not your turn.
    let err = seats[other]
        .submit_action(&table_id, &action, 0)
        .await
        .expect_err("not my seat");
    assert_eq!(err.reason(), Some(pb::ErrorReason::NotYourSeat), "{err}");

    // A stale expected_seq names the current one.
    let err = seats[seat]
        .submit_action(&table_id, &action, view.seq + 7)
        .await
        .expect_err("stale");
    assert_eq!(err.reason(), Some(pb::ErrorReason::StaleSeq), "{err}");
    let bete_client::Error::Rpc(rpc) = &err else {
        panic!("not an rpc error: {err}")
    };
    assert_eq!(rpc.seq_metadata("last_seq"), Some(view.seq));

    // An unknown table.
    let err = seats[seat]
        .get_table("no-such-table")
        .await
        .expect_err("unknown");
    assert_eq!(err.reason(), Some(pb::ErrorReason::TableNotFound), "{err}");
    assert!(
        err.to_string().contains("bete tables"),
        "the message says what to do: {err}"
    );

    // No token at all: reads of listed tables are open to spectators, writes are not.
    let anonymous = Client::connect(&server.url).await.expect("connect");
    anonymous
        .list_tables(pb::Ruleset::Unspecified, pb::TableState::Unspecified)
        .await
        .expect("spectators list tables without a token");
    let err = anonymous
        .create_table(common::house_table(pb::Ruleset::Bete, 3, 0))
        .await
        .expect_err("anon");
    assert_eq!(
        err.reason(),
        Some(pb::ErrorReason::Unauthenticated),
        "{err}"
    );
    server.stop().await;
}

fn token_of(client: &Client) -> String {
    client.token().expect("registered")
}
