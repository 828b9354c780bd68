"""Trace context on every call.

If ``opentelemetry-api`` is installed, the current OpenTelemetry context goes out on every call
through its global propagator (W3C ``traceparent`` and ``tracestate`` by default), so the
server's spans of the call join the caller's trace; the server names the trace it joined in the
``x-bete-trace-id`` response header. Without ``opentelemetry-api``, or without a current span,
nothing is added.
"""

from __future__ import annotations

try:  # optional: only bots that trace have it
    from opentelemetry import propagate as _propagate
except ImportError:  # pragma: no cover - exercised where opentelemetry is absent
    _propagate = None

TRACE_ID_HEADER = "x-bete-trace-id"


def trace_metadata() -> tuple[tuple[str, str], ...]:
    """The current context as gRPC metadata (empty without opentelemetry or a current span)."""
    if _propagate is None:
        return ()
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    return tuple((k.lower(), v) for k, v in carrier.items())
