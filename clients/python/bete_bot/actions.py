"""Builders and the RULES.md 11.3 text form of ``bete.v1.Action``.

``card("KS")``, ``stand()``, ``exchange("7H", "8C")`` build the protobuf message a bot returns from
``decide``; :func:`parse_action` and :func:`action_text` convert between it and the text form used
by records and logs (``"exchange 7H 8C"``), lower-case verbs and upper-case cards on output.
"""

from __future__ import annotations

from typing import Any

from bete.v1 import cards_pb2

from .cards import CardError, normalize

Action = cards_pb2.Action
ActionKind = cards_pb2.ActionKind

#: Verb text -> ActionKind, and the number of cards the verb takes (min, max).
VERBS: dict[str, tuple[Any, tuple[int, int]]] = {
    "pass": (cards_pb2.ACTION_KIND_PASS, (0, 0)),
    "play": (cards_pb2.ACTION_KIND_PLAY, (0, 0)),
    "contre": (cards_pb2.ACTION_KIND_CONTRE, (0, 0)),
    "drop": (cards_pb2.ACTION_KIND_DROP, (0, 0)),
    "stand": (cards_pb2.ACTION_KIND_STAND, (0, 0)),
    "exchange": (cards_pb2.ACTION_KIND_EXCHANGE, (1, 5)),
    "discard": (cards_pb2.ACTION_KIND_DISCARD, (1, 1)),
    "challenge": (cards_pb2.ACTION_KIND_CHALLENGE, (0, 0)),
    "decline": (cards_pb2.ACTION_KIND_DECLINE, (0, 0)),
    "card": (cards_pb2.ACTION_KIND_CARD, (1, 1)),
    "hidden": (cards_pb2.ACTION_KIND_HIDDEN, (1, 1)),
    "widow": (cards_pb2.ACTION_KIND_WIDOW, (0, 0)),
    "general": (cards_pb2.ACTION_KIND_GENERAL, (0, 0)),
}
_VERB_OF_KIND = {kind: verb for verb, (kind, _) in VERBS.items()}


class ActionError(ValueError):
    """Text or a message that is not a well-formed action; the message says why."""


def _build(verb: str, cards: tuple[str, ...]) -> Action:
    kind, (lo, hi) = VERBS[verb]
    if not lo <= len(cards) <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise ActionError(f"{verb} takes {want} card(s), got {len(cards)}")
    try:
        codes = [normalize(c) for c in cards]
    except CardError as e:
        raise ActionError(str(e)) from None
    if len(set(codes)) != len(codes):
        raise ActionError(f"{verb}: repeated card in {' '.join(codes)}")
    return Action(kind=kind, cards=codes, text=" ".join([verb, *codes]))


def pass_() -> Action:
    """Bête bidding: decline to declare."""
    return _build("pass", ())


def play() -> Action:
    """Bête bidding: *je joue*, become the declarer."""
    return _build("play", ())


def contre() -> Action:
    """Bête bidding: double against the declarer."""
    return _build("contre", ())


def drop() -> Action:
    """Exchange games: drop out of this deal."""
    return _build("drop", ())


def stand() -> Action:
    """Exchange games: stay in and exchange nothing this turn."""
    return _build("stand", ())


def exchange(*cards: str) -> Action:
    """Exchange games: set one to five cards aside and draw as many."""
    return _build("exchange", cards)


def discard(c: str) -> Action:
    """Dealer after round 2: take up the turn-up and discard this card."""
    return _build("discard", (c,))


def challenge() -> Action:
    """Lanterlui: a dropped seat plays against the dealer."""
    return _build("challenge", ())


def decline() -> Action:
    """Lanterlui: a dropped seat lets the dealer take the pot."""
    return _build("decline", ())


def card(c: str) -> Action:
    """Play this card face up to the current trick."""
    return _build("card", (c,))


def hidden(c: str) -> Action:
    """Lead this card face down announcing "Trumpf!"."""
    return _build("hidden", (c,))


def widow() -> Action:
    """Rams: give up the hand and take the widow (RA6)."""
    return _build("widow", ())


def general() -> Action:
    """Rams: announce General Rams, undertaking all five tricks (RA6)."""
    return _build("general", ())


def parse_action(text: str) -> Action:
    """Parses the text form (``"card KS"``, case-insensitive, single spaces) into an Action."""
    if not isinstance(text, str) or not text or text != text.strip() or "  " in text:
        raise ActionError(f"not an action: {text!r} (verb and cards separated by single spaces)")
    verb, *cards = text.split(" ")
    verb = verb.lower()
    if verb not in VERBS:
        raise ActionError(f"unknown verb {verb!r} in {text!r}")
    return _build(verb, tuple(cards))


def action_text(action: Action) -> str:
    """The canonical text form of an Action, built from ``kind`` and ``cards`` (``text`` is ignored)."""
    verb = _VERB_OF_KIND.get(action.kind)
    if verb is None:
        raise ActionError(f"action without a known kind: {action.kind}")
    return _build(verb, tuple(action.cards)).text


def same_action(a: Action, b: Action) -> bool:
    """True when two actions are the same decision (same kind and the same set of cards)."""
    return a.kind == b.kind and sorted(normalize(c) for c in a.cards) == sorted(normalize(c) for c in b.cards)


def verb(action: Action) -> str:
    """The verb of an action (``"card"``)."""
    return _VERB_OF_KIND.get(action.kind, "unspecified")
