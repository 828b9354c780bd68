"""The SDK sends the current OpenTelemetry context (``traceparent``) on its calls, and the real
server joins it: the server names the trace it joined in the ``x-bete-trace-id`` response header,
read here by an interceptor on the client's channel. (That the server's spans then arrive in that
trace, at an OTLP receiver, is service/server/tests/traces.rs.)"""

from __future__ import annotations

import asyncio
import secrets

import grpc
import pytest
from opentelemetry import context, trace

from bete_bot import Client, register_bot

pytestmark = pytest.mark.timeout(60)


class JoinedTraces(grpc.aio.UnaryUnaryClientInterceptor):
    """Records the ``x-bete-trace-id`` of every unary answer that carries one."""

    def __init__(self) -> None:
        self.joined: list[str] = []

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        call = await continuation(client_call_details, request)
        for key, value in await call.initial_metadata() or ():
            if key == "x-bete-trace-id":
                self.joined.append(value)
        return call


def test_calls_carry_the_current_trace(server: str) -> None:
    async def scenario():
        _, token = await register_bot(server, f"py-traced-{secrets.token_hex(4)}", owner="pytest")
        seen = JoinedTraces()
        async with Client(server, token, interceptors=[seen]) as c:
            await c.list_tables(page_size=1)
            untraced = list(seen.joined)
            trace_id, span_id = secrets.randbits(128) or 1, secrets.randbits(64) or 1
            span = trace.NonRecordingSpan(
                trace.SpanContext(trace_id, span_id, is_remote=True, trace_flags=trace.TraceFlags(1))
            )
            token_ = context.attach(trace.set_span_in_context(span))
            try:
                await c.list_tables(page_size=1)
            finally:
                context.detach(token_)
            await c.list_tables(page_size=1)
            return untraced, list(seen.joined), trace_id

    untraced, joined, trace_id = asyncio.run(scenario())
    assert untraced == [], "no current span: nothing to join"
    assert joined == [f"{trace_id:032x}"], "the server joined the caller's trace, on that call only"
