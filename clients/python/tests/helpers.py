"""Shared test helpers (no fixtures here: those live in conftest.py)."""

from __future__ import annotations

import asyncio
import uuid

from bete_bot import Bot, Client, register_bot
from bete_bot.actions import action_text


async def new_client(server: str, name: str = "py-test") -> Client:
    """A client for a freshly registered bot (a unique name per call)."""
    _, token = await register_bot(server, f"{name}-{uuid.uuid4().hex[:8]}", owner="pytest")
    return Client(server, token)


class Recorder(Bot):
    """Wraps a bot and records what the runner gave it, to check the runner's promises."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.name = inner.name
        self.seqs: dict[str, list[int]] = {}
        self.views = 0
        self.deals_started: dict[str, int] = {}
        self.deals_ended: dict[str, int] = {}
        self.match_ends: dict[str, object] = {}
        self.text_mismatches: list[tuple[str, str]] = []

    async def decide(self, view):
        self.views += 1
        # The server's text form of every legal action must be what this SDK formats.
        for a in view.legal_actions:
            if action_text(a) != a.text:
                self.text_mismatches.append((action_text(a), a.text))
        action = self.inner.decide(view)
        if asyncio.iscoroutine(action):
            action = await action
        return action

    def on_deal_start(self, table_id, deal):
        self.deals_started[table_id] = self.deals_started.get(table_id, 0) + 1

    def on_deal_end(self, table_id, settled):
        self.deals_ended[table_id] = self.deals_ended.get(table_id, 0) + 1

    def on_match_end(self, table_id, ended):
        self.match_ends[table_id] = ended

    def on_event(self, table_id, event):
        self.seqs.setdefault(table_id, []).append(event.seq)


def assert_contiguous(seqs: list[int]) -> None:
    """No gap and no duplicate: each seq is the previous one plus one."""
    assert seqs, "no events"
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"gap or duplicate in {seqs}"
