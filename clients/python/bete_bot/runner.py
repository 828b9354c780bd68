"""The runner: plays every table a bot sits at over one ``WatchBot`` stream (or one ``WatchTable``
per table), resumes dropped streams from the last seen sequence number, and never misses a
decision.

Why it cannot miss one: every event carries the table's ``seq`` with no gap, so after a drop the
runner reconnects with ``from_seq`` = the last seq it handled and the server replays the rest; a
DecisionRequest is not an event, so after every (re)connect the runner also asks ``GetSeatView``
of each unfinished table and decides if it is its turn there. Decisions are keyed by seq, so the
same turn is never answered twice, and each answer is one ``SubmitAction`` with a fresh
``request_id`` and ``expected_seq`` = that seq, retried with the same id while the server is
unavailable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

import grpc
from bete.v1 import game_pb2

from .actions import Action, action_text, same_action
from .bot import Bot, maybe_await
from .client import Client, _STREAM_RETRY_CODES, backoff_delays, read_within
from .errors import BeteError

log = logging.getLogger("bete_bot")


@dataclass
class TableState:
    """What the runner knows about one table."""

    table_id: str
    #: The seq of the last event (or snapshot) handled; where a resume starts.
    last_seq: Optional[int] = None
    #: Our seat, once known.
    seat: Optional[int] = None
    #: The highest seq a decision was started for (each turn is answered once).
    decided_seq: int = -1
    done: bool = False
    #: The final result (MatchEnded), when the match ended on our watch.
    result: Optional[game_pb2.MatchEnded] = None
    #: The final balances (from MatchEnded or a finished snapshot).
    balances: list[int] = field(default_factory=list)
    decisions: int = 0
    #: What prompted each decision: "decision" (a DecisionRequest), "snapshot" or "view" (GetSeatView).
    sources: Counter = field(default_factory=Counter)
    #: Actions the bot chose that the server refused; the safe action was played instead.
    illegal: int = 0
    #: Duplicate events the runner skipped after a resume (should stay 0 with a correct server).
    duplicates: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class _Reconnect(Exception):
    """Internal: the stream must be reopened from the last seen seqs."""


class Runner:
    """Plays ``bot`` through ``client`` at the tracked tables until every one has ended.

    Args:
        client: a connected :class:`Client` (its token decides who plays).
        bot: the :class:`Bot`.
        tables: the tables to play; ``None`` plays every table the bot is seated at, for ever.
        mode: ``"bot"`` (one WatchBot stream, preferred) or ``"table"`` (one WatchTable per table).
        idle_timeout: seconds of silence after which the stream counts as dead (bot mode).
        max_matches: with ``tables=None``, return once this many tables have ended (e.g. ladder
            tables, which the server seats the bot at while the stream is open).
        on_seated: called with the ``Seated`` message when the server seats the bot at a table
            (bot mode), for progress lines.
        on_over: called with a table's :class:`TableState` once, when its match has ended.
        exclusive: be the only process playing this bot (bot mode): every WatchBot stream is
            opened ``exclusive``, so the server ends any other process's stream of the bot, and
            :meth:`run` raises :class:`BeteError` (reason ``STREAM_REPLACED``, never retried)
            when a later process does the same to this one.
    """

    def __init__(
        self,
        client: Client,
        bot: Bot,
        tables: Optional[Iterable[str]] = None,
        *,
        mode: str = "bot",
        idle_timeout: float = 60.0,
        max_matches: Optional[int] = None,
        on_seated: Optional[Callable[[Any], None]] = None,
        on_over: Optional[Callable[["TableState"], None]] = None,
        exclusive: bool = False,
    ) -> None:
        if mode not in ("bot", "table"):
            raise ValueError("mode must be 'bot' or 'table'")
        self.client = client
        self.bot = bot
        self.mode = mode
        #: Seconds without any message (the server heartbeats idle streams) before the runner
        #: takes the stream for dead and reconnects.
        self.idle_timeout = idle_timeout
        self.tables: dict[str, TableState] = {}
        self._follow_all = tables is None
        self.max_matches = max_matches
        self._on_seated = on_seated
        self._on_over = on_over
        self.exclusive = exclusive
        self._tasks: set[asyncio.Task] = set()
        self._running = False
        for t in tables or ():
            self.track(t)
        self._call = None
        self._dropping = False
        #: How many times the stream was (re)opened; >1 means it resumed.
        self.connections = 0

    def track(self, table_id: str, from_seq: Optional[int] = None) -> TableState:
        """Adds a table to play. ``from_seq``: resume its events after this seq (no snapshot)."""
        st = self.tables.get(table_id)
        if st is None:
            st = self.tables[table_id] = TableState(table_id)
        if from_seq is not None and st.last_seq is None:
            st.last_seq = from_seq
        if self._running and self.mode == "bot":
            # The stream may have shown this table before it was tracked: look at it once.
            self._spawn(self._check_view(st))
        return st

    def drop_stream(self) -> None:
        """Cuts the current stream as a network failure would; the runner resumes it (for tests)."""
        if self._call is not None:
            self._dropping = True
            self._call.cancel()

    def _all_done(self) -> bool:
        if self._follow_all:
            return self.max_matches is not None and sum(st.done for st in self.tables.values()) >= self.max_matches
        return all(st.done for st in self.tables.values())

    async def run(self) -> dict[str, TableState]:
        """Plays until every tracked table has ended (for ever with ``tables=None``)."""
        self._running = True
        try:
            if self.mode == "bot":
                await self._run_watch_bot()
            else:
                await asyncio.gather(*(self._run_watch_table(st) for st in list(self.tables.values())))
            # Let decisions in flight finish. Only wait for unfinished tasks: awaiting a gather of
            # finished ones does not yield, so the done-callbacks that empty the set never run.
            while pending := [t for t in self._tasks if not t.done()]:
                await asyncio.gather(*pending, return_exceptions=True)
        finally:
            self._running = False
            for t in list(self._tasks):
                t.cancel()
        return self.tables

    # ---- WatchBot mode -------------------------------------------------------------------------

    async def _run_watch_bot(self) -> None:
        delays = backoff_delays()
        while not self._all_done():
            floor = 0.0  # the server's RetryInfo delay, if it gave one
            from_seq = {t: st.last_seq for t, st in self.tables.items() if st.last_seq is not None and not st.done}
            call = self.client.watch_bot(from_seq, exclusive=self.exclusive)
            self._call = call
            self.connections += 1
            checked = False
            self._spawn(self._check_after_connect(call))
            try:
                while True:
                    try:
                        msg = await read_within(call, self.idle_timeout)
                    except asyncio.TimeoutError:
                        # Heartbeats come every few seconds: a silent stream is a dead link.
                        log.warning("WatchBot stream silent for %.0f s; reconnecting", self.idle_timeout)
                        break
                    if msg is grpc.aio.EOF:
                        if not self._all_done():
                            log.info("WatchBot stream ended by the server; resuming")
                        break
                    if not checked:
                        # The stream is live on the server now: any decision pending since the
                        # drop shows up in the views; later ones come on the stream.
                        checked = True
                        delays = backoff_delays()
                        self._spawn(self._check_views([t for t, st in self.tables.items() if not st.done]))
                    await self._handle_bot_message(msg)
                    if self._all_done():
                        break
            except _Reconnect:
                pass
            except grpc.RpcError as e:
                err = BeteError.from_rpc_error(e)
                floor = err.retry_after or 0.0
                if self._dropping and err.code == grpc.StatusCode.CANCELLED:
                    pass
                elif err.reason == "FROM_SEQ_OUT_OF_RANGE":
                    log.warning("cannot resume (%s); starting over with snapshots", err)
                    for st in self.tables.values():
                        st.last_seq = None
                elif not (err.retryable or err.code in _STREAM_RETRY_CODES):
                    raise err from None
                else:
                    log.info("WatchBot stream dropped: %s; resuming", err)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                # Our own task being cancelled must propagate; only a cut we made is swallowed.
                if not self._dropping or (task is not None and getattr(task, "cancelling", lambda: 0)()):
                    raise
            finally:
                self._call = None
                self._dropping = False
                call.cancel()
            if not self._all_done():
                await asyncio.sleep(max(next(delays), floor))

    async def _check_after_connect(self, call) -> None:
        """Shortly after (re)connecting, look for turns that were pending across the reconnect.

        A quiet table sends nothing on a resumed stream (not even headers) until a heartbeat, so
        this cannot wait for the server; it waits a moment for the server to take the stream up.
        The first message on the stream triggers the same check, and heartbeats re-check quiet
        tables; a turn is answered once whichever finds it first.
        """
        await asyncio.sleep(0.3)
        if call.done():
            return
        await self._check_views([t for t, st in self.tables.items() if not st.done])

    async def _handle_bot_message(self, msg) -> None:
        kind = msg.WhichOneof("kind")
        if kind == "heartbeat":
            await self._on_heartbeat()
            return
        st = self.tables.get(msg.table_id)
        if st is None:
            if not self._follow_all:
                return  # a table this runner was not asked to play
            st = self.track(msg.table_id)
        if kind == "seated":
            st.seat = msg.seated.seat
            if self._on_seated is not None:
                self._on_seated(msg.seated)
        elif kind == "snapshot":
            self._on_snapshot(st, msg.snapshot)
        elif kind == "event":
            await self._on_event(st, msg.event)
        elif kind == "decision":
            d = msg.decision
            self._consider(st, d.seq, d.view, "decision")
        elif kind == "resync":
            log.info("resync at %s from %d: %s", st.table_id, msg.resync.from_seq, msg.resync.reason)
            raise _Reconnect()

    async def _on_heartbeat(self) -> None:
        # Safety net: a table that has been quiet for a while gets its view checked, in case a
        # decision was lost between a GetSeatView and the stream going live.
        now = time.monotonic()
        quiet = [t for t, st in self.tables.items() if not st.done and now - st.last_activity > 2.0]
        if quiet:
            self._spawn(self._check_views(quiet))

    # ---- WatchTable mode -----------------------------------------------------------------------

    async def _run_watch_table(self, st: TableState) -> None:
        async for msg in self.client.follow_table(st.table_id, st.last_seq):
            if msg.WhichOneof("kind") == "snapshot":
                self._on_snapshot(st, msg.snapshot)
            else:
                await self._on_event(st, msg.event)
                if not st.done:
                    # WatchTable carries no DecisionRequest: ask whether the turn is ours.
                    await self._check_view(st)
            if st.done:
                return

    # ---- shared --------------------------------------------------------------------------------

    def _on_snapshot(self, st: TableState, view: game_pb2.SeatView) -> None:
        st.last_seq = view.seq
        st.last_activity = time.monotonic()
        if view.HasField("viewer_seat"):
            st.seat = view.viewer_seat
        if view.match_over:
            self._finish(st, [s.balance for s in view.seat_states], None)
        else:
            self._consider(st, view.seq, view, "snapshot")

    async def _on_event(self, st: TableState, event: game_pb2.Event) -> None:
        if st.last_seq is not None:
            if event.seq <= st.last_seq:
                st.duplicates += 1
                return
            if event.seq != st.last_seq + 1:
                log.warning("gap at %s: event %d after %d; resuming", st.table_id, event.seq, st.last_seq)
                raise _Reconnect()
        st.last_seq = event.seq
        st.last_activity = time.monotonic()
        body = event.WhichOneof("body")
        hook = {
            "deal_started": (self.bot.on_deal_start, event.deal_started),
            "deal_settled": (self.bot.on_deal_end, event.deal_settled),
            "match_ended": (self.bot.on_match_end, event.match_ended),
        }.get(body)
        if hook is not None:
            await self._call_hook(hook[0], st.table_id, hook[1])
        await self._call_hook(self.bot.on_event, st.table_id, event)
        if body == "match_ended":
            self._finish(st, list(event.match_ended.balances), event.match_ended)

    async def _call_hook(self, fn, *args) -> None:
        try:
            await maybe_await(fn(*args))
        except Exception:
            log.exception("bot hook %s failed", getattr(fn, "__name__", fn))

    def _finish(self, st: TableState, balances: list[int], result) -> None:
        first = not st.done
        st.done = True
        st.balances = balances
        st.result = result
        if first and self._on_over is not None:
            self._on_over(st)
        if self._all_done() and self._call is not None:
            # Finished from another task (a catch-up): wake the stream loop so run() returns.
            self.drop_stream()

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _check_views(self, table_ids: list[str]) -> None:
        await asyncio.gather(*(self._check_view(self.tables[t]) for t in table_ids), return_exceptions=True)

    async def _check_view(self, st: TableState) -> None:
        try:
            view = await self.client.get_seat_view(st.table_id)
        except BeteError as e:
            log.info("GetSeatView %s: %s", st.table_id, e)
            return
        st.last_activity = time.monotonic()
        if view.HasField("viewer_seat"):
            st.seat = view.viewer_seat
        if view.match_over and not st.done:
            if self.mode == "bot":  # a WatchTable stream delivers the end itself
                await self._catch_up_finished(st)
            return
        self._consider(st, view.seq, view, "view")

    async def _catch_up_finished(self, st: TableState) -> None:
        """A bot stream lets go of a table once its match is over, so a runner that was away when
        it ended replays what it missed from WatchTable, which still serves finished tables and
        ends after MatchEnded."""
        await asyncio.sleep(0.5)  # the bot stream may still be delivering the last events
        if st.done:
            return
        try:
            async for msg in self.client.follow_table(st.table_id, st.last_seq):
                if st.done:
                    return
                if msg.WhichOneof("kind") == "snapshot":
                    self._on_snapshot(st, msg.snapshot)
                elif st.last_seq is None or msg.event.seq > st.last_seq:
                    await self._on_event(st, msg.event)
        except (BeteError, _Reconnect) as e:
            log.warning("%s: could not replay the end of the match: %r", st.table_id, e)

    def _consider(self, st: TableState, seq: int, view: game_pb2.SeatView, source: str) -> None:
        """Starts a decision for ``seq`` unless the turn is not ours or was already answered."""
        if st.done or not view.legal_actions or seq <= st.decided_seq:
            return
        if view.HasField("to_act") and view.HasField("viewer_seat") and view.to_act != view.viewer_seat:
            return
        st.decided_seq = seq
        st.sources[source] += 1
        self._spawn(self._decide(st, seq, view))

    async def _decide(self, st: TableState, seq: int, view: game_pb2.SeatView) -> None:
        async with st.lock:
            if st.done or seq < st.decided_seq:
                return  # the table moved on while an earlier decision held the lock
            st.decisions += 1
            try:
                action = await maybe_await(self.bot.decide(view))
                if not isinstance(action, Action):
                    raise TypeError(f"decide returned {type(action).__name__}, not an Action")
            except Exception:
                log.exception("decide failed at %s seq %d; playing the safe action", st.table_id, seq)
                action = view.legal_actions[0]
            if not any(same_action(action, legal) for legal in view.legal_actions):
                log.warning("%s: %r is not among the legal actions", st.table_id, _text(action))
            await self._submit(st, seq, view, action)

    async def _submit(self, st: TableState, seq: int, view: game_pb2.SeatView, action: Action) -> None:
        try:
            await self.client.submit(st.table_id, action, expected_seq=seq)
            return
        except BeteError as e:
            err = e
        if err.reason in ("ILLEGAL_ACTION", "INVALID_ARGUMENT") and not same_action(action, view.legal_actions[0]):
            st.illegal += 1
            log.warning("%s refused %r (%s); playing %r", st.table_id, _text(action), err.message,
                        _text(view.legal_actions[0]))
            await self._submit(st, seq, view, view.legal_actions[0])
        elif err.reason == "STALE_SEQ":
            # The table moved on (e.g. our deadline passed and the server played for us): look again.
            log.info("%s: stale seq %d; refreshing the view", st.table_id, seq)
            self._spawn(self._check_view(st))
        elif err.reason in ("TABLE_FINISHED", "NOT_YOUR_SEAT"):
            log.info("%s: %s", st.table_id, err)
        else:
            log.error("%s: submit failed: %s", st.table_id, err)


def _text(action: Action) -> str:
    try:
        return action_text(action)
    except ValueError:
        return str(action)
