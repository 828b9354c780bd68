"""Token handling and the command-line entry points, run as a user would."""

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bete_bot import Client
from bete_bot.auth import obtain_token

pytestmark = pytest.mark.timeout(90)
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_token_is_registered_saved_and_reused(server, tmp_path, monkeypatch):
    monkeypatch.delenv("BETE_TOKEN", raising=False)
    path = tmp_path / "tok.json"

    async def scenario():
        first = await obtain_token(server, "py-token", token_file=path)
        second = await obtain_token(server, "py-token", token_file=path)
        monkeypatch.setenv("BETE_TOKEN", first.token)
        from_env = await obtain_token(server, "ignored", token_file=tmp_path / "other.json")
        async with Client(server, from_env.token) as c:
            await c.list_tables()  # the token works
        return first, second, from_env

    first, second, from_env = asyncio.run(scenario())
    assert first.source == "RegisterBot" and first.bot_id
    assert second.source == str(path) and (second.bot_id, second.token) == (first.bot_id, first.token)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["token"] == first.token
    assert from_env.source == "BETE_TOKEN" and not (tmp_path / "other.json").exists()


def test_saved_token_unknown_to_the_server_is_replaced(server, tmp_path, monkeypatch):
    monkeypatch.delenv("BETE_TOKEN", raising=False)
    path = tmp_path / "tok.json"
    path.write_text(json.dumps({"token": "stale-token", "bot_id": "gone"}))
    creds = asyncio.run(obtain_token(server, "py-token", token_file=path))
    assert creds.source == "RegisterBot" and creds.token != "stale-token"
    assert json.loads(path.read_text())["token"] == creds.token


def _run(args, tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("BETE_TOKEN", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=80, env=env)


def test_python_m_bete_bot_plays_several_tables(server, tmp_path):
    args = ["-m", "bete_bot", "--server", server, "--ruleset", "beast", "--seats", "3", "--tables", "2",
            "--bot", "rule_aware", "--house-bots", "heuristic"]
    first = _run(args, tmp_path)
    assert first.returncode == 0, first.stderr
    lines = [line for line in first.stdout.splitlines() if line.startswith("table ")]
    assert len(lines) == 2 and all("balance" in line and "0 refused" in line for line in lines), first.stdout
    saved = list((tmp_path / "config" / "bete" / "tokens").rglob("*.json"))
    assert len(saved) == 1, "the registered token was saved"
    again = _run(args[:-6] + ["--tables", "1"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert list((tmp_path / "config" / "bete" / "tokens").rglob("*.json")) == saved
    assert json.loads(saved[0].read_text())["token"]


@pytest.mark.parametrize("script", ["random_bot.py", "rule_aware_bot.py"])
def test_example_bots_run(server, tmp_path, script):
    out = _run([str(EXAMPLES / script), "--server", server, "--ruleset", "bester-bube", "--seats", "4"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert any(line.startswith("table ") for line in out.stdout.splitlines()), out.stdout
    assert "unfinished" not in out.stdout, out.stdout


def test_python_m_bete_bot_joins_an_existing_table(server, tmp_path):
    async def create():
        from helpers import new_client

        client = await new_client(server, "py-host")
        async with client:
            t = await client.create_table("bete-ace-high", 3, house_bots={0: "heuristic", 2: "random"})
            return t.table_id

    table_id = asyncio.run(create())
    out = _run(["-m", "bete_bot", "--server", server, "--join", table_id, "--bot", "random", "--name", "py-joiner",
                "--token-file", str(tmp_path / "joiner.json")], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"table {table_id}: seat 1, balance "), out.stdout
    assert (tmp_path / "joiner.json").exists()
