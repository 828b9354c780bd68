//! SubmitActions: moves on one stream get what SubmitAction gives them (the same checks, seat,
//! idempotency, reasons and texts), a refusal does not end the stream, accepted moves are
//! durable, and the stream is authenticated once and ends cleanly on shutdown.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use bete_api::pb;
use common::*;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Streaming};
use tonic_types::StatusExt;

/// One open SubmitActions stream: send a request, read its answer.
struct Submits {
    tx: mpsc::Sender<pb::SubmitActionsRequest>,
    rx: Streaming<pb::SubmitActionsResponse>,
    sent: u64,
}

impl Submits {
    async fn open(c: &mut Client) -> Result<Submits, tonic::Status> {
        let (tx, rx) = mpsc::channel(4);
        let rx = c
            .submit_actions(ReceiverStream::new(rx))
            .await?
            .into_inner();
        Ok(Submits { tx, rx, sent: 0 })
    }

    async fn submit(&mut self, req: pb::SubmitActionRequest) -> pb::SubmitActionsResponse {
        let request_id = req.request_id.clone();
        self.tx
            .send(pb::SubmitActionsRequest {
                table_id: req.table_id,
                action: req.action,
                expected_seq: req.expected_seq,
                request_id: req.request_id,
            })
            .await
            .unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(10), self.rx.message())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the stream goes on");
        assert_eq!(answer.index, self.sent, "answers come in request order");
        // Echoed only when it passes the 64-character check; a longer one comes back empty.
        let echoed = if request_id.chars().count() <= 64 {
            request_id
        } else {
            String::new()
        };
        assert_eq!(answer.request_id, echoed);
        self.sent += 1;
        answer
    }

    async fn accepted(&mut self, req: pb::SubmitActionRequest) -> pb::SubmitActionResponse {
        match self.submit(req).await.result.unwrap() {
            pb::submit_actions_response::Result::Accepted(a) => a,
            pb::submit_actions_response::Result::Rejected(r) => panic!("rejected: {r:?}"),
        }
    }

    async fn rejected(&mut self, req: pb::SubmitActionRequest) -> pb::ActionRejected {
        match self.submit(req).await.result.unwrap() {
            pb::submit_actions_response::Result::Rejected(r) => r,
            pb::submit_actions_response::Result::Accepted(a) => panic!("accepted: {a:?}"),
        }
    }
}

fn submit(id: &str, action: Option<pb::Action>, expected_seq: u64) -> pb::SubmitActionRequest {
    pb::SubmitActionRequest {
        table_id: id.into(),
        action,
        expected_seq,
        request_id: String::new(),
    }
}

/// The rejection carries exactly the unary status for the same request: code, message,
/// reason, domain, metadata and bad fields.
fn assert_same(r: &pb::ActionRejected, s: &tonic::Status) {
    assert_eq!(r.code, s.code() as i32, "{r:?} / {s:?}");
    assert_eq!(r.message, s.message());
    let d = s.get_error_details();
    let info = d.error_info().unwrap();
    assert_eq!(r.reason, info.reason);
    assert_eq!(r.domain, info.domain);
    assert_eq!(r.metadata, info.metadata);
    let fields: Vec<_> = r.field_violations.iter().map(|v| v.field.clone()).collect();
    assert_eq!(fields, bad_fields(s));
}

/// The seat whose action an event records, if it records one.
fn acted_by(e: &pb::Event) -> Option<u32> {
    use pb::event::Body;
    match e.body.as_ref()? {
        Body::Spoke(b) => Some(b.seat),
        Body::Exchanged(b) => Some(b.seat),
        Body::TookTurnUp(b) => Some(b.seat),
        Body::FlushShown(b) => Some(b.seat),
        Body::CardPlayed(b) => Some(b.seat),
        Body::HiddenLead(b) => Some(b.seat),
        _ => None,
    }
}

fn card(code: &str) -> pb::Action {
    pb::Action {
        kind: pb::ActionKind::Card.into(),
        cards: vec![code.into()],
        text: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_submits_answer_like_submit_action_and_last() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut alice = register(&ch, "alice-bot").await;
    let mut bob = register(&ch, "bob-bot").await;

    // Unauthenticated streams fail as a whole, with the unary call's status.
    for token in [None, Some("bete_not-a-real-token")] {
        let mut anon = client_with(&ch, token);
        let s = Submits::open(&mut anon)
            .await
            .err()
            .expect("an unauthenticated stream is refused");
        assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
        assert_eq!(reason(&s), "UNAUTHENTICATED");
    }

    // Alice at seat 0, Bob at seat 1, a house bot at seat 2; long deadlines.
    let id = alice
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![house(2, pb::HouseBotPolicy::Random)],
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    for (bot, seat) in [(&mut alice, 0), (&mut bob, 1)] {
        bot.sit(&id, seat).await;
    }
    let view = view_when(&mut alice.client, &id, "a real bot's turn", |v| {
        matches!(v.to_act, Some(0 | 1))
    })
    .await;
    let (actor, other) = if view.to_act == Some(0) {
        (&mut alice, &mut bob)
    } else {
        (&mut bob, &mut alice)
    };
    let view = view_when(&mut actor.client, &id, "the actor's view", |v| {
        !v.legal_actions.is_empty()
    })
    .await;
    assert!(view.seq >= 2, "dealt before the first decision");
    let mut stream = Submits::open(&mut actor.client).await.unwrap();

    // Bad input, refused on the stream exactly as by SubmitAction, and the stream goes on.
    let not_mine = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "AH", "KH"]
        .into_iter()
        .find(|c| !view.hand.iter().any(|h| h == c))
        .unwrap();
    let unknown_kind = pb::Action {
        kind: 77,
        ..Default::default()
    };
    let cases = [
        (
            submit(&id, None, 0),
            Code::InvalidArgument,
            "INVALID_ARGUMENT",
        ),
        (
            submit("", Some(card("AS")), 0),
            Code::InvalidArgument,
            "INVALID_ARGUMENT",
        ),
        (
            submit(&id, Some(unknown_kind), 0),
            Code::InvalidArgument,
            "INVALID_ARGUMENT",
        ),
        (
            submit(&id, Some(card("ZZ")), 0),
            Code::InvalidArgument,
            "INVALID_ARGUMENT",
        ),
        (
            submit("t_nope", Some(card("AS")), 0),
            Code::NotFound,
            "TABLE_NOT_FOUND",
        ),
        (
            submit(&id, Some(card(not_mine)), 0),
            Code::FailedPrecondition,
            "ILLEGAL_ACTION",
        ),
        (
            submit(&id, Some(view.legal_actions[0].clone()), view.seq - 1),
            Code::Aborted,
            "STALE_SEQ",
        ),
    ];
    for (req, code, why) in cases {
        let r = stream.rejected(req.clone()).await;
        assert_eq!((r.code, r.reason.as_str()), (code as i32, why), "{r:?}");
        let s = actor.client.submit_action(req).await.unwrap_err();
        assert_same(&r, &s);
        if why == "STALE_SEQ" {
            assert_eq!(r.metadata["last_seq"], view.seq.to_string());
        }
        if why == "ILLEGAL_ACTION" {
            for c in cards_in(&r.message.split(' ').map(str::to_string).collect::<Vec<_>>()) {
                assert_eq!(c.to_string(), not_mine, "{}", r.message);
            }
        }
    }
    let long_id = pb::SubmitActionRequest {
        request_id: "x".repeat(65),
        ..submit(&id, Some(view.legal_actions[0].clone()), view.seq)
    };
    let r = stream.rejected(long_id.clone()).await;
    assert_same(&r, &actor.client.submit_action(long_id).await.unwrap_err());
    assert_eq!(r.field_violations[0].field, "request_id");
    // A huge request_id and a huge bad card: the answer quotes neither in full.
    // (Each under the 64 KiB request limit, so the request_id and card checks are reached.)
    let huge_id = pb::SubmitActionRequest {
        request_id: "y".repeat(60_000),
        ..submit(&id, Some(view.legal_actions[0].clone()), view.seq)
    };
    let huge_card = submit(&id, Some(card(&"Z".repeat(60_000))), view.seq);
    for (huge, field) in [(huge_id, "request_id"), (huge_card, "action.cards[0]")] {
        let r = stream.rejected(huge.clone()).await; // the helper checks the empty echo
        assert_same(&r, &actor.client.submit_action(huge).await.unwrap_err());
        assert_eq!(r.field_violations[0].field, field, "{r:?}");
        let size = prost::Message::encoded_len(&r);
        assert!(size < 1024, "a rejection of {size} bytes");
    }

    // The other seated bot cannot act now: NOT_YOUR_SEAT naming the seat to act.
    let mut others = Submits::open(&mut other.client).await.unwrap();
    let r = others
        .rejected(submit(&id, Some(view.legal_actions[0].clone()), view.seq))
        .await;
    assert_eq!(
        (r.code, r.reason.as_str()),
        (Code::PermissionDenied as i32, "NOT_YOUR_SEAT")
    );
    assert_eq!(r.metadata["to_act"], view.to_act.unwrap().to_string());

    // After all those refusals, the legal move is accepted; its retry is replayed, not re-applied.
    let mv = pb::SubmitActionRequest {
        request_id: "stream-move-1".into(),
        ..submit(&id, Some(view.legal_actions[0].clone()), view.seq)
    };
    let first = stream.accepted(mv.clone()).await;
    assert!(first.seq > view.seq && !first.replayed, "{first:?}");
    let again = stream.accepted(mv.clone()).await;
    assert_eq!((again.seq, again.replayed), (first.seq, true));
    // The same request_id on the unary call: the same stored result.
    let unary = actor
        .client
        .submit_action(mv.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!((unary.seq, unary.replayed), (first.seq, true));
    // Applied once: from the actor's decision to the table's last event, the actor's seat
    // acted exactly once (the move; nothing for the two replays), and that act ends by
    // first.seq. (Others may act after it: the house bot.)
    let last_seq = actor
        .client
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .last_seq;
    let mut events = actor
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(view.seq),
        })
        .await
        .unwrap()
        .into_inner();
    let actor_seat = view.to_act.unwrap();
    let mut acts = Vec::new();
    let mut seq = view.seq;
    while seq < last_seq {
        let m = tokio::time::timeout(Duration::from_secs(10), events.message())
            .await
            .expect("an event within 10 s")
            .unwrap()
            .expect("the watch goes on");
        if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind {
            seq = e.seq;
            if acted_by(&e) == Some(actor_seat) {
                acts.push(e.seq);
            }
        }
    }
    drop(events);
    assert_eq!(
        acts.len(),
        1,
        "the actor's acts after its decision: {acts:?}"
    );
    assert!(
        acts[0] > view.seq && acts[0] <= first.seq,
        "{acts:?} / {first:?}"
    );

    // Shutdown ends an open stream with UNAVAILABLE / SHUTTING_DOWN, and the server stops.
    let mut open = Submits::open(&mut actor.client).await.unwrap();
    let stopping = tokio::spawn(srv.stop());
    let end = tokio::time::timeout(Duration::from_secs(20), open.rx.message())
        .await
        .unwrap();
    let s = end.expect_err("the stream ends with a status");
    assert_eq!(s.code(), Code::Unavailable, "{s:?}");
    assert_eq!(reason(&s), "SHUTTING_DOWN");
    drop(open.tx);
    drop(stream);
    drop(others);
    stopping.await.unwrap();

    // Durable: after a restart the table is past the move, and its request_id still answers
    // with the stored result.
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut c = client_with(&ch, Some(&actor.token));
    let table = c
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert!(
        table.last_seq >= first.seq,
        "{} < {}",
        table.last_seq,
        first.seq
    );
    let mut stream = Submits::open(&mut c).await.unwrap();
    let replay = stream.accepted(mv).await;
    assert_eq!((replay.seq, replay.replayed), (first.seq, true));
    drop(stream);
    srv.stop().await;
}

/// A refused card names no card the caller cannot see, on the stream as on the unary call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_refusals_name_no_hidden_card() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "probe-bot").await;
    let id = me
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Random),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    me.sit(&id, 0).await;
    let view = view_when(&mut me.client, &id, "never my turn", |v| {
        v.to_act == Some(0)
    })
    .await;
    let visible: HashSet<String> = cards_in(&view).iter().map(|c| c.to_string()).collect();
    let mut stream = Submits::open(&mut me.client).await.unwrap();
    let mut probes = 0;
    for r in "23456789TJQKA".chars() {
        for s in "SHDC".chars() {
            let code = format!("{r}{s}");
            if visible.contains(&code) || code.parse::<bete_rules::Card>().is_err() {
                continue;
            }
            for kind in [
                pb::ActionKind::Card,
                pb::ActionKind::Exchange,
                pb::ActionKind::Discard,
            ] {
                let action = pb::Action {
                    kind: kind.into(),
                    cards: vec![code.clone()],
                    text: String::new(),
                };
                let r = stream.rejected(submit(&id, Some(action), view.seq)).await;
                for c in cards_in(&r.message.split(' ').map(str::to_string).collect::<Vec<_>>()) {
                    assert_eq!(c.to_string(), code, "{kind:?}: {}", r.message);
                }
                probes += 1;
            }
        }
    }
    assert!(probes >= 3 * 17, "only {probes} probes");
    drop(stream);
    srv.stop().await;
}

/// The stream's next answer, within 10 s.
async fn next(
    a: &mut Streaming<pb::SubmitActionsResponse>,
) -> Result<Option<pb::SubmitActionsResponse>, tonic::Status> {
    tokio::time::timeout(Duration::from_secs(10), a.message())
        .await
        .expect("an answer within 10 s")
}

/// Sends raw bytes as gRPC messages, to put on a stream what is not a SubmitActionsRequest.
#[derive(Clone, Copy, Default)]
struct RawCodec;

struct RawEncoder;

struct AnswerDecoder;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = pb::SubmitActionsResponse;
    type Encoder = RawEncoder;
    type Decoder = AnswerDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> AnswerDecoder {
        AnswerDecoder
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

impl tonic::codec::Decoder for AnswerDecoder {
    type Item = pb::SubmitActionsResponse;
    type Error = tonic::Status;
    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<pb::SubmitActionsResponse>, tonic::Status> {
        prost::Message::decode(src)
            .map(Some)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

/// A malformed but decodable request is one rejection and the stream goes on; bytes that are
/// not a message at all end the stream with INVALID_ARGUMENT (a protocol failure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_is_rejected_and_undecodable_bytes_end_the_stream() {
    use prost::Message;
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let me = register(&ch, "garbage-bot").await;
    let mut grpc = tonic::client::Grpc::new(ch.clone());
    grpc.ready().await.unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u8>>(4);
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {}", me.token).parse().unwrap(),
    );
    let path =
        tonic::codegen::http::uri::PathAndQuery::from_static("/bete.v1.TableService/SubmitActions");
    let mut answers = grpc
        .streaming(request, path, RawCodec)
        .await
        .unwrap()
        .into_inner();

    // Well-formed protobuf, bad content: rejected, INVALID_ARGUMENT naming the fields.
    let bad = pb::SubmitActionsRequest {
        table_id: String::new(),
        action: Some(pb::Action {
            kind: 77,
            ..Default::default()
        }),
        expected_seq: 0,
        request_id: "bad-1".into(),
    };
    tx.send(bad.encode_to_vec()).await.unwrap();
    let a = next(&mut answers).await.unwrap().unwrap();
    assert_eq!((a.index, a.request_id.as_str()), (0, "bad-1"));
    let Some(pb::submit_actions_response::Result::Rejected(r)) = a.result else {
        panic!("{a:?}")
    };
    assert_eq!(
        (r.code, r.reason.as_str()),
        (Code::InvalidArgument as i32, "INVALID_ARGUMENT")
    );
    assert!(!r.field_violations.is_empty(), "{r:?}");

    // Not protobuf at all (field 0, wire type 7): the stream ends with a status.
    tx.send(vec![0xff, 0xff, 0xff, 0xff]).await.unwrap();
    let end = next(&mut answers).await.expect_err("the stream fails");
    assert_eq!(end.code(), Code::InvalidArgument, "{end:?}");
    assert_eq!(reason(&end), "INVALID_ARGUMENT");
    drop(tx);
    srv.stop().await;
}

/// `bete_submit_streams_open` counts open SubmitActions streams, however they end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_streams_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| c.metrics_addr = Some(metrics)).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "count-bot").await;
    wait_for_gauge(metrics, "bete_submit_streams_open", 0).await;
    let mut a = Submits::open(&mut me.client).await.unwrap();
    let b = Submits::open(&mut me.client).await.unwrap();
    // One answer on `a`, so its task surely runs.
    a.rejected(submit("", Some(card("KS")), 0)).await;
    wait_for_gauge(metrics, "bete_submit_streams_open", 2).await;
    // The client closes its side: the stream ends with OK and leaves the gauge.
    drop(a.tx);
    assert!(next(&mut a.rx).await.unwrap().is_none());
    wait_for_gauge(metrics, "bete_submit_streams_open", 1).await;
    // The client goes away altogether.
    drop(b);
    wait_for_gauge(metrics, "bete_submit_streams_open", 0).await;
    srv.stop().await;
}

/// A client that sends but never reads: once the server drains, the stream's task ends at once
/// (it does not wait on the full answer buffer), and the client, reading at last, gets the
/// answers sent before, then UNAVAILABLE / SHUTTING_DOWN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draining_ends_a_stream_whose_client_stopped_reading() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| c.metrics_addr = Some(metrics)).await;
    let ch = srv.channel().await;
    let me = register(&ch, "deaf-bot").await;
    // A client that reads at most 4 KiB ahead: its window fills after a few dozen answers.
    let narrow = srv.narrow_channel().await;
    let mut c = client_with(&narrow, Some(&me.token));
    let (tx, rx) = mpsc::channel(4);
    let mut answers = c
        .submit_actions(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    const SENT: u64 = 2000;
    let sender = tokio::spawn(async move {
        for _ in 0..SENT {
            let bad = pb::SubmitActionsRequest {
                table_id: String::new(),
                action: Some(card("KS")),
                expected_seq: 0,
                request_id: "r".repeat(64),
            };
            if tx.send(bad).await.is_err() {
                return;
            }
        }
        // Keep our side open: the stream must end by the server's drain, not by us.
        std::future::pending::<()>().await;
    });
    wait_for_gauge(metrics, "bete_submit_streams_open", 1).await;
    // Let the answers fill the client's window and the server's buffer.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stopping = tokio::spawn(srv.stop());
    // The task ends although nobody reads (before: it waited on the full buffer until the
    // drain timeout abandoned the connection).
    wait_for_gauge(metrics, "bete_submit_streams_open", 0).await;
    let mut got = 0u64;
    let end = loop {
        match next(&mut answers).await {
            Ok(Some(a)) => {
                assert_eq!(a.index, got);
                got += 1;
            }
            Ok(None) => panic!("the stream ended OK after {got} answers"),
            Err(s) => break s,
        }
    };
    assert!(got < SENT, "the server stopped reading while nobody read");
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    assert_eq!(reason(&end), "SHUTTING_DOWN");
    sender.abort();
    timeout(20, stopping).await.unwrap().unwrap();
}

/// A request over the transport's 1 MiB limit ends the stream with the status the unary call
/// gets for the same request: the request-size refusal, INVALID_ARGUMENT with its ErrorInfo
/// (tonic's own refusal is a bare OUT_OF_RANGE, rewritten by the server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_request_gets_the_unary_size_status() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "big-bot").await;
    let huge = submit(&"t".repeat(1100 * 1024), Some(card("KS")), 0);
    let unary = me.client.submit_action(huge.clone()).await.unwrap_err();
    assert_eq!(unary.code(), Code::InvalidArgument, "{unary:?}");
    assert_eq!(reason(&unary), "INVALID_ARGUMENT");
    let mut stream = Submits::open(&mut me.client).await.unwrap();
    // A normal request first: answered, and the stream goes on.
    stream.rejected(submit("", Some(card("KS")), 0)).await;
    stream
        .tx
        .send(pb::SubmitActionsRequest {
            table_id: huge.table_id,
            action: huge.action,
            expected_seq: 0,
            request_id: String::new(),
        })
        .await
        .unwrap();
    let end = next(&mut stream.rx).await.expect_err("the stream ends");
    assert_eq!(end.code(), unary.code(), "{end:?}");
    assert_eq!(end.message(), unary.message());
    assert_eq!(reason(&end), "INVALID_ARGUMENT");
    drop(stream);
    srv.stop().await;
}
