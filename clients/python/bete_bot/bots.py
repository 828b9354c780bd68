"""Two ready bots: ``RandomBot`` and ``RuleAwareBot`` (used by ``python -m bete_bot --bot ...``)."""

from __future__ import annotations

import random
from typing import Optional

from .actions import Action, verb
from .bot import Bot
from .cards import beats, effective_suit, rank_of, ruleset_id, strength, suit_letter


class RandomBot(Bot):
    """Picks uniformly among the legal actions."""

    name = "py-random"

    def __init__(self, seed: Optional[int] = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, view) -> Action:
        return self.rng.choice(view.legal_actions)


class RuleAwareBot(Bot):
    """A simple player that knows the card order of each ruleset.

    In a trick it plays the lowest card that wins the trick so far, else its lowest card, and leads
    its highest. It declares (``play``) or stays in only with a hand of trumps and high cards,
    exchanges its weak plain cards, and passes or drops weak hands.
    """

    name = "py-rule-aware"

    def decide(self, view) -> Action:
        legal = list(view.legal_actions)
        rid = ruleset_id(view.ruleset)
        trump = suit_letter(view.trump)
        hand = list(view.hand)
        by_verb: dict[str, list[Action]] = {}
        for a in legal:
            by_verb.setdefault(verb(a), []).append(a)

        def power(c: str) -> int:
            return strength(c, trump, rid)

        def is_good(c: str) -> bool:
            # A trump, or one of the two highest ranks of a plain suit.
            if trump and effective_suit(c, trump, rid) == trump:
                return True
            top = "KQ" if rid in ("bete", "beast") else "AK"
            return rank_of(c) in top

        score = sum(1 for c in hand if is_good(c))

        if "card" in by_verb or "hidden" in by_verb:
            plays = by_verb.get("card") or by_verb["hidden"]
            trick = view.tricks[-1] if view.tricks and not view.tricks[-1].HasField("winner") else None
            shown = [p.card for p in trick.plays if p.card] if trick else []
            if not shown:
                return max(plays, key=lambda a: power(a.cards[0]))
            led = effective_suit(shown[0], trump, rid)
            best = shown[0]
            for c in shown[1:]:
                if beats(c, best, led, trump, rid):
                    best = c
            winners = [a for a in plays if beats(a.cards[0], best, led, trump, rid)]
            return min(winners or plays, key=lambda a: power(a.cards[0]))
        if "play" in by_verb or "contre" in by_verb:
            if "contre" in by_verb and score >= 4:
                return by_verb["contre"][0]
            if "play" in by_verb and score >= 3:
                return by_verb["play"][0]
            return (by_verb.get("pass") or legal)[0]
        if "discard" in by_verb:
            return min(by_verb["discard"], key=lambda a: (is_good(a.cards[0]), power(a.cards[0])))
        if "challenge" in by_verb:
            return by_verb["challenge"][0] if score >= 3 else (by_verb.get("decline") or legal)[0]
        if "drop" in by_verb and score < 2:
            return by_verb["drop"][0]
        if "exchange" in by_verb:
            weak = {c for c in hand if not is_good(c)}
            fits = [a for a in by_verb["exchange"] if set(a.cards) <= weak]
            if fits:
                return max(fits, key=lambda a: len(a.cards))
        return (by_verb.get("stand") or legal)[0]


BOTS = {"random": RandomBot, "rule_aware": RuleAwareBot}
