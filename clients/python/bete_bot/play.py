"""Playing from a script or the command line: register, create tables with house bots (or enter a
ladder), play."""

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
    tables of ``ruleset`` with ``seats`` seats, house bots (``"random"``, ``"heuristic"``,
    ``"search"`` or ``"search:<ms>"``) in every seat but 0, and sits in seat 0. All tables play at once.
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


async def play_ladder(
    bot: Bot,
    ladder: str,
    server: str = DEFAULT_SERVER,
    *,
    capacity: int = 1,
    matches: Optional[int] = None,
    name: Optional[str] = None,
    token: Optional[str] = None,
    token_file: Optional[Path] = None,
    log_to=sys.stderr,
    exclusive: bool = False,
) -> dict[str, TableState]:
    """Enters ``bot`` in ``ladder`` and plays the tables the ladder's scheduler seats it at.

    The scheduler seats only bots holding a WatchBot stream; ladder tables then arrive on that
    stream like any table, so the ordinary :class:`Runner` plays them. Plays until cancelled
    (Ctrl-C), or with ``matches`` until that many tables have ended: once seated at that many,
    the bot leaves the ladder (no more are scheduled for it) and finishes them. It always leaves
    the ladder on the way out; its results count and stay on the leaderboard. ``exclusive``:
    be the only process playing this bot (see :class:`Runner`).
    """
    if token is None:
        token = (await obtain_token(server, name or bot.name, token_file=token_file)).token
    async with Client(server, token) as client:
        found = (await client.get_ladder(ladder)).ladder
        try:
            entry = await client.enter_ladder(ladder, capacity)
        except BeteError as e:
            if e.reason != "LADDER_ALREADY_ENTERED":
                raise
            entry = (await client.get_ladder(ladder)).entry
            print("the bot had already entered this ladder; playing on", file=log_to)
        print(
            f"entered ladder {ladder} ({found.seat_count} seats, {found.deals_per_match} deals per match"
            f"{', duplicate sets' if found.duplicate else ''}) as bot {entry.bot_id} with capacity "
            f"{entry.capacity}; waiting for the scheduler to seat it",
            file=log_to,
        )
        over = 0

        def seated(msg) -> None:
            where = f", ladder {msg.table.ladder_id}" if msg.table.ladder_id else ""
            print(f"seated at table {msg.table_id} (seat {msg.seat}{where})", file=log_to)

        def ended(st: TableState) -> None:
            nonlocal over
            over += 1
            of = f"/{matches}" if matches is not None else ""
            mine = st.balances[st.seat] if st.seat is not None and st.seat < len(st.balances) else 0
            print(f"table {over}{of} over: {st.table_id} seat {st.seat} finished {mine:+d} (balances {st.balances})",
                  file=log_to)

        runner = Runner(
            client,
            bot,
            tables=None,
            mode="bot",
            max_matches=matches,
            on_seated=seated,
            on_over=ended,
            exclusive=exclusive,
        )
        left = False

        async def leave() -> None:
            nonlocal left
            if left:
                return
            left = True
            try:
                await client.leave_ladder(ladder)
                print(f"left ladder {ladder}", file=log_to)
            except BeteError as e:
                print(f"could not leave ladder {ladder}: {e}", file=log_to)

        async def leave_when_seated_enough() -> None:
            # Every table the runner has seen is one the bot was seated at.
            while matches is not None and len(runner.tables) < matches:
                await asyncio.sleep(0.1)
            await leave()

        watcher = asyncio.ensure_future(leave_when_seated_enough()) if matches is not None else None
        try:
            return await runner.run()
        except asyncio.CancelledError:
            print("stopping (Ctrl-C)", file=log_to)
            raise
        finally:
            if watcher is not None:
                watcher.cancel()
            await leave()


def _parse_args(argv: Optional[Sequence[str]], with_bot_choice: bool) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bete_bot", description="Play a Python bot on a bete server.")
    p.add_argument(
        "--server", default=os.environ.get("BETE_SERVER", DEFAULT_SERVER), help="host:port, or https://host:port for TLS"
    )
    env = os.environ.get
    p.add_argument("--tls", action="store_true", help="connect over TLS (env BETE_TLS=1)")
    p.add_argument("--ca-cert", default=env("BETE_CA_CERT"), help="PEM CA to trust instead of the system's (implies --tls)")
    p.add_argument("--client-cert", default=env("BETE_CLIENT_CERT"), help="PEM client certificate (implies --tls)")
    p.add_argument("--client-key", default=env("BETE_CLIENT_KEY"), help="PEM key of --client-cert")
    p.add_argument("--tls-domain", default=env("BETE_TLS_DOMAIN"), help="name to verify in the server's certificate")
    p.add_argument("--ruleset", default="bete", choices=sorted(RULESET_NUMBERS))
    p.add_argument("--seats", type=int, default=3)
    p.add_argument("--tables", type=int, default=1, help="tables to create and play at once")
    p.add_argument("--ladder", metavar="LADDER_ID", help="play on this ladder instead (e.g. beste-boer-4)")
    p.add_argument("--capacity", type=int, default=1, help="with --ladder: ladder tables to play at once")
    p.add_argument(
        "--matches", type=int, help="with --ladder: stop after this many ladder tables (default: until Ctrl-C)"
    )
    p.add_argument(
        "--exclusive",
        action="store_true",
        help="with --ladder: be the only process playing this bot (the server ends its other "
        "WatchBot streams with STREAM_REPLACED, and this one stops if a later process does the same)",
    )
    if with_bot_choice:
        p.add_argument("--bot", default="rule_aware", choices=sorted(BOTS))
        p.add_argument(
            "--policy",
            metavar="MODULE:FUNCTION",
            help="play this callable from the view to an action (an action id, its text or an Action) instead of --bot",
        )
    p.add_argument("--house-bots", default="heuristic", help="heuristic, random, search or search:<ms>")
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
    if bot is None and getattr(args, "policy", None):
        from .policy import PolicyBot, PolicyError, load_policy

        try:
            bot = PolicyBot(load_policy(args.policy), name=args.name or "py-policy")
        except PolicyError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if bot is None:
        bot = BOTS[args.bot]()
    # The TLS flags become the BETE_TLS* variables of this process, which every connection of
    # the SDK reads (bete_bot.tls.Tls.from_env).
    for var, value in (
        ("BETE_TLS", "1" if args.tls else None),
        ("BETE_CA_CERT", args.ca_cert),
        ("BETE_CLIENT_CERT", args.client_cert),
        ("BETE_CLIENT_KEY", args.client_key),
        ("BETE_TLS_DOMAIN", args.tls_domain),
    ):
        if value:
            os.environ[var] = value
    config = {}
    for kv in args.config:
        key, sep, value = kv.partition("=")
        if not sep:
            print(f"--config wants KEY=VALUE, got {kv!r}", file=sys.stderr)
            return 2
        config[key] = value
    if args.ladder is None and (args.matches is not None or args.capacity != 1 or args.exclusive):
        print("--capacity, --matches and --exclusive go with --ladder", file=sys.stderr)
        return 2
    try:
        if args.ladder is not None:
            states = asyncio.run(
                play_ladder(
                    bot,
                    args.ladder,
                    args.server,
                    capacity=args.capacity,
                    matches=args.matches,
                    name=args.name,
                    token_file=args.token_file,
                    exclusive=args.exclusive,
                )
            )
            _print_states(states)
            print(f"see the leaderboard with `bete ladder standings {args.ladder}`")
            return 0
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
    _print_states(states)
    return 0


def _print_states(states: Mapping[str, TableState]) -> None:
    for table_id, st in states.items():
        mine = st.balances[st.seat] if st.seat is not None and st.seat < len(st.balances) else None
        print(
            f"table {table_id}: seat {st.seat}, balance {mine:+d}, balances {st.balances}, "
            f"{st.decisions} decisions, {st.illegal} refused"
            if mine is not None
            else f"table {table_id}: unfinished"
        )


__all__ = ["play", "play_ladder", "main", "ruleset_id"]
