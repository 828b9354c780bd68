"""bete-engine (the referee's Rust engine as the Python module ``bete_engine``): every shared
vector in tests/vectors replays through it exactly as ``bete replay`` does; games, records and
the seeded shuffle; bad input raises the engine's exceptions, never a panic."""

import json
import random
import subprocess
import sys

import pytest

import bete_engine as be
from bete.v1 import game_pb2

from conftest import REPO, VECTORS

RECORDS = sorted(VECTORS.glob("*.record.json"))
BAD = sorted((VECTORS / "bad").glob("*.input.json"))
SEED = "0f" * 32


def test_vectors_are_present():
    assert len(RECORDS) >= 40 and len(BAD) >= 10


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_every_vector_replays_to_its_expected_state(path):
    text = path.read_text()
    expected = json.loads(path.with_name(path.name.replace(".record.json", ".expected.json")).read_text())
    game = be.replay(text)
    assert json.loads(game.report_json()) == expected
    assert game.report() == expected
    assert sum(game.balances) + game.on_table == 0
    # Written back, the record is the vector (as JSON values), and replays the same again.
    record = be.Record.parse(text)
    assert record.ruleset == expected["ruleset"] and record.seats == expected["seats"]
    assert record.to_dict() == json.loads(text)
    written, vector = json.loads(game.record_json()), json.loads(text)
    if "balances" not in vector:  # bete-5-mid-deal had its balances cut off
        assert written.pop("balances") == game.balances
    if len(written["deals"]) == len(vector["deals"]) + 1:  # it ends as a deal ended: the next one
        assert written["deals"].pop() == {"dealer": game.dealer, "actions": []}  # began, no action yet
    assert written == vector
    assert record.replay().report() == expected
    assert be.replay(record.to_json(pretty=True)).report() == expected


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_every_bad_vector_fails_as_bete_replay_does(path):
    expected = json.loads(path.with_name(path.name.replace(".input.json", ".expected.json")).read_text())
    error = be.IllegalActionError if expected["exit"] == 1 else be.BadRecordError
    with pytest.raises(error) as e:
        be.replay(path.read_text())
    assert str(e.value) == expected["stderr"]
    assert isinstance(e.value, be.EngineError)


def _play_to_the_end(game, rng):
    moves = 0
    while not game.is_over():
        seat = game.to_act
        legal = game.legal_actions(seat)
        assert legal, f"seat {seat} to act without a legal action"
        for other in range(game.seats):
            if other != seat:
                assert game.legal_actions(other) == []
        game.apply(seat, rng.choice(legal))
        moves += 1
    return moves


@pytest.mark.parametrize("ruleset", be.RULESETS)
def test_a_seeded_match_plays_to_the_end_and_its_record_replays(ruleset):
    seats = 4 if ruleset != "bete-ace-high" else 5
    game = be.Game(ruleset, seats, seed=SEED)
    assert (game.ruleset, game.seats, game.deal, game.phase) == (ruleset, seats, 0, game.phase)
    assert game.phase in ("bidding", "exchange", "trick", "challenge", "dealer_discard")
    assert _play_to_the_end(game, random.Random(ruleset)) > 10
    assert game.is_over() and game.phase == "match_over" and game.to_act is None
    assert sum(game.balances) == 0 and game.on_table == 0
    report = game.report()
    assert report["match_over"] and len(report["deals"]) >= 1
    assert be.replay(game.record_json()).report_json() == game.report_json()
    assert be.Record.from_game(game).to_json() == game.record_json()


def test_views_hide_other_hands_and_parse_as_seat_views():
    game = be.Game("bete", 5, seed=SEED)
    hands = []
    for seat in range(5):
        v = game_pb2.SeatView.FromString(game.view(seat))
        assert v.viewer_seat == seat and v.seats == 5 and len(v.hand) == 5
        assert bool(v.legal_actions) == (seat == game.to_act)
        hands.append(set(v.hand))
    assert len(set().union(*hands)) == 25, "five different hands"
    spectator = game_pb2.SeatView.FromString(game.view())
    assert not spectator.HasField("viewer_seat") and not spectator.hand and not spectator.legal_actions


def test_the_seeded_shuffle_is_the_one_a_seeded_match_deals():
    seeded = be.Game("lanterlui", 4, seed=SEED)
    explicit = be.Game("lanterlui", 4)
    assert explicit.phase == "awaiting_deck" and explicit.to_act is None
    deck = be.deck_order(SEED, 0, "lanterlui", 4)
    assert sorted(deck) == sorted(set(deck)) and len(deck) == 52
    assert deck != be.deck_order(SEED, 1, "lanterlui", 4)
    explicit.provide_deck(deck)
    for seat in range(4):
        assert explicit.view(seat) == seeded.view(seat)


def test_copies_play_out_without_touching_the_match():
    game = be.Game("beast", 3, seed=SEED)
    before = game.view(0)
    copy = game.copy()
    assert copy.play_out_deal(7)
    assert copy.deal == 1 or copy.is_over()
    assert game.view(0) == before and game.deal == 0
    with pytest.raises(be.BadRecordError, match="keeps no record"):
        copy.record_json()


def test_configs_and_constants():
    assert be.RULES_VERSION == 1 and "bete" in be.RULESETS and len(be.RULESETS) == 10
    defaults = be.default_config("bete", 5)
    assert defaults["contre"] and "fiche_value" in defaults
    game = be.Game("bete", 5, seed=SEED, config={"fiche_value": 10})
    assert game.config["fiche_value"] == 10
    assert be.Game("bete", 5, seed=SEED, config='{"fiche_value": 10}').config == game.config


def test_bad_input_raises_the_engines_errors():
    with pytest.raises(be.ConfigError, match="unknown ruleset"):
        be.Game("poker", 4)
    with pytest.raises(be.ConfigError):
        be.Game("bete", 11)
    with pytest.raises(be.ConfigError, match="seed"):
        be.Game("bete", 5, seed="nope")
    with pytest.raises(be.ConfigError, match="unknown config key"):
        be.Game("bete", 5, config={"no_such_key": 1})
    game = be.Game("bete", 5, seed=SEED)
    seat = game.to_act
    before = game.view(seat)
    with pytest.raises(be.IllegalActionError, match="not your turn"):
        game.apply((seat + 1) % 5, "pass")
    with pytest.raises(be.IllegalActionError):
        game.apply(seat, "fly away")
    with pytest.raises(be.IllegalActionError, match="not at this table"):
        game.apply(9, "pass")
    with pytest.raises(be.IllegalActionError, match="not at this table"):
        game.legal_actions(-1)
    with pytest.raises(be.IllegalActionError, match="no deck is awaited"):
        game.provide_deck(be.deck_order(SEED, 0, "bete", 5))
    assert game.view(seat) == before, "a refused action leaves the match unchanged"
    with pytest.raises(be.BadRecordError, match="not valid JSON"):
        be.replay("{not json")
    with pytest.raises(be.BadRecordError, match="not valid JSON"):
        be.Record.parse("")


def test_the_type_stubs_match_the_module(tmp_path):
    """bete_engine/__init__.pyi (what IDEs show bot authors) names every class, method, parameter and
    default the built module has, and nothing it lacks (mypy's stubtest on the installed wheel,
    whose stub run-tests.sh has just packed from clients/python-engine/python/bete_engine/__init__.pyi)."""
    allowlist = REPO / "clients" / "python-engine" / "stubtest-allowlist.txt"
    config = REPO / "clients" / "python-engine" / "stubtest-mypy.ini"
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "bete_engine", "--allowlist", str(allowlist),
         "--mypy-config-file", str(config)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
