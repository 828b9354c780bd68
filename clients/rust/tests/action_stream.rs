//! ActionStream against a real server: the same results and the same typed errors as
//! SubmitAction, idempotent by request_id across both paths, and a runner that submits on
//! streams or on unary calls survives a cut link without a missed or doubled move.

mod common;

use std::time::Duration;

use bete_client::{Client, Notice, Runner, Strategy, SubmitVia, pb};
use common::{Proxy, TestServer, Way, bot_at, finished, house_table};
use tonic::Code;

/// A table of three seats, each held by a bot we control; nothing moves unless we act.
async fn three_bot_table(server: &TestServer) -> (String, Vec<Client>) {
    three_bot_table_at(&server.url).await
}

/// [`three_bot_table`] with every bot connected to `url`.
async fn three_bot_table_at(url: &str) -> (String, Vec<Client>) {
    let creator = bot_at(url, "creator").await;
    let table = creator
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete as i32,
            seats: 3,
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .expect("create");
    let mut seats = Vec::new();
    for i in 0..3 {
        let bot = bot_at(url, &format!("seat{i}")).await;
        bot.join_table(&table.table_id, Some(i))
            .await
            .expect("join");
        seats.push(bot);
    }
    (table.table_id, seats)
}

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

/// Both paths refuse `action` at `expected_seq` with the very same error.
async fn same_refusal(
    client: &Client,
    table_id: &str,
    action: &pb::Action,
    expected_seq: u64,
    reason: pb::ErrorReason,
) {
    let unary = client
        .submit_action(table_id, action, expected_seq)
        .await
        .expect_err("refused by SubmitAction");
    let streamed = client
        .action_stream()
        .submit(table_id, action, expected_seq)
        .await
        .expect_err("refused on the stream");
    let (bete_client::Error::Rpc(u), bete_client::Error::Rpc(s)) = (&unary, &streamed) else {
        panic!("not server refusals: {unary:?} / {streamed:?}");
    };
    assert_eq!(s.reason, Some(reason), "{s:?}");
    assert_eq!(
        (
            &u.code,
            &u.reason,
            &u.reason_text,
            &u.message,
            &u.metadata,
            &u.field_violations
        ),
        (
            &s.code,
            &s.reason,
            &s.reason_text,
            &s.message,
            &s.metadata,
            &s.field_violations
        ),
    );
    assert_eq!(unary.to_string(), streamed.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_submits_give_the_unary_results_and_errors() {
    let server = TestServer::start().await;
    let (table_id, seats) = three_bot_table(&server).await;
    let view = view_to_act(&seats, &table_id).await;
    let seat = view.to_act.expect("to act") as usize;
    let actor = &seats[seat];
    let other = &seats[(seat + 1) % 3];
    let legal = view.legal_actions[0].clone();
    let card = |c: &str| pb::Action {
        kind: pb::ActionKind::Card as i32,
        cards: vec![c.into()],
        text: String::new(),
    };
    let not_mine = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "AH", "KH"]
        .into_iter()
        .find(|c| !view.hand.iter().any(|h| h == c))
        .expect("a card not in hand");

    use pb::ErrorReason as R;
    same_refusal(actor, &table_id, &card(not_mine), 0, R::IllegalAction).await;
    same_refusal(actor, &table_id, &card("ZZ"), 0, R::InvalidArgument).await;
    same_refusal(actor, &table_id, &legal, view.seq - 1, R::StaleSeq).await;
    same_refusal(other, &table_id, &legal, view.seq, R::NotYourSeat).await;
    same_refusal(actor, "t_nope", &legal, 0, R::TableNotFound).await;
    let stale = actor
        .action_stream()
        .submit(&table_id, &legal, view.seq - 1)
        .await
        .expect_err("stale");
    let bete_client::Error::Rpc(stale) = stale else {
        panic!("{stale:?}")
    };
    assert_eq!(stale.code, Code::Aborted);
    assert_eq!(stale.seq_metadata("last_seq"), Some(view.seq));

    // After the refusals the same stream accepts the legal move; a retry is replayed, on the
    // stream and on the unary call alike.
    let stream = actor.action_stream();
    let _ = stream
        .submit(&table_id, &card(not_mine), view.seq)
        .await
        .expect_err("illegal");
    let done = stream
        .submit_with_id(&table_id, &legal, view.seq, "rust-stream-1")
        .await
        .expect("legal move accepted");
    assert!(done.seq > view.seq && !done.replayed && done.attempts == 1);
    assert_eq!(stream.idle_streams(), 1, "one stream served every request");
    let again = stream
        .submit_with_id(&table_id, &legal, view.seq, "rust-stream-1")
        .await
        .expect("replay");
    assert_eq!((again.seq, again.replayed), (done.seq, true));
    let unary = actor
        .submit_action_with_id(&table_id, &legal, view.seq, "rust-stream-1")
        .await
        .expect("unary replay");
    assert_eq!((unary.seq, unary.replayed), (done.seq, true));

    // A bot without a token: the stream is refused as a whole, UNAUTHENTICATED.
    let anon = Client::connect(&server.url).await.expect("connect");
    let e = anon
        .action_stream()
        .submit(&table_id, &legal, 0)
        .await
        .expect_err("unauthenticated");
    assert_eq!(e.reason(), Some(R::Unauthenticated), "{e:?}");
    assert_eq!(e.code(), Some(Code::Unauthenticated));
    server.stop().await;
}

/// The runner with each submit path: the link drops mid-match while a move of the runner is
/// in flight (held in the proxy) and stays down a while; the runner resumes, resends that move
/// with the same request_id, misses no decision (no auto-move, no strike) and finishes the
/// match.
async fn runner_survives_a_cut(via: SubmitVia) {
    let server = TestServer::start().await;
    let proxy = Proxy::start(server.addr).await;
    let client = bot_at(&proxy.url, "cut-runner").await;
    let table = client
        // A deadline long enough for the hold and the cut below.
        .create_table(house_table(pb::Ruleset::Bete, 3, 10_000))
        .await
        .expect("create");
    let mut runner = Runner::new(client.clone(), |_: &pb::Seated| Strategy::Heuristic.bot())
        .submit_via(via)
        .stop_after(1)
        .with_idle_timeout(Duration::from_secs(5));
    let mut notices = runner.notifications();
    let running = tokio::spawn(runner.run());
    client
        .join_table(&table.table_id, Some(0))
        .await
        .expect("join");
    let inspector = server.bot("inspector").await;
    let mut acted = 0;
    let mut cut = false;
    while let Some(notice) = tokio::time::timeout(Duration::from_secs(60), notices.recv())
        .await
        .expect("progress")
    {
        match notice {
            Notice::Acted { .. } => {
                acted += 1;
                if acted == 2 && !cut {
                    // The runner's requests are held from now; once the table stops moving
                    // it waits on the runner's held move, and the cut drops it.
                    proxy.hold(Way::Up);
                    let mut last = 0;
                    loop {
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        let t = inspector.get_table(&table.table_id).await.expect("table");
                        if t.last_seq == last {
                            break;
                        }
                        last = t.last_seq;
                    }
                    proxy.cut(Duration::from_millis(800));
                    cut = true;
                }
            }
            Notice::MatchOver(_) => break,
            _ => {}
        }
    }
    let report = finished(running).await;
    assert!(cut, "the cut happened during the match");
    assert!(report.reconnects >= 1, "{report:?}");
    // The move the cut caught in flight was resent.
    assert!(report.retried_submits >= 1, "{report:?}");
    assert_eq!(report.matches.len(), 1);
    let table = inspector.get_table(&table.table_id).await.expect("table");
    assert_eq!(table.state, pb::TableState::Finished as i32);
    assert_eq!(table.seats[0].strikes, 0, "no missed decision: {report:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_on_streams_survives_a_cut() {
    runner_survives_a_cut(SubmitVia::Stream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_on_unary_calls_survives_a_cut() {
    runner_survives_a_cut(SubmitVia::Unary).await;
}

/// Several bots on streams play whole matches against each other (no house bot): every move
/// of every seat went over SubmitActions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_on_streams_play_a_whole_match() {
    let server = TestServer::start().await;
    let creator = server.bot("creator").await;
    let mut req = house_table(pb::Ruleset::Beast, 3, 10_000);
    req.house_bots.clear();
    let table = creator.create_table(req).await.expect("create");
    let mut running = Vec::new();
    for seat in 0..3 {
        let bot = server.bot(&format!("stream-bot-{seat}")).await;
        let runner = Runner::new(bot.clone(), |_: &pb::Seated| Strategy::Heuristic.bot())
            .submit_via(SubmitVia::Stream)
            .stop_after(1);
        running.push(tokio::spawn(runner.run()));
        bot.join_table(&table.table_id, Some(seat))
            .await
            .expect("join");
    }
    for r in running {
        let report = finished(r).await;
        assert_eq!(report.matches.len(), 1);
        assert!(report.decisions > 0);
    }
    let t = creator.get_table(&table.table_id).await.expect("table");
    assert_eq!(t.state, pb::TableState::Finished as i32);
    assert!(t.seats.iter().all(|s| s.strikes == 0), "{t:?}");
    server.stop().await;
}

/// Opens at least `n` idle streams on `stream` by submitting many refused requests at once.
async fn open_idle_streams(stream: &bete_client::ActionStream, n: usize) {
    for _ in 0..10 {
        let mut batch = tokio::task::JoinSet::new();
        for _ in 0..n {
            let s = stream.clone();
            batch.spawn(async move { s.submit("t_nope", &pb::Action::default(), 0).await });
        }
        while let Some(r) = batch.join_next().await {
            assert!(
                r.expect("task").is_err(),
                "an action without a kind is refused"
            );
        }
        if stream.idle_streams() >= n {
            return;
        }
    }
    panic!("only {} idle streams", stream.idle_streams());
}

/// More idle streams than the retry budget, all killed by a cut that is over before the next
/// submit: that submit is answered (the dead streams cost no attempts), on one new stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_idle_streams_cost_no_attempts_after_a_cut() {
    let server = TestServer::start().await;
    let proxy = Proxy::start(server.addr).await;
    let client = bot_at(&proxy.url, "many-lanes").await;
    assert!(client.backoff().attempts < 20);
    let stream = client.action_stream().keep_idle(32);
    open_idle_streams(&stream, 20).await;
    proxy.cut(Duration::from_millis(100));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let e = stream
        .submit("t_nope", &pb::Action::default(), 0)
        .await
        .expect_err("refused");
    // The server's own refusal (an action without a kind), not a dead stream's Unavailable.
    assert_eq!(e.reason(), Some(pb::ErrorReason::InvalidArgument), "{e:?}");
    assert_eq!(stream.idle_streams(), 1, "the dead streams were dropped");
    server.stop().await;
}

/// A burst of moves in flight opens as many streams; once answered, only the number asked for
/// (`keep_idle`) stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_streams_beyond_the_cap_are_closed() {
    let server = TestServer::start().await;
    let client = server.bot("burst").await;
    let wide = client.action_stream().keep_idle(32);
    open_idle_streams(&wide, 20).await;
    assert!(wide.idle_streams() >= 20);
    let stream = client.action_stream().keep_idle(4);
    for _ in 0..5 {
        let mut batch = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let s = stream.clone();
            batch.spawn(async move { s.submit("t_nope", &pb::Action::default(), 0).await });
        }
        while batch.join_next().await.is_some() {}
        assert_eq!(stream.idle_streams(), 4);
    }
    server.stop().await;
}

/// The cut comes while a move is in flight and its answer is lost: the move is resent with
/// its request_id on a new stream and the server replays it, applied once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_answer_is_cut_is_replayed_not_doubled() {
    let server = TestServer::start().await;
    let proxy = Proxy::start(server.addr).await;
    let (table_id, seats) = three_bot_table_at(&proxy.url).await;
    let inspector = server.bot("inspector").await;
    let last_seq = async || {
        inspector
            .get_table(&table_id)
            .await
            .expect("table")
            .last_seq
    };
    let view = view_to_act(&seats, &table_id).await;
    let stream = seats[view.to_act.expect("to act") as usize].action_stream();
    // An idle stream through the proxy, then the server's answers are held.
    open_idle_streams(&stream, 1).await;
    proxy.hold(Way::Down);
    let legal = view.legal_actions[0].clone();
    let submit = {
        let (stream, table_id, legal) = (stream.clone(), table_id.clone(), legal.clone());
        tokio::spawn(async move {
            stream
                .submit_with_id(&table_id, &legal, view.seq, "rust-cut-1")
                .await
        })
    };
    // The server applies the move while its answer waits in the proxy.
    let mut applied = false;
    for _ in 0..100 {
        if last_seq().await > view.seq {
            applied = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(applied, "the move reached the server");
    assert!(!submit.is_finished(), "the answer is still held");
    proxy.cut(Duration::from_millis(100));
    let done = tokio::time::timeout(Duration::from_secs(30), submit)
        .await
        .expect("answered")
        .expect("task")
        .expect("accepted");
    assert!(done.replayed, "resent, not applied twice: {done:?}");
    assert!(done.attempts >= 2, "{done:?}");
    assert_eq!(
        last_seq().await,
        done.seq,
        "nothing applied after the replay"
    );
    server.stop().await;
}

/// A server older than SubmitActions: a gRPC server that forwards every call of the table and
/// bot services to a real server except SubmitActions, which it answers UNIMPLEMENTED as a
/// server without the method does.
mod old_server {
    use std::convert::Infallible;
    use std::future::Future;
    use std::net::SocketAddr;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tonic::body::Body;
    use tonic::server::NamedService;
    use tonic::transport::Channel;
    use tower::{Service, ServiceExt};

    #[derive(Clone)]
    pub struct Forward<const TABLE: bool>(Channel);

    impl NamedService for Forward<true> {
        const NAME: &'static str = "bete.v1.TableService";
    }

    impl NamedService for Forward<false> {
        const NAME: &'static str = "bete.v1.BotService";
    }

    type Answer = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    impl<const TABLE: bool> Service<http::Request<Body>> for Forward<TABLE> {
        type Response = http::Response<Body>;
        type Error = Infallible;
        type Future = Answer;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: http::Request<Body>) -> Answer {
            if request.uri().path() == "/bete.v1.TableService/SubmitActions" {
                return Box::pin(async { Ok(tonic::Status::unimplemented("").into_http()) });
            }
            let mut channel = self.0.clone();
            Box::pin(async move {
                let answer = match channel.ready().await {
                    Ok(ready) => ready.call(request).await,
                    Err(e) => Err(e),
                };
                Ok(match answer {
                    Ok(response) => response.map(Body::new),
                    Err(e) => tonic::Status::unavailable(e.to_string()).into_http(),
                })
            })
        }
    }

    /// Starts the old server in front of `target`; returns its URL.
    pub async fn start(target: SocketAddr) -> String {
        let channel = Channel::from_shared(format!("http://{target}"))
            .expect("uri")
            .connect_lazy();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(Forward::<true>(channel.clone()))
                .add_service(Forward::<false>(channel))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        url
    }
}

/// Against a server without SubmitActions, an ActionStream falls back to unary calls (the
/// first move included), and a runner on streams (the default) plays a whole match with no
/// missed decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_submit_actions_the_unary_call_is_used() {
    let server = TestServer::start().await;
    let old = old_server::start(server.addr).await;
    let (table_id, seats) = three_bot_table_at(&old).await;
    let view = view_to_act(&seats, &table_id).await;
    let stream = seats[view.to_act.expect("to act") as usize].action_stream();
    assert!(!stream.on_unary_calls());
    let done = stream
        .submit_with_id(&table_id, &view.legal_actions[0], view.seq, "rust-old-1")
        .await
        .expect("accepted on a unary call");
    assert!(stream.on_unary_calls() && stream.clone().on_unary_calls());
    assert!(!done.replayed);
    let again = stream
        .submit_with_id(&table_id, &view.legal_actions[0], view.seq, "rust-old-1")
        .await
        .expect("replayed");
    assert_eq!((again.seq, again.replayed), (done.seq, true));

    let client = bot_at(&old, "old-runner").await;
    let table = client
        .create_table(house_table(pb::Ruleset::Bete, 3, 10_000))
        .await
        .expect("create");
    let runner =
        Runner::new(client.clone(), |_: &pb::Seated| Strategy::Heuristic.bot()).stop_after(1);
    let running = tokio::spawn(runner.run());
    client
        .join_table(&table.table_id, Some(0))
        .await
        .expect("join");
    let report = finished(running).await;
    assert_eq!(report.matches.len(), 1, "{report:?}");
    let t = server
        .bot("inspector")
        .await
        .get_table(&table.table_id)
        .await
        .expect("table");
    assert_eq!(t.state, pb::TableState::Finished as i32);
    assert_eq!(t.seats[0].strikes, 0, "no missed decision: {report:?}");
    server.stop().await;
}
