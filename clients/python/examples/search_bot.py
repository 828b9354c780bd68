"""A bot that searches with the referee's own rules engine (``pip install 'bete-bot[engine]'``).

For each decision it samples deals that agree with everything its view shows (its hand, the
cards played, the voids revealed), plays every legal action out to the deal's settlement on
each sample with random play after it (the loop runs in Rust), and takes the action that won
the most jetons on average.

    python clients/python/examples/search_bot.py --server 127.0.0.1:50051 --ruleset beast --seats 3
"""

import random
import time
from collections import defaultdict

import bete_engine

from bete_bot import Bot, main


class SearchBot(Bot):
    name = "py-search"

    def __init__(self, samples=100, seed=None, config=None):
        self.samples = samples  # sampled deals a decision; every legal action is tried on each
        self.rng = random.Random(seed)
        self.config = config  # the table's config (GetTable), if not the ruleset's defaults
        self.events = defaultdict(list)  # this deal's events per table: what we set aside, drew
        self.searched = self.fallbacks = 0

    def on_event(self, table_id, event):
        if event.HasField("deal_started"):
            self.events[table_id].clear()
        self.events[table_id].append(event)

    def decide(self, view):
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        try:
            search = bete_engine.Determinizer(view, self.config, self.events[view.table_id])
            # Use at most half the time left before the deadline (the server then plays for us).
            left_ms = view.deadline.ToMilliseconds() - time.time() * 1000 if view.HasField("deadline") else 1e6
            # (action, mean jetons) in the view's order of legal actions.
            scores = search.evaluate(self.samples, self.rng.getrandbits(64), max_ms=min(max(left_ms / 2, 1), 60_000))
        except bete_engine.EngineError as e:
            # A view the engine cannot search from: every legal action is still legal.
            print(f"search_bot: {e}; playing the first legal action")
            self.fallbacks += 1
            return legal[0]
        self.searched += 1
        best = max(range(len(legal)), key=lambda i: scores[i][1])
        return legal[best]

    def on_match_end(self, table_id, ended):
        print(f"{table_id} final balances {list(ended.balances)}")


if __name__ == "__main__":
    raise SystemExit(main(SearchBot()))
