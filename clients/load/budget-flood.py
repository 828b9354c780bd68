"""The budget flood of issue 26 (docs/security.md, "Measured: one address's budget flood").

One address (127.0.0.1, IPv4) floods the server with bot registrations, account creations and
waiting tables for --duration seconds, as fast as it is answered, while a normal bot on another
address ([::1], IPv6) plays whole matches against two house bots. Measured: the server's
resident memory (from /proc/PID/status) before and during the flood, and the normal bot's
submit -> acknowledgement p99 before the flood (the baseline) and during it. Prints one line per
phase and a summary against the targets (at most 64 MiB of growth, p99 within 2x the baseline).

Bounded: --baseline + --duration seconds plus a few of set-up. Run by budget-flood.sh.
"""

import argparse
import asyncio
import itertools
import time
from collections import Counter

import grpc

from bete.v1 import (
    account_service_pb2 as acc,
    account_service_pb2_grpc as acc_grpc,
    bot_service_pb2 as bot,
    bot_service_pb2_grpc as bot_grpc,
    cards_pb2,
    table_pb2,
    table_service_pb2 as ts,
    table_service_pb2_grpc as ts_grpc,
)
from bete_bot.errors import BeteError


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def bearer(token: str):
    return (("authorization", f"Bearer {token}"),)


def why(err: grpc.RpcError) -> str:
    e = BeteError.from_rpc_error(err)
    return f"{e.code.name} {e.reason}".strip()


class Flood:
    """The attacker: registrations, accounts and waiting tables from one address."""

    def __init__(self, target: str):
        self.channel = grpc.aio.insecure_channel(target)
        self.bots = bot_grpc.BotServiceStub(self.channel)
        self.accounts = acc_grpc.AccountServiceStub(self.channel)
        self.tables = ts_grpc.TableServiceStub(self.channel)
        self.done = Counter()
        self.refused = Counter()
        self.tokens: list[str] = []

    async def register(self, stop: asyncio.Event, n: itertools.count):
        while not stop.is_set():
            try:
                r = await self.bots.RegisterBot(bot.RegisterBotRequest(name=f"flood{next(n)}"))
                self.tokens.append(r.token)
                self.done["bots"] += 1
            except grpc.RpcError as e:
                self.refused[f"RegisterBot {why(e)}"] += 1

    async def account(self, stop: asyncio.Event, n: itertools.count):
        while not stop.is_set():
            try:
                await self.accounts.CreateAccount(acc.CreateAccountRequest(name=f"flood{next(n)}"))
                self.done["accounts"] += 1
            except grpc.RpcError as e:
                self.refused[f"CreateAccount {why(e)}"] += 1

    async def waiting(self, stop: asyncio.Event, k: int):
        while not stop.is_set():
            if not self.tokens:
                await asyncio.sleep(0.01)
                continue
            token = self.tokens[k % len(self.tokens)]
            k += 7
            try:
                await self.tables.CreateTable(
                    ts.CreateTableRequest(ruleset=cards_pb2.RULESET_BETE, seats=5),
                    metadata=bearer(token),
                )
                self.done["waiting tables"] += 1
            except grpc.RpcError as e:
                self.refused[f"CreateTable {why(e)}"] += 1


class Player:
    """The normal bot: whole matches against two house bots, timing each submit."""

    def __init__(self, target: str):
        self.channel = grpc.aio.insecure_channel(target)
        self.tables = ts_grpc.TableServiceStub(self.channel)
        self.bots = bot_grpc.BotServiceStub(self.channel)
        self.samples: list[float] = []
        self.errors = Counter()

    async def run(self, stop: asyncio.Event):
        token = (await self.bots.RegisterBot(bot.RegisterBotRequest(name="steady"))).token
        md = bearer(token)
        n = itertools.count()
        while not stop.is_set():
            house = [
                table_pb2.HouseBotSeat(seat=s, policy=table_pb2.HOUSE_BOT_POLICY_HEURISTIC)
                for s in (1, 2)
            ]
            t = await self.tables.CreateTable(
                ts.CreateTableRequest(
                    ruleset=cards_pb2.RULESET_BETE, seats=3, house_bots=house, config={"rounds": "1"}
                ),
                metadata=md,
            )
            tid = t.table.table_id
            await self.tables.JoinTable(ts.JoinTableRequest(table_id=tid, seat=0), metadata=md)
            while not stop.is_set():
                v = (await self.tables.GetSeatView(ts.GetSeatViewRequest(table_id=tid), metadata=md)).view
                if v.match_over:
                    break
                if not v.HasField("to_act") or v.to_act != 0 or not v.legal_actions:
                    await asyncio.sleep(0.005)
                    continue
                req = ts.SubmitActionRequest(
                    table_id=tid,
                    action=v.legal_actions[0],
                    expected_seq=v.seq,
                    request_id=f"steady-{next(n)}",
                )
                t0 = time.perf_counter()
                try:
                    await self.tables.SubmitAction(req, metadata=md)
                    self.samples.append((time.perf_counter() - t0) * 1000)
                except grpc.RpcError as e:
                    self.errors[why(e)] += 1

    def p99(self) -> float:
        s = sorted(self.samples)
        return s[min(len(s) - 1, int(len(s) * 0.99))] if s else float("nan")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--baseline", type=float, default=30)
    ap.add_argument("--duration", type=float, default=300)
    ap.add_argument("--workers", type=int, default=8, help="concurrent calls per flood kind")
    a = ap.parse_args()

    # The normal bot over IPv6, the flood over IPv4: two addresses, each with its own share.
    player = Player(f"[::1]:{a.port}")
    flood = Flood(f"127.0.0.1:{a.port}")

    stop_play = asyncio.Event()
    play = asyncio.create_task(player.run(stop_play))
    await asyncio.sleep(a.baseline)
    base = list(player.samples)
    player.samples.clear()
    rss0 = rss_kib(a.pid)
    base_p99 = sorted(base)[min(len(base) - 1, int(len(base) * 0.99))] if base else float("nan")
    print(f"baseline: {len(base)} moves, p99 {base_p99:.1f} ms, server RSS {rss0 / 1024:.1f} MiB", flush=True)

    stop = asyncio.Event()
    names = itertools.count()
    accounts = itertools.count()
    tasks = [asyncio.create_task(flood.register(stop, names)) for _ in range(a.workers)]
    tasks += [asyncio.create_task(flood.account(stop, accounts)) for _ in range(a.workers)]
    tasks += [asyncio.create_task(flood.waiting(stop, k)) for k in range(a.workers)]
    started = time.monotonic()
    peak = rss0
    while time.monotonic() - started < a.duration:
        await asyncio.sleep(5)
        now = rss_kib(a.pid)
        peak = max(peak, now)
        print(
            f"  t={time.monotonic() - started:5.0f}s RSS {now / 1024:6.1f} MiB; done {dict(flood.done)}; "
            f"refused {sum(flood.refused.values())}",
            flush=True,
        )
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    flood_p99 = player.p99()
    moves = len(player.samples)
    stop_play.set()
    play.cancel()
    await asyncio.gather(play, return_exceptions=True)
    end = rss_kib(a.pid)
    growth = (peak - rss0) / 1024
    print(f"flood: {a.duration:.0f} s; done {dict(flood.done)}")
    for k, v in flood.refused.most_common():
        print(f"  refused {v:8d} x {k}")
    print(f"normal bot during the flood: {moves} moves, p99 {flood_p99:.1f} ms, errors {dict(player.errors)}")
    print(
        f"server RSS: {rss0 / 1024:.1f} MiB before, peak {peak / 1024:.1f} MiB, end {end / 1024:.1f} MiB: "
        f"growth {growth:.1f} MiB (target <= 64)"
    )
    ratio = flood_p99 / base_p99 if base_p99 > 0 else float("nan")
    print(f"p99 ratio flood/baseline: {ratio:.2f} (target <= 2)")
    print(f"budget-flood: {'met' if growth <= 64 and ratio <= 2 else 'NOT met'}")


if __name__ == "__main__":
    asyncio.run(main())
