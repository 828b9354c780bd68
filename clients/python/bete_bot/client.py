"""A thin asyncio client over ``grpc.aio``: bearer metadata, typed errors, idempotent submits."""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from typing import Any, AsyncIterator, Iterator, Mapping, Optional, Sequence

import grpc
from bete.v1 import (
    account_service_pb2,
    account_service_pb2_grpc,
    bot_service_pb2,
    bot_service_pb2_grpc,
    cards_pb2,
    ladder_service_pb2,
    ladder_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)

from .cards import RULESET_NUMBERS
from .errors import BeteError
from .tracing import trace_metadata
from .tls import Tls, open_channel

log = logging.getLogger("bete_bot")

#: Unary calls give up after this long; streams have no deadline.
DEFAULT_TIMEOUT = 10.0

_HOUSE_POLICIES = {
    "random": table_pb2.HOUSE_BOT_POLICY_RANDOM,
    "heuristic": table_pb2.HOUSE_BOT_POLICY_HEURISTIC,
    "search": table_pb2.HOUSE_BOT_POLICY_SEARCH,
}


def ruleset_number(ruleset: int | str) -> Any:
    """A ``bete.v1.Ruleset`` number from an id (``"beast"``) or a number."""
    if isinstance(ruleset, str):
        try:
            return RULESET_NUMBERS[ruleset]
        except KeyError:
            raise ValueError(f"unknown ruleset {ruleset!r}; known: {', '.join(RULESET_NUMBERS)}") from None
    return int(ruleset)


def house_policy(policy: int | str) -> Any:
    """A ``bete.v1.HouseBotPolicy`` number from ``"random"`` / ``"heuristic"`` / ``"search"`` or a number."""
    if isinstance(policy, str):
        try:
            return _HOUSE_POLICIES[policy]
        except KeyError:
            raise ValueError(f"unknown house bot {policy!r}; known: {', '.join(_HOUSE_POLICIES)}") from None
    return int(policy)


def house_bot_seat(seat: int, policy: int | str) -> Any:
    """A ``bete.v1.HouseBotSeat``: ``"search:50"`` is the search policy with a 50 ms budget."""
    budget = 0
    if isinstance(policy, str) and policy.startswith("search:"):
        policy, ms = policy.split(":", 1)
        try:
            budget = int(ms.removesuffix("ms"))
        except ValueError:
            raise ValueError(f"bad search budget {ms!r}: milliseconds, e.g. search:50") from None
    return table_pb2.HouseBotSeat(seat=seat, policy=house_policy(policy), search_budget_ms=budget)


def backoff_delays(first: float = 0.05, cap: float = 2.0) -> Iterator[float]:
    """Exponential backoff with full jitter: 0.05 s doubling up to ``cap``, forever."""
    delay = first
    while True:
        yield random.uniform(delay / 2, delay)
        delay = min(cap, delay * 2)


async def register_bot(
    target: str,
    name: str,
    owner: str = "",
    timeout: float = DEFAULT_TIMEOUT,
    *,
    version: str = "",
    account_token: Optional[str] = None,
    tls: Optional[Tls] = None,
) -> tuple[str, str]:
    """Registers a new bot at ``target`` and returns ``(bot_id, token)``.

    Without ``account_token`` the bot is its own owner and no token is needed. With the token of
    an account (:func:`create_account`) the bot belongs to that account; a new ``version`` of a
    name is a new bot id, rated from scratch (empty means ``"1"``).
    """
    metadata = ((("authorization", f"Bearer {account_token}"),) if account_token else ()) + trace_metadata()
    request = bot_service_pb2.RegisterBotRequest(name=name, owner=owner, version=version)
    async with open_channel(target, tls) as channel:
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        try:
            resp = await stub.RegisterBot(request, metadata=metadata or None, timeout=timeout)
        except grpc.RpcError as e:
            raise BeteError.from_rpc_error(e) from None
    return resp.bot_id, resp.token


async def create_account(
    target: str, name: str, timeout: float = DEFAULT_TIMEOUT, *, tls: Optional[Tls] = None
) -> tuple[str, str]:
    """Creates an account (a bots' owner) and returns ``(account_id, token)``; the token is shown
    only this once. Open to anyone on a server with open signup (the default)."""
    async with open_channel(target, tls) as channel:
        stub = account_service_pb2_grpc.AccountServiceStub(channel)
        try:
            resp = await stub.CreateAccount(
                account_service_pb2.CreateAccountRequest(name=name), metadata=trace_metadata() or None, timeout=timeout
            )
        except grpc.RpcError as e:
            raise BeteError.from_rpc_error(e) from None
    return resp.account_id, resp.token


async def rotate_token(
    target: str, bot_id: str, owner_token: str, timeout: float = DEFAULT_TIMEOUT, *, tls: Optional[Tls] = None
) -> str:
    """Replaces bot ``bot_id``'s token (BotService.RotateBotToken) and returns the new one.

    ``owner_token`` is the bot's account token, or the bot's own token for a bot registered
    without an account. The old token is revoked at once: its streams end with
    ``TOKEN_REVOKED`` and later calls with it fail the same way.
    """
    async with open_channel(target, tls) as channel:
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        try:
            resp = await stub.RotateBotToken(
                bot_service_pb2.RotateBotTokenRequest(bot_id=bot_id),
                metadata=(("authorization", f"Bearer {owner_token}"),) + trace_metadata(),
                timeout=timeout,
            )
        except grpc.RpcError as e:
            raise BeteError.from_rpc_error(e) from None
    return resp.token


class Client:
    """One connection to a bete server, acting as the bot whose token it holds.

    Every method raises :class:`BeteError` on failure. Use as ``async with Client(target, token)``
    or call :meth:`close`. With ``token=None`` only the public reads work (ladders, standings,
    matches); an account's token makes :meth:`list_account_bots` work.
    """

    def __init__(
        self,
        target: str,
        token: Optional[str],
        timeout: float = DEFAULT_TIMEOUT,
        *,
        interceptors: Optional[Sequence[grpc.aio.ClientInterceptor]] = None,
        tls: Optional[Tls] = None,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self._metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),) if token else ()
        # `https://host:port`, `tls` or the BETE_TLS* variables: over TLS (bete_bot.tls).
        self.channel = open_channel(target, tls, interceptors=interceptors)
        self.tables = table_service_pb2_grpc.TableServiceStub(self.channel)
        self.ladders = ladder_service_pb2_grpc.LadderServiceStub(self.channel)
        self.accounts = account_service_pb2_grpc.AccountServiceStub(self.channel)

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.channel.close()

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The ``authorization: Bearer <token>`` metadata sent on every call."""
        return self._metadata

    def _call_metadata(self) -> tuple[tuple[str, str], ...]:
        """The token, and the current trace context (see :mod:`bete_bot.tracing`)."""
        return self._metadata + trace_metadata()

    async def _unary(self, method, request):
        try:
            return await method(request, metadata=self._call_metadata(), timeout=self.timeout)
        except grpc.RpcError as e:
            raise BeteError.from_rpc_error(e) from None

    async def create_table(
        self,
        ruleset: int | str,
        seats: int,
        *,
        house_bots: Mapping[int, int | str] | None = None,
        config: Mapping[str, str] | None = None,
        decision_deadline_ms: int = 0,
        private: bool = False,
        seed: str = "",
        first_dealer: int = 0,
    ) -> table_pb2.Table:
        """Creates a table; ``house_bots`` maps seats to ``"random"``, ``"heuristic"``, ``"search"``
        or ``"search:<ms>"`` (a search house bot thinking at most that long a decision; the
        server bounds it, 1 to 10,000 ms, and keeps it under the table's deadline)."""
        req = table_service_pb2.CreateTableRequest(
            ruleset=ruleset_number(ruleset),
            seats=seats,
            config=dict(config or {}),
            decision_deadline_ms=decision_deadline_ms,
            house_bots=[house_bot_seat(s, p) for s, p in sorted((house_bots or {}).items())],
            visibility=table_pb2.VISIBILITY_PRIVATE if private else table_pb2.VISIBILITY_LISTED,
            seed=seed,
            first_dealer=first_dealer,
        )
        return (await self._unary(self.tables.CreateTable, req)).table

    async def get_table(self, table_id: str) -> table_pb2.Table:
        return (await self._unary(self.tables.GetTable, table_service_pb2.GetTableRequest(table_id=table_id))).table

    async def list_tables(self, page_size: int = 0, page_token: str = "") -> table_service_pb2.ListTablesResponse:
        req = table_service_pb2.ListTablesRequest(page_size=page_size, page_token=page_token)
        return await self._unary(self.tables.ListTables, req)

    async def join_table(self, table_id: str, seat: Optional[int] = None) -> table_service_pb2.JoinTableResponse:
        """Takes ``seat`` (or the lowest free seat) at a table; returns the seat and the table."""
        req = table_service_pb2.JoinTableRequest(table_id=table_id)
        if seat is not None:
            req.seat = seat
        return await self._unary(self.tables.JoinTable, req)

    async def leave_table(self, table_id: str) -> table_pb2.Table:
        req = table_service_pb2.LeaveTableRequest(table_id=table_id)
        return (await self._unary(self.tables.LeaveTable, req)).table

    async def get_seat_view(self, table_id: str):
        """This bot's current view of a table (a spectator view when not seated)."""
        req = table_service_pb2.GetSeatViewRequest(table_id=table_id)
        return (await self._unary(self.tables.GetSeatView, req)).view

    async def get_game_record(self, table_id: str) -> str:
        """The finished match's ``bete-record/1`` JSON text."""
        req = table_service_pb2.GetGameRecordRequest(table_id=table_id)
        return (await self._unary(self.tables.GetGameRecord, req)).record_json

    async def submit(
        self,
        table_id: str,
        action: cards_pb2.Action,
        expected_seq: int,
        request_id: Optional[str] = None,
        *,
        attempts: int = 8,
    ) -> table_service_pb2.SubmitActionResponse:
        """Submits an action based on the view at ``expected_seq``.

        The call is idempotent: it carries one ``request_id`` (a fresh uuid4 unless given) and is
        retried with that SAME id while the server is unavailable (or the answer is lost to a
        timeout), so the action applies at most once even if an earlier attempt did land. Other
        failures raise at once.
        """
        request = table_service_pb2.SubmitActionRequest(
            table_id=table_id,
            action=cards_pb2.Action(kind=action.kind, cards=list(action.cards)),
            expected_seq=expected_seq,
            request_id=request_id or str(uuid.uuid4()),
        )
        delays = backoff_delays()
        for attempt in range(1, attempts + 1):
            try:
                return await self._unary(self.tables.SubmitAction, request)
            except BeteError as e:
                if not (e.retryable or e.code == grpc.StatusCode.DEADLINE_EXCEEDED) or attempt == attempts:
                    raise
                log.info("submit %s at %s: %s; retrying with the same request_id", request.request_id, table_id, e)
                await asyncio.sleep(e.delay(next(delays)))
        raise AssertionError("unreachable: the loop returns or raises")

    # ---- ladders (LadderService) ---------------------------------------------------------------

    async def list_ladders(self) -> list:
        """Every ladder of the server (``bete.v1.Ladder``), in the operator's order. Public."""
        resp = await self._unary(self.ladders.ListLadders, ladder_service_pb2.ListLaddersRequest())
        return list(resp.ladders)

    async def get_ladder(self, ladder_id: str) -> ladder_service_pb2.GetLadderResponse:
        """One ladder, and (with a bot token) this bot's entry in it, if any (``HasField("entry")``)."""
        return await self._unary(self.ladders.GetLadder, ladder_service_pb2.GetLadderRequest(ladder_id=ladder_id))

    async def enter_ladder(self, ladder_id: str, capacity: int = 1):
        """Enters this bot in a ladder, to play ``capacity`` ladder tables at once; returns the
        ``LadderEntry``. The scheduler seats the bot only while it holds a WatchBot stream (a
        :class:`~bete_bot.Runner` in ``"bot"`` mode), so no games come until it runs."""
        req = ladder_service_pb2.EnterLadderRequest(ladder_id=ladder_id, capacity=capacity)
        return (await self._unary(self.ladders.EnterLadder, req)).entry

    async def leave_ladder(self, ladder_id: str):
        """Takes this bot off a ladder (matches under way go on and count); returns the entry."""
        req = ladder_service_pb2.LeaveLadderRequest(ladder_id=ladder_id)
        return (await self._unary(self.ladders.LeaveLadder, req)).entry

    async def get_standings(
        self, ladder_id: str, page_size: int = 0, page_token: str = ""
    ) -> ladder_service_pb2.GetStandingsResponse:
        """One page of a ladder's leaderboard, best first. Public."""
        req = ladder_service_pb2.GetStandingsRequest(ladder_id=ladder_id, page_size=page_size, page_token=page_token)
        return await self._unary(self.ladders.GetStandings, req)

    async def standings(self, ladder_id: str) -> list:
        """A ladder's whole leaderboard (``bete.v1.Standing`` lines, best first), every page."""
        lines: list = []
        token = ""
        while True:
            page = await self.get_standings(ladder_id, 500, token)
            lines.extend(page.standings)
            if not page.next_page_token:
                return lines
            token = page.next_page_token

    async def list_ladder_matches(
        self, ladder_id: str, bot_id: str = "", page_size: int = 0, page_token: str = ""
    ) -> ladder_service_pb2.ListLadderMatchesResponse:
        """One page of a ladder's matches (of one bot when ``bot_id`` is given), newest first."""
        req = ladder_service_pb2.ListLadderMatchesRequest(
            ladder_id=ladder_id, bot_id=bot_id, page_size=page_size, page_token=page_token
        )
        return await self._unary(self.ladders.ListLadderMatches, req)

    def watch_ladder_results(self, ladder_id: str = ""):
        """Opens a raw WatchLadderResults stream: each rated match (``rated``) and heartbeats."""
        req = ladder_service_pb2.WatchLadderResultsRequest(ladder_id=ladder_id)
        return self.ladders.WatchLadderResults(req, metadata=self._call_metadata())

    # ---- accounts (AccountService) -------------------------------------------------------------

    async def list_account_bots(self) -> account_service_pb2.ListAccountBotsResponse:
        """The bots of the account whose token this client holds, oldest first."""
        return await self._unary(self.accounts.ListAccountBots, account_service_pb2.ListAccountBotsRequest())

    def watch_table(self, table_id: str, from_seq: Optional[int] = None):
        """Opens a raw WatchTable stream (a ``grpc.aio`` call: iterate it, ``cancel()`` it)."""
        req = table_service_pb2.WatchTableRequest(table_id=table_id)
        if from_seq is not None:
            req.from_seq = from_seq
        return self.tables.WatchTable(req, metadata=self._call_metadata())

    def watch_bot(self, from_seq: Optional[Mapping[str, int]] = None, *, exclusive: bool = False):
        """Opens a raw WatchBot stream for every table this bot sits at.

        ``exclusive``: make it the bot's only stream; the server ends every other WatchBot
        stream of the bot with ABORTED / ``STREAM_REPLACED`` (a bot restarted while its old
        process still runs).
        """
        req = table_service_pb2.WatchBotRequest(from_seq=dict(from_seq or {}), exclusive=exclusive)
        return self.tables.WatchBot(req, metadata=self._call_metadata())

    async def follow_table(
        self, table_id: str, from_seq: Optional[int] = None, *, idle_timeout: float = 60.0
    ) -> AsyncIterator:
        """Yields a table's snapshot and events forever, resuming after dropped streams.

        Yields ``WatchTableResponse`` messages with ``snapshot`` or ``event`` set (heartbeats are
        swallowed). After a drop or a Resync it reconnects with the last seen seq, backing off, so
        the events it yields have no gap and no duplicate. Ends after MatchEnded. A stream silent
        for ``idle_timeout`` seconds (the server heartbeats idle streams) is taken for dead.
        """
        last = from_seq
        delays = backoff_delays()
        while True:
            call = self.watch_table(table_id, last)
            floor = 0.0  # the server's RetryInfo delay, if it gave one
            try:
                while True:
                    try:
                        msg = await read_within(call, idle_timeout)
                    except asyncio.TimeoutError:
                        log.warning("watch %s silent for %.0f s; reconnecting", table_id, idle_timeout)
                        break
                    if msg is grpc.aio.EOF:
                        break  # the server closed the stream before MatchEnded: resume
                    kind = msg.WhichOneof("kind")
                    if kind == "snapshot":
                        last = msg.snapshot.seq
                        yield msg
                        if msg.snapshot.match_over:
                            return
                    elif kind == "event":
                        if last is not None and msg.event.seq <= last:
                            continue  # already seen before a reconnect
                        if last is not None and msg.event.seq != last + 1:
                            log.warning("gap at %s: %d after %d; resuming", table_id, msg.event.seq, last)
                            break
                        last = msg.event.seq
                        delays = backoff_delays()
                        yield msg
                        if msg.event.WhichOneof("body") == "match_ended":
                            return
                    elif kind == "resync":
                        last = msg.resync.from_seq
                        break
            except grpc.RpcError as e:
                err = BeteError.from_rpc_error(e)
                if err.reason == "FROM_SEQ_OUT_OF_RANGE":
                    last = None  # too old to resume: start over with a snapshot
                elif not (err.retryable or err.code in _STREAM_RETRY_CODES):
                    raise err from None
                log.info("watch %s dropped (%s); resuming from %s", table_id, err, last)
                floor = err.retry_after or 0.0
            finally:
                call.cancel()
            await asyncio.sleep(max(next(delays), floor))


async def read_within(call, timeout: float):
    """``call.read()``, or ``asyncio.TimeoutError`` after ``timeout`` seconds.

    Not ``asyncio.wait_for``: before Python 3.12 it returns the message when the read completes in
    the same loop turn as a cancellation of the reader, and the cancellation is lost. A Ctrl-C is
    such a cancellation (``asyncio.run`` cancels the main task once), so a bot reading a busy
    stream sometimes ran on after Ctrl-C. ``asyncio.wait`` never swallows the caller's
    cancellation.
    """
    read = asyncio.ensure_future(call.read())
    try:
        done, _ = await asyncio.wait({read}, timeout=timeout)
    except BaseException:
        read.cancel()
        raise
    if not done:
        read.cancel()
        raise asyncio.TimeoutError()
    return read.result()


#: Stream failures after which reconnecting is right (the link, not the request, failed).
_STREAM_RETRY_CODES = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED,
     grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.CANCELLED}
)
