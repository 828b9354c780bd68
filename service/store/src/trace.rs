//! The one piece of trace context the store needs: a write carries its sender's span across
//! the writer's queue, so the group commit's span can link to it (the rest of the server's
//! trace context, W3C headers and all, is bete-server's `trace` module).

/// The span a message to another task should carry, so the receiver's span is its child (or
/// links to it): the current span when DEBUG spans are on at all, else none (no lookup).
pub fn caller() -> tracing::Span {
    if tracing::level_enabled!(tracing::Level::DEBUG) {
        tracing::Span::current()
    } else {
        tracing::Span::none()
    }
}
