"""The Python binding's cost per determinized playout (docs/benchmarks.md, "bete-engine").

From a decision at the start of trick 2 of a deal (as `cargo bench -p bete-rules --bench
determinize` takes it), one Determinizer built once, then for each ruleset:

- `loop in Rust`: `d.playouts(action, N, seed)`, one call running N playouts;
- `N calls of 1`: `d.playouts(action, 1, seed)` called N times from Python;
- `view each call`: `bete_engine.playouts(view, action, 1, seed)` N times (parses the SeatView
  and builds the Determinizer every call);
- `loop in Python`: `d.sample(seed)`, then `apply` and `play_out_deal` from Python, N times.

Each figure is the fastest of three runs.

    .tools/py-venv/bin/python clients/python-engine/bench/overhead.py [N]
"""

import random
import sys
import time

import bete_engine as be
from bete.v1 import game_pb2

TABLES = [("bete", 5), ("bete-ace-high", 5), ("beast", 4), ("beste-boer", 4), ("lanterlui", 5), ("bester-bube", 4)]


def mid_deal(ruleset, seats):
    for k in range(1, 256):
        game = be.Game(ruleset, seats, seed=f"{k:02x}" * 32)
        rng = random.Random(k)
        while game.to_act is not None and game.deal == 0:
            seat = game.to_act
            view = game.view(seat)
            if game.phase == "trick" and game_pb2.SeatView.FromString(view).trick_index == 1:
                return game, seat, view
            game.apply(seat, rng.choice(game.legal_actions(seat)))
    raise SystemExit(f"no seed reaches trick 2 of {ruleset}")


def per_playout(f, n, runs=3):
    """µs per playout, the fastest of `runs` runs (the least disturbed on a shared machine)."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    print(f"| ruleset | seats | loop in Rust | {n:,} calls of 1 | overhead a call | view each call | loop in Python |")
    print("|---|---|---|---|---|---|---|")
    for ruleset, seats in TABLES:
        game, seat, view = mid_deal(ruleset, seats)
        d = be.Determinizer(view)
        action = d.legal_actions[0]

        def in_python():
            for i in range(n):
                g = d.sample(i)
                g.apply(seat, action)
                if g.to_act is not None:
                    g.play_out_deal(i)

        cells = [
            per_playout(lambda: d.playouts(action, n, 1), n),
            per_playout(lambda: [d.playouts(action, 1, i) for i in range(n)], n),
            per_playout(lambda: [be.playouts(view, action, 1, i) for i in range(n)], n),
            per_playout(in_python, n),
        ]
        cells.insert(2, cells[1] - cells[0])
        print(f"| {ruleset} | {seats} | " + " | ".join(f"{c:.1f} µs" for c in cells) + " |")


if __name__ == "__main__":
    main()
