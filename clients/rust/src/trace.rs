//! Trace context on every call: the current OpenTelemetry context (a span entered through
//! `tracing-opentelemetry`, or a context attached with `opentelemetry::Context::attach` /
//! `FutureExt::with_context`) goes out as a W3C `traceparent` (and `tracestate`) header, so the
//! server's spans of the call are children of the caller's span. Without a valid current span
//! nothing is added. The server names the trace it joined in its `x-bete-trace-id` response
//! header.

use opentelemetry::trace::TraceContextExt;

/// `request` with the current context's `traceparent`, if there is a valid current span.
pub fn with_traceparent<B>(mut request: http::Request<B>) -> http::Request<B> {
    let cx = opentelemetry::Context::current();
    let span = cx.span();
    let sc = span.span_context();
    if !sc.is_valid() {
        return request;
    }
    // The W3C Trace Context format, version 00: trace id, parent span id, flags.
    let header = format!(
        "00-{}-{}-{:02x}",
        sc.trace_id(),
        sc.span_id(),
        sc.trace_flags().to_u8()
    );
    let headers = request.headers_mut();
    if let Ok(v) = http::HeaderValue::from_str(&header) {
        headers.insert("traceparent", v);
    }
    let state = sc.trace_state().header();
    if !state.is_empty()
        && let Ok(v) = http::HeaderValue::from_str(&state)
    {
        headers.insert("tracestate", v);
    }
    request
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

    use super::*;

    #[test]
    fn the_current_span_goes_out_as_a_traceparent() {
        let plain = with_traceparent(http::Request::new(()));
        assert!(plain.headers().get("traceparent").is_none());
        let sc = SpanContext::new(
            TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap_or(TraceId::INVALID),
            SpanId::from_hex("b7ad6b7169203331").unwrap_or(SpanId::INVALID),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let _in = opentelemetry::Context::new()
            .with_remote_span_context(sc)
            .attach();
        let traced = with_traceparent(http::Request::new(()));
        assert_eq!(
            traced
                .headers()
                .get("traceparent")
                .and_then(|v| v.to_str().ok()),
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        );
    }
}
