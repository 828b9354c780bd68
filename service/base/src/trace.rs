//! Trace context across the server's boundaries.
//!
//! - From a caller: a W3C `traceparent` header on a call makes the call's spans children of the
//!   caller's span (same trace id); the trace id the server joined is echoed in the
//!   [`TRACE_ID_HEADER`] response header, so a client (or an SDK's test) can tell that it did.
//! - Across the table actor's channel and the store writer's queue: a command carries the span
//!   of its sender ([`caller`]); the actor handles it in a child span, and the group commit's
//!   span links to the span of every write in its batch.
//!
//! The spans inside the server (the actor, the store, the fan-out) are at DEBUG level: they are
//! built only when traces are exported (`bete-server` then enables them for its OTLP layer
//! only), so a server without traces pays nothing for them. What exists and how to see it:
//! docs/operations.md, "Traces".

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tonic::codegen::http;

/// The response header that names the trace a call with a `traceparent` joined.
pub const TRACE_ID_HEADER: &str = "x-bete-trace-id";

struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// The caller's trace context, when the call carries a valid `traceparent` (and `tracestate`).
pub fn remote_parent(headers: &http::HeaderMap) -> Option<opentelemetry::Context> {
    // The common case, a call without one, costs a header lookup.
    headers.get("traceparent")?;
    let cx = TraceContextPropagator::new().extract(&Headers(headers));
    cx.span().span_context().is_valid().then_some(cx)
}

/// The trace id of `cx`'s span, as lower-case hex (the form `traceparent` carries).
pub fn trace_id(cx: &opentelemetry::Context) -> String {
    cx.span().span_context().trace_id().to_string()
}

/// The span a message to another task should carry (the store's writes carry it too).
pub use bete_store::trace::caller;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_and_a_bad_one_ignored() {
        let mut h = http::HeaderMap::new();
        assert!(remote_parent(&h).is_none());
        h.insert(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
                .parse()
                .unwrap(),
        );
        let cx = remote_parent(&h).unwrap();
        assert_eq!(trace_id(&cx), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(
            cx.span().span_context().span_id().to_string(),
            "b7ad6b7169203331"
        );
        h.insert("traceparent", "00-zz-yy-01".parse().unwrap());
        assert!(remote_parent(&h).is_none());
    }
}
