//! The client sends the current OpenTelemetry context as `traceparent` on every call, and the
//! real server joins it: it names the trace it joined in `x-bete-trace-id`, which a layer on
//! the client's transport records. (That the server's spans then arrive in that trace, at an
//! OTLP receiver, is service/server/tests/traces.rs.)

mod common;

use std::sync::{Arc, Mutex};

use bete_client::Client;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use tonic::body::Body;

#[tokio::test]
async fn calls_carry_the_current_trace_to_the_server() {
    let server = common::TestServer::start().await;
    let channel = tonic::transport::Endpoint::from_shared(server.url.clone())
        .expect("url")
        .connect()
        .await
        .expect("connect");
    // The trace ids the server said it joined, one per answer that named one.
    let joined = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = joined.clone();
    let transport = tower::ServiceExt::map_response(channel, move |r: http::Response<Body>| {
        if let Some(id) = r
            .headers()
            .get("x-bete-trace-id")
            .and_then(|v| v.to_str().ok())
        {
            record.lock().expect("lock").push(id.to_string());
        }
        r
    });
    let client = Client::from_service(transport);
    client
        .register("traced-client", "tests")
        .await
        .expect("register");
    assert!(
        joined.lock().expect("lock").is_empty(),
        "no trace: nothing to join"
    );

    let trace = TraceId::from_bytes(rand::random());
    let span = SpanId::from_bytes(rand::random());
    let cx = opentelemetry::Context::new().with_remote_span_context(SpanContext::new(
        trace,
        span,
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    ));
    client
        .list_tables(Default::default(), Default::default())
        .with_context(cx.clone())
        .await
        .expect("list tables");
    client
        .create_table(bete_client::pb::CreateTableRequest {
            ruleset: bete_client::pb::Ruleset::Bete.into(),
            seats: 3,
            ..Default::default()
        })
        .with_context(cx)
        .await
        .expect("create table");
    assert_eq!(
        *joined.lock().expect("lock"),
        [trace.to_string(), trace.to_string()],
        "the server joined the caller's trace on both calls"
    );
    client
        .list_tables(Default::default(), Default::default())
        .await
        .expect("list tables");
    assert_eq!(joined.lock().expect("lock").len(), 2, "no trace, no header");
    server.stop().await;
}
