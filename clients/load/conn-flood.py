#!/usr/bin/env python3
"""Connection flood from one loopback address while fresh clients from another probe (issue 26).

From --attacker (127.0.0.2): --per-kind connections of each kind, each reopened as soon as the
server closes it: raw idle TCP and idle HTTP/2 (preface, SETTINGS, answers every PING, opens no
stream) to the gRPC port, idle HTTP/1.1 keep-alive (one GET, then silence) to the web port.
From 127.0.0.1, every --probe-every seconds: a fresh connection making a real gRPC call
(grpc.health.v1.Health/Check over HTTP/2, HPACK literals) and a fresh GET / of the page.
Prints the share of probes served. Bounded by --duration; standard library only.
"""

import argparse
import asyncio
import json
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\0\0\0\x04\0\0\0\0\0"
SETTINGS_ACK = b"\0\0\0\x04\x01\0\0\0\0"


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    # Literal header field without indexing, new name, no Huffman.
    name, value = name.encode(), value.encode()
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


async def read_frame(r):
    head = await r.readexactly(9)
    n = int.from_bytes(head[:3], "big")
    return head[3], head[4], int.from_bytes(head[5:9], "big") & 0x7FFFFFFF, await r.readexactly(n)


async def dial(host, port, src):
    return await asyncio.open_connection(host, port, local_addr=(src, 0) if src else None)


class Stats:
    def __init__(self):
        self.opened = {"tcp": 0, "h2": 0, "h1": 0}
        self.probes = {"grpc": [0, 0], "web": [0, 0]}


async def hold(kind, host, port, src, stats, stop):
    """One attacker slot: keep a connection of `kind` open, reopening it whenever it closes."""
    while not stop.is_set():
        try:
            r, w = await dial(host, port, src)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        stats.opened[kind] += 1
        try:
            if kind == "h2":
                w.write(PREFACE + SETTINGS)
                await w.drain()
                while not stop.is_set():
                    t, flags, _, payload = await read_frame(r)
                    if t == 4 and not flags & 1:
                        w.write(SETTINGS_ACK)
                    elif t == 6 and not flags & 1:
                        w.write(frame(6, 1, 0, payload))
                    await w.drain()
            elif kind == "h1":
                w.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                await w.drain()
                while not stop.is_set() and await r.read(65536):
                    pass
            else:
                while not stop.is_set() and await r.read(65536):
                    pass
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            w.close()
        await asyncio.sleep(0.01)


async def grpc_probe(host, port):
    r, w = await dial(host, port, "127.0.0.1")
    try:
        headers = (
            literal(":method", "POST") + literal(":scheme", "http") + literal(":path", "/grpc.health.v1.Health/Check")
            + literal(":authority", f"{host}:{port}") + literal("content-type", "application/grpc") + literal("te", "trailers")
        )
        w.write(PREFACE + SETTINGS + frame(1, 4, 1, headers) + frame(0, 1, 1, b"\0\0\0\0\0"))
        await w.drain()
        got_data = False
        while True:
            t, flags, stream, payload = await read_frame(r)
            if t == 4 and not flags & 1:
                w.write(SETTINGS_ACK)
            elif t == 0 and stream == 1 and len(payload) >= 5:
                got_data = True
            elif t == 1 and stream == 1 and flags & 1:
                return got_data
            elif t in (3, 7):
                return False
    finally:
        w.close()


async def web_probe(host, port):
    r, w = await dial(host, port, "127.0.0.1")
    try:
        w.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await w.drain()
        return (await r.readline()).startswith(b"HTTP/1.1 200")
    finally:
        w.close()


async def probe_loop(kind, host, port, every, stats, stop):
    fn = grpc_probe if kind == "grpc" else web_probe
    while not stop.is_set():
        stats.probes[kind][1] += 1
        try:
            if await asyncio.wait_for(fn(host, port), 5):
                stats.probes[kind][0] += 1
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            pass
        await asyncio.sleep(every)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--grpc", required=True)
    p.add_argument("--web", required=True)
    p.add_argument("--attacker", default="127.0.0.2")
    p.add_argument("--per-kind", type=int, default=1000)
    p.add_argument("--duration", type=float, default=60)
    p.add_argument("--warmup", type=float, default=5)
    p.add_argument("--probe-every", type=float, default=0.2)
    a = p.parse_args()
    gh, gp = a.grpc.rsplit(":", 1)
    wh, wp = a.web.rsplit(":", 1)
    stats, stop = Stats(), asyncio.Event()
    tasks = []
    for _ in range(a.per_kind):
        tasks.append(asyncio.create_task(hold("tcp", gh, int(gp), a.attacker, stats, stop)))
        tasks.append(asyncio.create_task(hold("h2", gh, int(gp), a.attacker, stats, stop)))
        tasks.append(asyncio.create_task(hold("h1", wh, int(wp), a.attacker, stats, stop)))
    await asyncio.sleep(a.warmup)
    probe_stats = Stats()
    probes = [
        asyncio.create_task(probe_loop("grpc", gh, int(gp), a.probe_every, probe_stats, stop)),
        asyncio.create_task(probe_loop("web", wh, int(wp), a.probe_every, probe_stats, stop)),
    ]
    started = time.monotonic()
    await asyncio.sleep(a.duration)
    stop.set()
    for t in tasks + probes:
        t.cancel()
    await asyncio.gather(*tasks, *probes, return_exceptions=True)
    out = {
        "attacker": a.attacker,
        "per_kind": a.per_kind,
        "seconds": round(time.monotonic() - started, 1),
        "attacker_connections_opened": stats.opened,
        "grpc_served": f"{probe_stats.probes['grpc'][0]}/{probe_stats.probes['grpc'][1]}",
        "web_served": f"{probe_stats.probes['web'][0]}/{probe_stats.probes['web'][1]}",
    }
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
