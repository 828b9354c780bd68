"""The ``Bot`` base class: subclass it and implement ``decide``."""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Union

from bete.v1 import cards_pb2, game_pb2

Action = cards_pb2.Action
SeatView = game_pb2.SeatView


class Bot:
    """A player. The runner calls ``decide`` whenever it is this bot's turn at any of its tables.

    Every method may be a plain function or a coroutine (``async def``). ``decide`` gets the
    seat's whole view (hand, tricks, pools, ``legal_actions``, ``deadline``) and returns one Action,
    usually one of ``view.legal_actions`` or a builder result such as ``card("KS")``. If it raises
    or returns an illegal action, the runner logs it and plays ``view.legal_actions[0]`` (the
    server's safe order) so the seat never times out.

    The hooks see the events of the tables they name; by default they do nothing.
    """

    #: The name registered with the server (shown to other seats and in records).
    name: str = "python-bot"

    def decide(self, view: SeatView) -> Union[Action, Awaitable[Action]]:
        raise NotImplementedError("a Bot must implement decide(view) -> Action")

    def on_deal_start(self, table_id: str, deal: game_pb2.DealStarted) -> Any:
        """A deal began; ``deal.hand`` is this seat's dealt hand."""

    def on_deal_end(self, table_id: str, settled: game_pb2.DealSettled) -> Any:
        """A deal was settled: ``settled.net`` and ``settled.balances`` in seat order."""

    def on_match_end(self, table_id: str, ended: game_pb2.MatchEnded) -> Any:
        """The match at ``table_id`` is over: ``ended.balances`` is the final result."""

    def on_event(self, table_id: str, event: game_pb2.Event) -> Any:
        """Every event of every table, in sequence order, once each (after the specific hook)."""


async def maybe_await(value: Any) -> Any:
    """Awaits ``value`` when a hook returned an awaitable, so hooks may be sync or async."""
    if inspect.isawaitable(value):
        return await value
    return value
