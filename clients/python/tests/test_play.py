"""Python bots play full matches on the real server."""

import asyncio
import json

import pytest

from bete_bot import RandomBot, Runner, RuleAwareBot, pass_
from bete_bot.cards import RULESET_IDS

from helpers import Recorder, assert_contiguous, new_client

pytestmark = pytest.mark.timeout(90)


async def _play_one(server, ruleset, bot, *, seats=3, mode="bot", house="heuristic"):
    client = await new_client(server, f"py-{ruleset}")
    async with client:
        table = await client.create_table(ruleset, seats, house_bots={s: house for s in range(1, seats)})
        await client.join_table(table.table_id, seat=0)
        rec = Recorder(bot)
        runner = Runner(client, rec, tables=(), mode=mode)
        runner.track(table.table_id, from_seq=table.last_seq)
        states = await asyncio.wait_for(runner.run(), 80)
        record = json.loads(await client.get_game_record(table.table_id))
        return table.table_id, states[table.table_id], rec, record


def _check_finished(table_id, st, rec, record, ruleset):
    assert st.done and st.result is not None, "the match did not end on the stream"
    assert st.seat == 0
    assert sum(st.balances) == 0, f"final balances must sum to zero: {st.balances}"
    assert st.decisions > 0 and st.illegal == 0
    assert rec.text_mismatches == []
    assert_contiguous(rec.seqs[table_id])
    assert rec.match_ends[table_id].balances == st.result.balances
    assert rec.deals_started[table_id] == rec.deals_ended[table_id] >= 1
    assert record["ruleset"] == ruleset and record["format"] == "bete-record/1"
    ours = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0]
    assert not [a for a in ours if a.get("auto")], "no decision of ours timed out into an auto-move"
    assert len(ours) == st.decisions, "every decision the runner made is in the record"


@pytest.mark.parametrize("ruleset", sorted(RULESET_IDS.values()))
def test_rule_aware_bot_plays_a_full_match_of_every_ruleset(server, ruleset):
    table_id, st, rec, record = asyncio.run(_play_one(server, ruleset, RuleAwareBot()))
    _check_finished(table_id, st, rec, record, ruleset)


def test_random_bot_over_watch_table_streams(server):
    table_id, st, rec, record = asyncio.run(_play_one(server, "lanterlui", RandomBot(7), seats=4, mode="table",
                                                     house="random"))
    _check_finished(table_id, st, rec, record, "lanterlui")


def test_search_house_bots_with_a_budget_play_a_full_match(server):
    table_id, st, rec, record = asyncio.run(_play_one(server, "beste-boer", RandomBot(5), house="search:5"))
    _check_finished(table_id, st, rec, record, "beste-boer")

    async def seats():
        client = await new_client(server, "py-search-check")
        async with client:
            return (await client.get_table(table_id)).seats

    shown = [(s.seat, s.bot_name, s.search_budget_ms) for s in asyncio.run(seats())]
    assert [(seat, budget) for seat, _, budget in shown if seat != 0] == [(1, 5), (2, 5)], shown
    assert all("search" in name for seat, name, _ in shown if seat != 0), shown


def test_a_bad_search_budget_is_refused_before_the_call():
    from bete_bot.client import house_bot_seat

    assert house_bot_seat(1, "search:50").search_budget_ms == 50
    assert house_bot_seat(1, "search").search_budget_ms == 0
    with pytest.raises(ValueError, match="bad search budget"):
        house_bot_seat(1, "search:fast")


def test_one_runner_plays_several_tables_at_once(server):
    async def scenario():
        client = await new_client(server, "py-multi")
        async with client:
            rec = Recorder(RandomBot(3))
            runner = Runner(client, rec, tables=())
            ids = []
            for ruleset in ("bete", "beast", "bester-bube"):
                t = await client.create_table(ruleset, 3, house_bots={1: "random", 2: "heuristic"})
                await client.join_table(t.table_id)
                runner.track(t.table_id, from_seq=t.last_seq)
                ids.append(t.table_id)
            states = await asyncio.wait_for(runner.run(), 80)
            return ids, states, rec, runner

    ids, states, rec, runner = asyncio.run(scenario())
    assert runner.connections == 1, "one WatchBot stream served every table"
    for t in ids:
        assert states[t].done and sum(states[t].balances) == 0
        assert_contiguous(rec.seqs[t])


def test_two_python_bots_at_one_table(server):
    async def scenario():
        a = await new_client(server, "py-a")
        b = await new_client(server, "py-b")
        async with a, b:
            t = await a.create_table("bete", 3, house_bots={2: "heuristic"})
            await a.join_table(t.table_id, seat=0)
            await b.join_table(t.table_id, seat=1)
            ra, rb = Recorder(RuleAwareBot()), Recorder(RandomBot(11))
            runners = [Runner(a, ra, tables=[t.table_id]), Runner(b, rb, tables=[t.table_id])]
            sa, sb = await asyncio.wait_for(asyncio.gather(*(r.run() for r in runners)), 80)
            record = json.loads(await a.get_game_record(t.table_id))
            return t.table_id, sa[t.table_id], sb[t.table_id], record

    table_id, sa, sb, record = asyncio.run(scenario())
    assert (sa.seat, sb.seat) == (0, 1)
    assert sa.done and sb.done and sa.balances == sb.balances and sum(sa.balances) == 0
    assert sa.decisions > 0 and sb.decisions > 0
    by_seat = {0: 0, 1: 0}
    for deal in record["deals"]:
        for act in deal["actions"]:
            if act["seat"] in by_seat:
                assert not act.get("auto"), f"seat {act['seat']} timed out: {act}"
                by_seat[act["seat"]] += 1
    assert by_seat == {0: sa.decisions, 1: sb.decisions}


def test_a_serving_runner_plays_tables_joined_later_and_stops_when_cancelled(server):
    """tables=None: the runner plays whatever the bot sits at, including tables joined after it
    started, until its task is cancelled (the cancel is not mistaken for a dropped stream)."""

    async def scenario():
        client = await new_client(server, "py-serve")
        async with client:
            rec = Recorder(RuleAwareBot())
            runner = Runner(client, rec)  # tables=None
            task = asyncio.ensure_future(runner.run())
            await asyncio.sleep(0.2)
            ids = []
            for ruleset in ("lanterlui", "bete"):
                t = await client.create_table(ruleset, 3, house_bots={1: "random", 2: "random"})
                await client.join_table(t.table_id)
                ids.append(t.table_id)
            for _ in range(600):
                if all(t in rec.match_ends for t in ids):
                    break
                await asyncio.sleep(0.05)
            assert not task.done(), "a serving runner keeps going after its matches end"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
            return ids, runner, rec

    ids, runner, rec = asyncio.run(scenario())
    assert all(t in rec.match_ends for t in ids), "both matches were played to the end"
    assert runner.connections == 1
    for t in ids:
        assert runner.tables[t].done and runner.tables[t].decisions > 0 and runner.tables[t].illegal == 0


def test_tables_tracked_while_running_are_played(server):
    """Joining first and tracking afterwards (the stream may show the table before it is
    tracked) still plays the match, with no auto-move."""

    async def scenario():
        client = await new_client(server, "py-late-track")
        async with client:
            first = await client.create_table("bete", 3, house_bots={1: "heuristic", 2: "heuristic"})
            await client.join_table(first.table_id, seat=0)
            gate = asyncio.Event()  # holds the first match open until the second is tracked

            class Gated(RandomBot):
                async def decide(self, view):
                    await gate.wait()
                    return super().decide(view)

            rec = Recorder(Gated(5))
            runner = Runner(client, rec, tables=[first.table_id])
            task = asyncio.ensure_future(runner.run())
            await asyncio.sleep(0.3)
            second = await client.create_table("beste-boer", 3, house_bots={1: "random", 2: "heuristic"},
                                               first_dealer=2)  # seat 0 speaks first
            await client.join_table(second.table_id, seat=0)
            await asyncio.sleep(0.3)
            runner.track(second.table_id)
            gate.set()
            states = await asyncio.wait_for(task, 60)
            records = [json.loads(await client.get_game_record(t.table_id)) for t in (first, second)]
            return states, records

    states, records = asyncio.run(scenario())
    for st, record in zip(states.values(), records):
        assert st.done and sum(st.balances) == 0
        ours = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0]
        assert len(ours) == st.decisions and not any(a.get("auto") for a in ours)


class Clumsy(RandomBot):
    """Raises on every third turn and says "pass" (illegal outside Bête) on every fifth."""

    turns = 0

    def decide(self, view):
        self.turns += 1
        if self.turns % 3 == 0:
            raise RuntimeError("bug in the bot")
        if self.turns % 5 == 0:
            return pass_()
        return super().decide(view)


def test_a_buggy_bot_still_plays_every_turn(server):
    """A raising decide() and refused actions fall back to the first legal action at once."""
    table_id, st, rec, record = asyncio.run(_play_one(server, "beste-boer", Clumsy(8)))
    assert st.done and st.result is not None
    assert st.illegal > 0, "the server refused the illegal passes"
    ours = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0]
    assert len(ours) == st.decisions and not any(a.get("auto") for a in ours)
    assert not any(a["action"] == "pass" for a in ours)
