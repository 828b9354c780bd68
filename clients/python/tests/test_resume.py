"""A dropped stream resumes from the last seen seq with no gap and no duplicate."""

import asyncio
import json

import pytest

from bete_bot import Bot, RandomBot, Runner

from helpers import Recorder, assert_contiguous, new_client

pytestmark = pytest.mark.timeout(90)


class DroppingRecorder(Recorder):
    """Cuts the runner's stream in the middle of deals: after the 2nd card of every other deal."""

    def __init__(self, inner: Bot) -> None:
        super().__init__(inner)
        self.runner: Runner | None = None
        self.cards_this_deal = 0
        self.drops = 0

    def on_event(self, table_id, event):
        super().on_event(table_id, event)
        body = event.WhichOneof("body")
        if body == "deal_started":
            self.cards_this_deal = 0
        elif body == "card_played":
            self.cards_this_deal += 1
            if self.cards_this_deal == 2 and self.drops < 3:
                self.drops += 1
                self.runner.drop_stream()


def test_runner_resumes_a_dropped_watch_bot_stream(server):
    async def scenario():
        client = await new_client(server, "py-drop")
        async with client:
            t = await client.create_table("bete-ace-high", 3, house_bots={1: "heuristic", 2: "heuristic"})
            await client.join_table(t.table_id, seat=0)
            rec = DroppingRecorder(RandomBot(5))
            runner = Runner(client, rec, tables=())
            rec.runner = runner
            runner.track(t.table_id, from_seq=t.last_seq)
            states = await asyncio.wait_for(runner.run(), 80)
            table = await client.get_table(t.table_id)
            return t, states[t.table_id], rec, runner, table

    created, st, rec, runner, table = asyncio.run(scenario())
    assert rec.drops >= 1 and runner.connections == rec.drops + 1, "the stream was cut and reopened"
    seqs = rec.seqs[created.table_id]
    assert_contiguous(seqs)
    assert seqs[0] == created.last_seq + 1 and seqs[-1] == table.last_seq, "every event from creation to the end"
    assert st.done and st.result is not None and st.duplicates == 0
    assert st.illegal == 0


def test_raw_watch_table_resume_from_seq(server):
    """WatchTable as the seated bot: cancel mid-deal, reopen with from_seq, read to MatchEnded."""

    async def scenario():
        player = await new_client(server, "py-player")
        async with player:
            t = await player.create_table("beste-boer", 3, house_bots={1: "random", 2: "random"})
            await player.join_table(t.table_id, seat=0)
            runner = Runner(player, RandomBot(1), tables=[t.table_id])
            play = asyncio.ensure_future(runner.run())
            seen, snapshot_seq, cut = [], None, False
            call = player.watch_table(t.table_id)
            async for msg in call:
                kind = msg.WhichOneof("kind")
                if kind == "snapshot":
                    snapshot_seq = msg.snapshot.seq
                elif kind == "event":
                    seen.append(msg.event.seq)
                    if msg.event.WhichOneof("body") == "card_played":
                        call.cancel()
                        cut = True
                        break
            assert cut and snapshot_seq is not None
            call = player.watch_table(t.table_id, from_seq=seen[-1] if seen else snapshot_seq)
            last_body = None
            async for msg in call:
                kind = msg.WhichOneof("kind")
                assert kind != "snapshot", "a resume sends no snapshot"
                if kind == "event":
                    seen.append(msg.event.seq)
                    last_body = msg.event.WhichOneof("body")
            await asyncio.wait_for(play, 60)
            return snapshot_seq, seen, last_body

    snapshot_seq, seen, last_body = asyncio.run(scenario())
    assert seen[0] == snapshot_seq + 1
    assert_contiguous(seen)
    assert last_body == "match_ended", "the stream ends after MatchEnded"


def test_follow_table_survives_a_resync_free_run(server):
    """The SDK's resuming iterator yields a gapless history to MatchEnded for a spectator."""

    async def scenario():
        player = await new_client(server, "py-p")
        watcher = await new_client(server, "py-w")
        async with player, watcher:
            t = await player.create_table("beast", 3, house_bots={1: "random", 2: "heuristic"})
            await player.join_table(t.table_id, seat=0)
            play = asyncio.ensure_future(Runner(player, RandomBot(2), tables=[t.table_id]).run())
            seqs, hands_seen = [], 0
            async for msg in watcher.follow_table(t.table_id, from_seq=t.last_seq):
                seqs.append(msg.event.seq)
                if msg.event.WhichOneof("body") == "deal_started":
                    hands_seen += len(msg.event.deal_started.hand)
            await asyncio.wait_for(play, 60)
            return seqs, hands_seen

    seqs, hands_seen = asyncio.run(scenario())
    assert_contiguous(seqs)
    assert hands_seen == 0, "a spectator never sees a dealt hand"



class LosingRunner(Runner):
    """Cuts the stream the moment a DecisionRequest arrives and never sees that message, as if the
    link died with it in flight; twice per match."""

    lost = 0

    async def _handle_bot_message(self, msg):
        if msg.WhichOneof("kind") == "decision" and self.lost < 2:
            self.lost += 1
            self.drop_stream()
            return
        await super()._handle_bot_message(msg)


def test_a_decision_lost_with_the_stream_is_still_answered(server):
    async def scenario():
        client = await new_client(server, "py-lost")
        async with client:
            # A long deadline: the server must not rescue a lost decision with an auto-move.
            t = await client.create_table("bete", 3, house_bots={1: "heuristic", 2: "heuristic"},
                                          decision_deadline_ms=120_000)
            await client.join_table(t.table_id, seat=0)
            rec = Recorder(RandomBot(9))
            runner = LosingRunner(client, rec, tables=())
            runner.track(t.table_id, from_seq=t.last_seq)
            states = await asyncio.wait_for(runner.run(), 60)
            record = json.loads(await client.get_game_record(t.table_id))
            return t.table_id, states[t.table_id], runner, rec, record

    table_id, st, runner, rec, record = asyncio.run(scenario())
    assert runner.lost == 2 and runner.connections == 3
    # A lost turn is found again through GetSeatView or the resumed stream's own DecisionRequest,
    # whichever comes first; either way each turn is answered exactly once and none timed out.
    assert sum(st.sources.values()) == st.decisions and st.sources["decision"] > 0
    assert st.done and st.duplicates == 0
    assert_contiguous(rec.seqs[table_id])
    ours = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0]
    assert len(ours) == st.decisions and not any(a.get("auto") for a in ours)


def test_a_runner_that_was_away_when_the_match_ended_still_sees_its_end(server):
    """WatchBot no longer serves a finished table; the runner replays it from WatchTable."""

    async def scenario():
        client = await new_client(server, "py-late")
        async with client:
            t = await client.create_table("beast", 3, house_bots={1: "random", 2: "random"})
            await client.join_table(t.table_id, seat=0)
            await asyncio.wait_for(Runner(client, RandomBot(1), tables=[t.table_id]).run(), 60)
            late = Recorder(RandomBot(1))
            runner = Runner(client, late, tables=())
            runner.track(t.table_id, from_seq=t.last_seq)
            states = await asyncio.wait_for(runner.run(), 30)
            return t, states[t.table_id], late, await client.get_table(t.table_id)

    created, st, late, table = asyncio.run(scenario())
    seqs = late.seqs[created.table_id]
    assert_contiguous(seqs)
    assert seqs[0] == created.last_seq + 1 and seqs[-1] == table.last_seq
    assert st.done and created.table_id in late.match_ends and late.views == 0


def test_a_silent_stream_is_taken_for_dead_and_reopened(server):
    """With an idle timeout shorter than the server's heartbeat, a quiet stream is reopened; the
    decisions still all get made (none times out)."""

    async def scenario():
        client = await new_client(server, "py-idle")
        async with client:
            gate_open = asyncio.Event()

            class Slow(RandomBot):
                async def decide(self, view):
                    # Keep the table quiet long enough for the idle timeout to fire once.
                    if not gate_open.is_set():
                        await asyncio.sleep(0.8)
                        gate_open.set()
                    return super().decide(view)

            t = await client.create_table("bete", 3, house_bots={1: "random", 2: "random"})
            await client.join_table(t.table_id, seat=0)
            rec = Recorder(Slow(3))
            runner = Runner(client, rec, tables=(), idle_timeout=0.4)
            runner.track(t.table_id, from_seq=t.last_seq)
            states = await asyncio.wait_for(runner.run(), 60)
            return t.table_id, states[t.table_id], runner, rec

    table_id, st, runner, rec = asyncio.run(scenario())
    assert runner.connections >= 2, "the silent stream was reopened"
    assert st.done and st.duplicates == 0
    assert_contiguous(rec.seqs[table_id])
