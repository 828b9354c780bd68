"""The runner rides out a server restart in the middle of a match (UNAVAILABLE, then resume)."""

import asyncio
import json

import pytest

from bete_bot import RandomBot, Runner

from conftest import free_port, launch, stop
from helpers import Recorder, assert_contiguous, new_client

pytestmark = pytest.mark.timeout(90)


class RestartingRecorder(Recorder):
    """Restarts the server (same port, same data folder) at the first card played after deal 0."""

    def __init__(self, inner, restart) -> None:
        super().__init__(inner)
        self.restart = restart
        self.deal = -1
        self.restarted = False

    def on_deal_start(self, table_id, deal):
        super().on_deal_start(table_id, deal)
        self.deal = deal.deal

    async def on_event(self, table_id, event):
        super().on_event(table_id, event)
        if self.deal >= 1 and not self.restarted and event.WhichOneof("body") == "card_played":
            self.restarted = True
            await asyncio.to_thread(self.restart)


def test_runner_survives_a_server_restart(tmp_path):
    target = f"127.0.0.1:{free_port()}"
    data, log = tmp_path / "data", tmp_path / "server.log"
    procs = [launch(target, data, log)]
    assert procs[0] is not None, log.read_text(errors="replace")[-3000:]

    def restart():
        stop(procs[-1])
        procs.append(launch(target, data, log))
        assert procs[-1] is not None, "the server came back"

    async def scenario():
        client = await new_client(target, "py-restart")
        async with client:
            t = await client.create_table("beste-boer", 3, house_bots={1: "heuristic", 2: "random"},
                                          decision_deadline_ms=60_000)
            await client.join_table(t.table_id, seat=0)
            rec = RestartingRecorder(RandomBot(4), restart)
            runner = Runner(client, rec, tables=())
            runner.track(t.table_id, from_seq=t.last_seq)
            states = await asyncio.wait_for(runner.run(), 70)
            record = json.loads(await client.get_game_record(t.table_id))
            return t.table_id, states[t.table_id], rec, runner, record

    try:
        table_id, st, rec, runner, record = asyncio.run(scenario())
    finally:
        for p in procs:
            if p is not None:
                stop(p)
    assert rec.restarted and runner.connections >= 2
    assert st.done and st.result is not None and st.duplicates == 0
    assert_contiguous(rec.seqs[table_id])
    ours = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0]
    assert len(ours) == st.decisions and not any(a.get("auto") for a in ours)
