"""A rule-aware bot: plays the lowest card that wins the trick, else its lowest; declares or stays
in only with trumps and high cards; exchanges weak cards; passes or drops weak hands.

The policy is ``bete_bot.bots.RuleAwareBot`` (so ``python -m bete_bot --bot rule_aware`` plays it
too); this script shows how to run it, e.g. at four tables at once:

    python clients/python/examples/rule_aware_bot.py --server 127.0.0.1:50051 --ruleset lanterlui --seats 4 --tables 4
"""

from bete_bot import RuleAwareBot, main

if __name__ == "__main__":
    raise SystemExit(main(RuleAwareBot()))
