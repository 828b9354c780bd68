//! Traces, proven: a real OTLP/gRPC receiver (the `opentelemetry-proto` crate's TraceService
//! server), the real `bete-server` binary exporting to it, and a move whose spans must arrive:
//! the call, the table actor's handling, the wait for the store and the group commit that
//! links to it, and the fan-out to watchers, all in the trace of the client's `traceparent`.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bete_api::pb;
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::Span;

/// Every span exported to it.
#[derive(Clone, Default)]
struct Receiver(Arc<Mutex<Vec<Span>>>);

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.0.lock().unwrap();
        for rs in request.into_inner().resource_spans {
            for ss in rs.scope_spans {
                spans.extend(ss.spans);
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

impl Receiver {
    async fn start() -> (Receiver, SocketAddr) {
        let r = Receiver::default();
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let svc = TraceServiceServer::new(r.clone());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l)),
        );
        (r, addr)
    }

    fn spans(&self) -> Vec<Span> {
        self.0.lock().unwrap().clone()
    }

    /// Polls (every 50 ms, at most 15 s) until `found` finds what it looks for.
    async fn wait_for<T>(&self, what: &str, found: impl Fn(&[Span]) -> Option<T>) -> T {
        for _ in 0..300 {
            if let Some(t) = found(&self.spans()) {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let names: Vec<_> = self.spans().into_iter().map(|s| s.name).collect();
        panic!("{what}: not exported; spans received: {names:?}");
    }
}

struct Proc {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real binary, exporting to `otlp`, with the batch processor's delay given.
fn spawn_server(dir: &Path, otlp: SocketAddr, delay_ms: u64) -> Proc {
    let addr = free_addr();
    let child = Command::new(env!("CARGO_BIN_EXE_bete-server"))
        .args(["--listen", &addr.to_string()])
        .args(["--metrics-listen", &free_addr().to_string()])
        .args([
            "--no-web",
            "--house-tables",
            "0",
            "--drain-timeout-secs",
            "2",
        ])
        .arg("--data-dir")
        .arg(dir)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{otlp}"))
        .env("OTEL_BSP_SCHEDULE_DELAY", delay_ms.to_string())
        .env_remove("BETE_TRACE_FILTER")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Proc { child, addr }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A client's span: a random trace id and span id, and its `traceparent` (sampled).
fn client_span() -> ([u8; 16], [u8; 8], String) {
    let trace: [u8; 16] = rand::random();
    let span: [u8; 8] = rand::random();
    let header = format!("00-{}-{}-01", hex(&trace), hex(&span));
    (trace, span, header)
}

fn traced<T>(msg: T, traceparent: &str) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut()
        .insert("traceparent", traceparent.parse().unwrap());
    r
}

/// The span named `name` in trace `trace` whose parent is `parent`.
fn child<'a>(spans: &'a [Span], trace: &[u8], parent: &[u8], name: &str) -> Option<&'a Span> {
    spans
        .iter()
        .find(|s| s.name == name && s.trace_id == trace && s.parent_span_id == parent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moves_spans_arrive_in_the_clients_trace() {
    let (receiver, otlp) = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let p = spawn_server(dir.path(), otlp, 100);
    let ch = connect(p.addr).await;
    let me = register(&ch, "traced-bot").await;
    let mut c = me.client;
    let id = seated(
        &mut c,
        pb::CreateTableRequest {
            ruleset: pb::Ruleset::Beast.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Random),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: 60_000,
            ..Default::default()
        },
    )
    .await;
    // A watcher, so the move has somewhere to fan out to.
    let mut watcher = register(&ch, "traced-watcher").await;
    let _watch = watcher
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let v = view_when(&mut c, &id, "never my turn", |v| v.to_act == Some(0)).await;

    let (trace, client, traceparent) = client_span();
    let answer = c
        .submit_action(traced(
            pb::SubmitActionRequest {
                table_id: id.clone(),
                action: Some(v.legal_actions[0].clone()),
                expected_seq: v.seq,
                request_id: "traced-move".into(),
            },
            &traceparent,
        ))
        .await
        .unwrap();
    assert_eq!(
        answer
            .metadata()
            .get("x-bete-trace-id")
            .and_then(|v| v.to_str().ok()),
        Some(hex(&trace).as_str()),
        "the server names the trace it joined"
    );

    // The call: a child of the client's span.
    let call = receiver
        .wait_for("the SubmitAction call", |s| {
            child(s, &trace, &client, "SubmitAction").cloned()
        })
        .await;
    // The table actor's handling: across the actor's channel, a child of the call.
    let actor = receiver
        .wait_for("the actor's handling", |s| {
            child(s, &trace, &call.span_id, "table.submit").cloned()
        })
        .await;
    // The wait for durability, and the fan-out to watchers: children of the actor's span.
    let append = receiver
        .wait_for("the store append", |s| {
            child(s, &trace, &actor.span_id, "store.append").cloned()
        })
        .await;
    let fan_out = receiver
        .wait_for("the fan-out", |s| {
            child(s, &trace, &actor.span_id, "table.fan_out").cloned()
        })
        .await;
    assert!(
        fan_out
            .attributes
            .iter()
            .any(|a| a.key == "watchers" && format!("{:?}", a.value).contains("IntValue(1)")),
        "the fan-out reached the one watcher: {:?}",
        fan_out.attributes
    );
    // The group commit: its own trace (one commit serves many moves), linked to the move's
    // append, so the move's commit can be found.
    let commit = receiver
        .wait_for("the group commit", |s| {
            s.iter()
                .find(|c| {
                    c.name == "store.commit"
                        && c.links
                            .iter()
                            .any(|l| l.trace_id == trace && l.span_id == append.span_id)
                })
                .cloned()
        })
        .await;
    assert!(commit.trace_id != trace, "a commit is a trace of its own");
    // The spans nest in time: the actor's handling within the call, the commit within the
    // append's wait.
    assert!(actor.start_time_unix_nano >= call.start_time_unix_nano);
    assert!(actor.end_time_unix_nano <= call.end_time_unix_nano);
    assert!(commit.end_time_unix_nano <= append.end_time_unix_nano);

    // The house bots' moves (the actor's own timer) are traced too, each a root.
    receiver
        .wait_for("a house bot's move", |s| {
            s.iter()
                .find(|t| t.name == "table.timer" && t.parent_span_id.is_empty())
                .cloned()
        })
        .await;
}

/// Spans still queued when the server stops are exported before it exits: the batch processor
/// here would wait ten minutes, so only the shutdown's flush can deliver them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_flushed_on_shutdown() {
    let (receiver, otlp) = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn_server(dir.path(), otlp, 600_000);
    let ch = connect(p.addr).await;
    let mut c = client_with(&ch, None);
    let (trace, client, traceparent) = client_span();
    c.list_tables(traced(pb::ListTablesRequest::default(), &traceparent))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        child(&receiver.spans(), &trace, &client, "ListTables").is_none(),
        "exported before the shutdown: the test proves nothing"
    );
    let pid = p.child.id();
    let term = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let mut exited = None;
    for _ in 0..300 {
        if let Some(s) = p.child.try_wait().unwrap() {
            exited = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = exited.expect("the server did not stop within 15 s of SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(
        child(&receiver.spans(), &trace, &client, "ListTables").is_some(),
        "the call's span was not exported at shutdown"
    );
}
