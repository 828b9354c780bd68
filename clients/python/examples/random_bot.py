"""A complete bete bot: it plays a random legal action, counting its winnings.

    pip install -e clients/python
    python clients/python/examples/random_bot.py --server 127.0.0.1:50051 --ruleset bete --seats 3
"""

import random

from bete_bot import Bot, main


class RandomBot(Bot):
    name = "my-random-bot"

    def decide(self, view):
        # view.hand, view.tricks, view.trump, view.pools ... and what we may do now:
        return random.choice(view.legal_actions)

    def on_deal_end(self, table_id, settled):
        print(f"{table_id} deal {settled.deal}: net {list(settled.net)}")

    def on_match_end(self, table_id, ended):
        print(f"{table_id} final balances {list(ended.balances)}")


if __name__ == "__main__":
    raise SystemExit(main(RandomBot()))
