"""Ladders and accounts against the real server: the client calls and their refusals, and
``bete-bot --ladder`` playing a duplicate set through the ordinary runner, then leaving, with the
bot on the leaderboard afterwards."""

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from bete_bot import BeteError, Client, create_account, register_bot

from helpers import new_client

pytestmark = pytest.mark.timeout(180)

DEFAULT_LADDERS = ["bete-4", "bete-ace-high-4", "beast-4", "beste-boer-4", "lanterlui-4", "bester-bube-4", "mouche-4", "mistigri-4", "loo-4", "rams-4"]


def test_ladder_calls_and_their_refusals(server):
    async def scenario():
        bot = await new_client(server, "py-ladder-calls")
        async with bot:
            ladders = await bot.list_ladders()
            assert [l.ladder_id for l in ladders] == DEFAULT_LADDERS
            assert all(l.seat_count == 4 and l.duplicate for l in ladders)

            with pytest.raises(BeteError) as unknown:
                await bot.enter_ladder("no-such-ladder")
            assert unknown.value.reason == "LADDER_NOT_FOUND"
            with pytest.raises(BeteError) as not_entered:
                await bot.leave_ladder("lanterlui-4")
            assert not_entered.value.reason == "LADDER_NOT_ENTERED"

            # Entering without a WatchBot stream is allowed: no games come until the bot is online.
            entry = await bot.enter_ladder("lanterlui-4", capacity=2)
            assert (entry.ladder_id, entry.capacity, entry.active) == ("lanterlui-4", 2, True)
            with pytest.raises(BeteError) as twice:
                await bot.enter_ladder("lanterlui-4")
            assert twice.value.reason == "LADDER_ALREADY_ENTERED"
            seen = await bot.get_ladder("lanterlui-4")
            assert seen.HasField("entry") and seen.entry.bot_id == entry.bot_id
            left = await bot.leave_ladder("lanterlui-4")
            assert not left.active

        # The reads are public.
        async with Client(server, None) as anonymous:
            assert len(await anonymous.list_ladders()) == len(DEFAULT_LADDERS)
            page = await anonymous.list_ladder_matches("lanterlui-4", bot_id=entry.bot_id)
            assert list(page.matches) == []
            with pytest.raises(BeteError) as unknown:
                await anonymous.get_standings("no-such-ladder")
            assert unknown.value.reason == "LADDER_NOT_FOUND"

    asyncio.run(scenario())


def test_an_account_owns_versions_of_a_bot(server):
    async def scenario():
        account_id, account_token = await create_account(server, f"py-team-{uuid.uuid4().hex[:6]}")
        v1, _ = await register_bot(server, "py-owned", account_token=account_token)
        v2, token2 = await register_bot(server, "py-owned", version="2", account_token=account_token)
        assert v1 != v2, "a new version is a new bot id"
        with pytest.raises(BeteError) as again:
            await register_bot(server, "py-owned", version="2", account_token=account_token)
        assert again.value.reason == "BOT_VERSION_EXISTS"
        async with Client(server, account_token) as owner:
            bots = await owner.list_account_bots()
        assert bots.account_id == account_id
        assert [(b.bot_id, b.name, b.version) for b in bots.bots] == [(v1, "py-owned", "1"), (v2, "py-owned", "2")]
        async with Client(server, token2) as bot:
            entry = await bot.enter_ladder("beast-4")  # an owned bot enters like any other
            assert entry.bot_id == v2
            await bot.leave_ladder("beast-4")

    asyncio.run(scenario())


def test_bete_bot_plays_a_ladder_set_and_reaches_the_leaderboard(server, tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("BETE_TOKEN", None)
    tag = uuid.uuid4().hex[:6]
    names = [f"py-ladder-{tag}", f"py-sparring-{tag}"]
    # A default ladder seats four entrants and has two house entrants, so two bots of their own
    # (two owners) make a table. Its duplicate set is four tables, one per rotation.
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bete_bot", "--server", server, "--ladder", "beste-boer-4", "--matches", "4",
             "--bot", bot, "--name", name],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for name, bot in zip(names, ["rule_aware", "random"])
    ]
    try:
        outs = [p.communicate(timeout=150) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (stdout, stderr) in zip(procs, outs):
        assert p.returncode == 0, stderr
        assert "entered ladder beste-boer-4" in stderr and "left ladder beste-boer-4" in stderr, stderr
        # Progress as the Rust ladder bot prints it: each seating, each table's end.
        assert stderr.count("seated at table ") >= 4 and ", ladder beste-boer-4)" in stderr, stderr
        assert [f"table {i}/4 over: " in stderr for i in range(1, 5)] == [True] * 4, stderr
        tables = [line for line in stdout.splitlines() if line.startswith("table ")]
        assert len(tables) == 4 and all("balance" in line and "0 refused" in line for line in tables), stdout
        assert "bete ladder standings beste-boer-4" in stdout

    async def standing():
        async with Client(server, None) as c:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                lines = await c.standings("beste-boer-4")
                mine = [s for s in lines if s.bot_name in names and s.matches >= 1]
                if len(mine) == 2:
                    return lines, mine
                await asyncio.sleep(0.2)
            raise AssertionError(f"{names} not rated on beste-boer-4: {lines}")

    lines, mine = asyncio.run(standing())
    for line in mine:
        assert line.matches == 1 and not line.house and not line.active, line
        assert abs(line.rating - (line.mu - 3 * line.sigma)) < 1e-6
    ratings = [s.rating for s in lines]
    assert ratings == sorted(ratings, reverse=True), "best first"


def test_ladder_options_need_a_ladder(server, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "bete_bot", "--server", server, "--matches", "2"],
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode == 2 and "--ladder" in out.stderr, out.stderr


def test_ctrl_c_takes_a_ladder_bot_off_the_ladder(server, tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("BETE_TOKEN", None)
    tag = uuid.uuid4().hex[:6]
    names = [f"py-sigint-{tag}", f"py-sigint-sparring-{tag}"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bete_bot", "--server", server, "--ladder", "bester-bube-4", "--bot", "random",
             "--name", name],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for name in names
    ]
    try:
        async def rated():
            async with Client(server, None) as c:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    lines = await c.standings("bester-bube-4")
                    if sum(1 for s in lines if s.bot_name in names and s.matches >= 1) == 2:
                        return
                    await asyncio.sleep(0.2)
                raise AssertionError(f"{names} never rated")

        asyncio.run(rated())
        for p in procs:
            p.send_signal(signal.SIGINT)
        outs = [p.communicate(timeout=30) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (_, stderr) in zip(procs, outs):
        assert p.returncode == 130, stderr
        assert "left ladder bester-bube-4" in stderr, stderr
        assert "stopping (Ctrl-C)" in stderr, stderr

    async def entries():
        async with Client(server, None) as c:
            return [s for s in await c.standings("bester-bube-4") if s.bot_name in names]

    lines = asyncio.run(entries())
    assert len(lines) == 2 and not any(s.active for s in lines), lines
