#!/usr/bin/env python3
"""Summarizes bete-load JSON reports: per case, the median of its runs and the spread (min-max),
naming how the runs submitted moves (reports from before `--submit` existed used unary calls).

usage: summarize.py DIR [CASE ...]   (reports are DIR/CASE.runN.json)
"""
import glob
import json
import os
import statistics
import sys


def pick(r, path):
    for k in path.split("."):
        if r is None:
            return None
        r = r.get(k)
    return r


COLUMNS = [
    ("moves/s", "moves_per_s", 0),
    ("events/s", "events_per_s", 0),
    ("ack p50 ms", "latency_ms.submit_to_ack.p50", 2),
    ("ack p99 ms", "latency_ms.submit_to_ack.p99", 2),
    ("ack p99.9 ms", "latency_ms.submit_to_ack.p999", 1),
    ("every-seat p99 ms", "latency_ms.submit_to_event_at_every_seat.p99", 2),
    ("ceiling rps", "ceiling_rps", 0),
    ("ratio", "ratio_to_ceiling", 3),
    ("server µs/move", "server_cpu_us_per_move", 1),
    ("server cores", "server_cores_busy", 2),
    ("harness cores", "harness_cores_busy", 2),
    ("peak RSS MiB", "server_peak_rss_kib", 1),
    ("KiB/table", "server_rss_per_table_kib", 1),
    ("errors", "errors.total", 0),
    ("gaps", "stream.event_gaps", 0),
]


def fmt(v, digits):
    return f"{v:,.{digits}f}"


def main():
    d = sys.argv[1]
    cases = sys.argv[2:] or sorted({os.path.basename(p).split(".run")[0] for p in glob.glob(f"{d}/*.run*.json")})
    print("| case | runs | " + " | ".join(c[0] for c in COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for case in cases:
        reports = [json.load(open(p)) for p in sorted(glob.glob(f"{d}/{case}.run*.json"))]
        if not reports:
            continue
        cells = []
        for _, path, digits in COLUMNS:
            vals = [pick(r, path) for r in reports]
            vals = [v / 1024 if path == "server_peak_rss_kib" and v is not None else v for v in vals]
            vals = [v for v in vals if v is not None]
            if not vals:
                cells.append("n/a")
                continue
            med = statistics.median(vals)
            if len(vals) > 1 and min(vals) != max(vals):
                cells.append(f"{fmt(med, digits)} ({fmt(min(vals), digits)}–{fmt(max(vals), digits)})")
            else:
                cells.append(fmt(med, digits))
        submits = sorted({r.get("submit") or "unary" for r in reports})
        print(f"| {case} ({'/'.join(submits)}) | {len(reports)} | " + " | ".join(cells) + " |")
    loads = [pick(json.load(open(p)), "machine.load_1m_at_start") for p in glob.glob(f"{d}/*.run*.json")]
    loads = [x for x in loads if x is not None]
    if loads:
        print(f"\nMachine 1-minute load at the start of the runs: {min(loads):.2f}–{max(loads):.2f}.")


if __name__ == "__main__":
    main()
