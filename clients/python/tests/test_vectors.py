"""The shared records in <repo>/tests/vectors: card codes and actions round-trip through the
protobuf Action message identically (text -> proto -> bytes -> proto -> text)."""

import json

import pytest

from bete.v1 import cards_pb2
from bete_bot.actions import action_text, parse_action
from bete_bot.cards import normalize, ruleset_id

from conftest import VECTORS

RECORDS = sorted(VECTORS.glob("*.record.json"))


def test_vectors_are_present():
    assert RECORDS, f"no *.record.json under {VECTORS}"


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_record_round_trips(path):
    record = json.loads(path.read_text())
    assert record["format"] == "bete-record/1"
    ruleset_id(record["ruleset"])  # a known ruleset id
    n_actions = 0
    for deal in record.get("deals", []):
        deck = deal.get("deck", [])
        for code in deck:
            assert normalize(code) == code, f"{path.name}: deck card {code!r} is not canonical"
        assert len(set(deck)) == len(deck), f"{path.name}: a card twice in a deck"
        for entry in deal["actions"]:
            text = entry["action"]
            msg = parse_action(text)
            wire = cards_pb2.Action(kind=msg.kind, cards=list(msg.cards)).SerializeToString()
            back = cards_pb2.Action.FromString(wire)
            assert action_text(back) == text, f"{path.name}: {text!r} came back as {action_text(back)!r}"
            for c in back.cards:
                assert normalize(c) == c
            n_actions += 1
    assert n_actions > 0 or not record.get("deals"), f"{path.name}: deals without actions"
