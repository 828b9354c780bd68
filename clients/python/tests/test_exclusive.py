"""WatchBot's ``exclusive`` in the runner, against the real server: a second process of one bot
whose runner is ``exclusive`` ends the first's stream with ABORTED / STREAM_REPLACED (the first
runner stops for good, it does not reconnect and take the bot back), and the newest stream plays
the bot's tables."""

import asyncio
import uuid

import grpc
import pytest

from bete_bot import BeteError, Client, RandomBot, Runner, register_bot

pytestmark = pytest.mark.timeout(120)


async def _until(cond, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_an_exclusive_runner_replaces_the_older_stream(server):
    async def scenario():
        _, token = await register_bot(server, f"py-exclusive-{uuid.uuid4().hex[:8]}", owner="pytest")
        async with Client(server, token) as first, Client(server, token) as second:
            older = Runner(first, RandomBot(), tables=None)
            older_task = asyncio.ensure_future(older.run())
            await _until(lambda: older._call is not None)
            # Headers come once the server has registered the stream.
            await older._call.initial_metadata()

            seated = []
            newer = Runner(second, RandomBot(), tables=None, max_matches=1, on_seated=seated.append, exclusive=True)
            newer_task = asyncio.ensure_future(newer.run())
            with pytest.raises(BeteError) as replaced:
                await asyncio.wait_for(older_task, 20)
            assert replaced.value.code == grpc.StatusCode.ABORTED
            assert replaced.value.reason == "STREAM_REPLACED"
            assert older.connections == 1, "a replaced runner must not reconnect"
            assert not newer_task.done()

            # The bot's tables now come on the newest stream, which plays them to the end.
            table = await second.create_table("bete", 3, house_bots={1: "random", 2: "random"})
            await second.join_table(table.table_id, seat=0)
            states = await asyncio.wait_for(newer_task, 90)
            assert states[table.table_id].done
            assert states[table.table_id].decisions > 0
            assert [m.table_id for m in seated] == [table.table_id]
            assert newer.connections == 1

    asyncio.run(scenario())
