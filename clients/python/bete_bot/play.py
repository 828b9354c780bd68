"""Playing from a script or the command line: register, create tables with house bots, play."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Mapping, Optional, Sequence

from .auth import obtain_token
from .bot import Bot
from .bots import BOTS
from .cards import RULESET_NUMBERS, ruleset_id
from .client import Client
from .errors import BeteError
from .runner import Runner, TableState

DEFAULT_SERVER = "127.0.0.1:50051"


async def play(
    bot: Bot,
    server: str = DEFAULT_SERVER,
    *,
    ruleset: str = "bete",
    seats: int = 3,
    tables: int = 1,
    house_bots: str = "heuristic",
    join: Sequence[str] = (),
    name: Optional[str] = None,
    token: Optional[str] = None,
    token_file: Optional[Path] = None,
    mode: str = "bot",
    config: Optional[Mapping[str, str]] = None,
    decision_deadline_ms: int = 0,
) -> dict[str, TableState]:
    """Plays ``bot`` until its matches are over and returns each table's final state.

    With ``join`` it takes a free seat at each of those tables; otherwise it creates ``tables``
    tables of ``ruleset`` with ``seats`` seats, house bots (``"random"`` or ``"heuristic"``) in
    every seat but 0, and sits in seat 0. All tables play at once.
    """
    if token is None:
        token = (await obtain_token(server, name or bot.name, token_file=token_file)).token
    async with Client(server, token) as client:
        runner = Runner(client, bot, tables=(), mode=mode)
        for table_id in join:
            await client.join_table(table_id)
            runner.track(table_id)
        for _ in range(0 if join else tables):
            table = await client.create_table(
                ruleset,
                seats,
                house_bots={s: house_bots for s in range(1, seats)},
                config=config,
                decision_deadline_ms=decision_deadline_ms,
            )
            await client.join_table(table.table_id, seat=0)
            # Replay from creation so the bot's hooks see the match start and deal 0.
            runner.track(table.table_id, from_seq=table.last_seq)
        return await runner.run()


def _parse_args(argv: Optional[Sequence[str]], with_bot_choice: bool) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bete_bot", description="Play a Python bot on a bete server.")
    p.add_argument("--server", default=os.environ.get("BETE_SERVER", DEFAULT_SERVER), help="host:port")
    p.add_argument("--ruleset", default="bete", choices=sorted(RULESET_NUMBERS))
    p.add_argument("--seats", type=int, default=3)
    p.add_argument("--tables", type=int, default=1, help="tables to create and play at once")
    if with_bot_choice:
        p.add_argument("--bot", default="rule_aware", choices=sorted(BOTS))
    p.add_argument("--house-bots", default="heuristic", choices=["heuristic", "random"])
    p.add_argument("--join", action="append", default=[], metavar="TABLE_ID", help="join this table instead")
    p.add_argument("--name", help="bot name to register (default: the bot's name)")
    p.add_argument("--token-file", type=Path, help="where to keep the token (default under ~/.config/bete)")
    p.add_argument("--mode", default="bot", choices=["bot", "table"], help="one WatchBot stream or WatchTable per table")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="RULES.md section 10 key")
    p.add_argument("--deadline-ms", type=int, default=0, help="per-decision deadline (0: server default)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p.parse_args(argv)


def main(bot: Optional[Bot] = None, argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry: ``main(MyBot())`` in a script, or ``python -m bete_bot``."""
    args = _parse_args(argv, with_bot_choice=bot is None)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    if bot is None:
        bot = BOTS[args.bot]()
    config = {}
    for kv in args.config:
        key, sep, value = kv.partition("=")
        if not sep:
            print(f"--config wants KEY=VALUE, got {kv!r}", file=sys.stderr)
            return 2
        config[key] = value
    try:
        states = asyncio.run(
            play(
                bot,
                args.server,
                ruleset=args.ruleset,
                seats=args.seats,
                tables=args.tables,
                house_bots=args.house_bots,
                join=args.join,
                name=args.name,
                token_file=args.token_file,
                mode=args.mode,
                config=config,
                decision_deadline_ms=args.deadline_ms,
            )
        )
    except BeteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    for table_id, st in states.items():
        mine = st.balances[st.seat] if st.seat is not None and st.seat < len(st.balances) else None
        print(
            f"table {table_id}: seat {st.seat}, balance {mine:+d}, balances {st.balances}, "
            f"{st.decisions} decisions, {st.illegal} refused"
            if mine is not None
            else f"table {table_id}: unfinished"
        )
    return 0


__all__ = ["play", "main", "ruleset_id"]
