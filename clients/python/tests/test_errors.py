"""Failures come back as documented gRPC statuses with an ErrorInfo reason (read through grpcio-status)."""

import asyncio
import uuid

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from bete.v1 import cards_pb2, table_service_pb2, table_service_pb2_grpc
from bete_bot import BeteError, Client, actions, same_action

from helpers import new_client

pytestmark = pytest.mark.timeout(60)


async def _my_turn(client: Client, table_id: str, timeout: float = 20.0):
    """Polls GetSeatView until this seat must act (house bots move first if they are ahead)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        view = await client.get_seat_view(table_id)
        if view.legal_actions:
            return view
        await asyncio.sleep(0.05)
    raise AssertionError("never my turn")


def _illegal_for(view) -> cards_pb2.Action:
    """A well-formed action the rules forbid now: a card play when cards are not being played, else
    a card we do not hold."""
    if not any(a.kind == cards_pb2.ACTION_KIND_CARD for a in view.legal_actions):
        return actions.card(view.hand[0])
    absent = next(r + s for r in "AKQJT98765432" for s in "SHDC" if r + s not in view.hand)
    return actions.card(absent)


async def _seated_at_my_turn(server):
    client = await new_client(server, "py-err")
    # first_dealer 2 makes seat 0 the eldest hand: it speaks first.
    t = await client.create_table("bete", 3, house_bots={1: "heuristic", 2: "heuristic"}, first_dealer=2)
    await client.join_table(t.table_id, seat=0)
    return client, t.table_id, await _my_turn(client, t.table_id)


def test_illegal_action_is_failed_precondition_with_reason_illegal_action(server):
    async def scenario():
        client, table_id, view = await _seated_at_my_turn(server)
        async with client:
            bad = _illegal_for(view)
            # Straight through the generated stub, reading the status with grpcio-status.
            stub = table_service_pb2_grpc.TableServiceStub(client.channel)
            req = table_service_pb2.SubmitActionRequest(
                table_id=table_id, action=bad, expected_seq=view.seq, request_id=str(uuid.uuid4()))
            with pytest.raises(grpc.aio.AioRpcError) as raw:
                await stub.SubmitAction(req, metadata=client.metadata, timeout=10)
            status = rpc_status.from_call(raw.value)
            infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
            assert len(infos) == 1
            info = error_details_pb2.ErrorInfo()
            infos[0].Unpack(info)
            # Through the SDK: the same facts on BeteError.
            with pytest.raises(BeteError) as sdk:
                await client.submit(table_id, bad, expected_seq=view.seq)
            after = await client.get_seat_view(table_id)
            return raw.value.code(), status, info, sdk.value, view, after

    code, status, info, err, before, after = asyncio.run(scenario())
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert status.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert (info.domain, info.reason) == ("bete.v1", "ILLEGAL_ACTION")
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION and err.reason == "ILLEGAL_ACTION"
    assert err.domain == "bete.v1" and err.message
    assert after.seq == before.seq and list(after.hand) == list(before.hand), "nothing was applied"


def test_stale_seq_malformed_card_and_idempotent_retry(server):
    async def scenario():
        client, table_id, view = await _seated_at_my_turn(server)
        async with client:
            out = {}
            with pytest.raises(BeteError) as e:
                await client.submit(table_id, view.legal_actions[0], expected_seq=view.seq - 1)
            out["stale"] = e.value
            with pytest.raises(BeteError) as e:
                await client.submit(table_id, cards_pb2.Action(kind=cards_pb2.ACTION_KIND_CARD, cards=["ZZ"]),
                                    expected_seq=view.seq)
            out["malformed"] = e.value
            rid = str(uuid.uuid4())
            out["first"] = await client.submit(table_id, view.legal_actions[0], view.seq, request_id=rid)
            out["again"] = await client.submit(table_id, view.legal_actions[0], view.seq, request_id=rid)
            other = next((a for a in view.legal_actions if not same_action(a, view.legal_actions[0])), None)
            if other is not None:
                with pytest.raises(BeteError) as e:
                    await client.submit(table_id, other, view.seq, request_id=rid)
                out["conflict"] = e.value
            return view, out

    view, out = asyncio.run(scenario())
    stale = out["stale"]
    assert stale.code == grpc.StatusCode.ABORTED and stale.reason == "STALE_SEQ"
    assert int(stale.metadata["last_seq"]) == view.seq
    bad = out["malformed"]
    assert bad.code == grpc.StatusCode.INVALID_ARGUMENT and bad.reason == "INVALID_ARGUMENT"
    assert "action.cards[0]" in bad.bad_fields
    assert not out["first"].replayed and out["again"].replayed
    assert out["again"].seq == out["first"].seq > view.seq, "applied once, the retry returns the first result"
    if "conflict" in out:
        assert out["conflict"].code == grpc.StatusCode.ALREADY_EXISTS
        assert out["conflict"].reason == "DUPLICATE_REQUEST_CONFLICT"


def test_unknown_token_and_unknown_table(server):
    async def scenario():
        async with Client(server, "not-a-token") as nobody:
            with pytest.raises(BeteError) as unauth:
                await nobody.list_tables()
        client = await new_client(server)
        async with client:
            with pytest.raises(BeteError) as missing:
                await client.get_table("no-such-table")
        return unauth.value, missing.value

    unauth, missing = asyncio.run(scenario())
    assert unauth.code == grpc.StatusCode.UNAUTHENTICATED and unauth.reason == "UNAUTHENTICATED"
    assert missing.code == grpc.StatusCode.NOT_FOUND and missing.reason == "TABLE_NOT_FOUND"


class LoseSubmitAnswers(grpc.aio.UnaryUnaryClientInterceptor):
    """Lets the first ``n`` SubmitAction calls reach the server, then reports UNAVAILABLE to the
    client as if the answer was lost on the way back: the case a same-request_id retry is for."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.request_ids: list[str] = []

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        call = await continuation(client_call_details, request)
        method = client_call_details.method
        if isinstance(method, bytes):
            method = method.decode()
        if method.endswith("/SubmitAction"):
            self.request_ids.append(request.request_id)
            if self.n > 0:
                self.n -= 1
                await call  # it lands on the server...
                raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                           details="answer lost (test)")  # ...but we never hear so
        return call


def test_submit_retries_unavailable_with_the_same_request_id(server):
    async def scenario():
        client, table_id, view = await _seated_at_my_turn(server)
        await client.close()
        lossy = LoseSubmitAnswers(2)
        async with Client(server, client.metadata[0][1].removeprefix("Bearer "), interceptors=[lossy]) as c:
            resp = await c.submit(table_id, view.legal_actions[0], expected_seq=view.seq)
            after = await c.get_seat_view(table_id)
        return view, resp, lossy.request_ids, after

    view, resp, ids, after = asyncio.run(scenario())
    assert len(ids) == 3 and len(set(ids)) == 1, f"three attempts, one request_id: {ids}"
    assert resp.replayed, "the first attempt had applied the action; the retry got its stored result"
    assert resp.seq > view.seq and after.seq >= resp.seq


class _RateLimited(grpc.RpcError):
    """A failed call as grpc.aio reports one: RESOURCE_EXHAUSTED / RATE_LIMITED with a RetryInfo."""

    def __init__(self, delay_ms: int) -> None:
        from google.protobuf import any_pb2
        from google.rpc import status_pb2

        info, retry = any_pb2.Any(), any_pb2.Any()
        info.Pack(error_details_pb2.ErrorInfo(reason="RATE_LIMITED", domain="bete.v1"))
        ri = error_details_pb2.RetryInfo()
        ri.retry_delay.FromMilliseconds(delay_ms)
        retry.Pack(ri)
        self._status = status_pb2.Status(code=8, message="too many calls", details=[info, retry])

    def code(self):
        return grpc.StatusCode.RESOURCE_EXHAUSTED

    def details(self):
        return "too many calls"

    def trailing_metadata(self):
        return (("grpc-status-details-bin", self._status.SerializeToString()),)


def test_rate_limited_is_retried_no_sooner_than_the_server_asks():
    err = BeteError.from_rpc_error(_RateLimited(1500))
    assert err.reason == "RATE_LIMITED"
    assert err.retryable
    assert err.retry_after == pytest.approx(1.5)
    assert err.delay(0.05) == pytest.approx(1.5)
    assert err.delay(3.0) == 3.0
    # A SubmitActions rejection carries the delay as ErrorInfo metadata.
    rejected = BeteError(grpc.StatusCode.RESOURCE_EXHAUSTED, "x", "RATE_LIMITED", {"retry_after_ms": "250"})
    assert rejected.retry_after == pytest.approx(0.25)
