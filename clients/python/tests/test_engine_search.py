"""bete-engine's determinization and playouts from a SeatView, its errors for views it cannot
search from, and the example search bot (examples/search_bot.py) at a real server's table."""

import asyncio
import importlib.util
import json
import random

import pytest

import bete_engine as be
from bete.v1 import game_pb2
from bete_bot import Runner

from conftest import REPO
from helpers import Recorder, new_client

SEED = "a5" * 32
# The rulesets whose views the engine's determinization reconciles: all ten (Part II's
# Mouche, Mistigri, Loo and Rams too).
DETERMINIZED = ["bete", "bete-ace-high", "beast", "beste-boer", "lanterlui", "bester-bube",
                "mouche", "mistigri", "loo", "rams"]


def _mid_deal(ruleset, seats, moves, seed=SEED):
    """A seeded match after `moves` random actions, and the view of the seat to act."""
    game = be.Game(ruleset, seats, seed=seed)
    rng = random.Random(moves)
    for _ in range(moves):
        seat = game.to_act
        game.apply(seat, rng.choice(game.legal_actions(seat)))
    return game, game.to_act, game.view(game.to_act)


@pytest.mark.parametrize("ruleset", DETERMINIZED)
def test_samples_agree_with_the_view_and_play_on(ruleset):
    seats = 5 if ruleset.startswith("bete") else 4
    checked = 0
    for moves in (0, 3, 7, 11, 16):
        game, seat, view_bytes = _mid_deal(ruleset, seats, moves)
        if game.deal != 0:
            continue
        view = game_pb2.SeatView.FromString(view_bytes)
        d = be.Determinizer(view)  # the message object, not only its bytes
        assert d.seat == seat
        assert d.legal_actions == game.legal_actions(seat)
        hidden = set()
        for s in range(4):
            sample = d.sample(s)
            assert game_pb2.SeatView.FromString(sample.view(seat)) == view
            others = [c for o in range(seats) if o != seat
                      for c in game_pb2.SeatView.FromString(sample.view(o)).hand]
            hidden.add(tuple(sorted(others)))
            assert sample.play_out_deal(s)
            assert sum(sample.balances) + sample.on_table == 0
        assert len(hidden) > 1 or not any(
            game_pb2.SeatView.FromString(view_bytes).seat_states[o].hand_len for o in range(seats) if o != seat
        ), "different samples deal the other seats different cards"
        checked += 1
    assert checked >= 2


def _exchanging_seat_at_trick(ruleset):
    """A seeded match where one seat exchanged in every buying round it spoke in and now leads
    or follows in a trick: the match, the seat, and the events it received of its own moves."""
    for k in range(1, 200):
        game = be.Game(ruleset, 4, seed=f"{k:02x}" * 32)
        rng = random.Random(k)
        me = game.to_act
        events = [game_pb2.Event(deal_started=game_pb2.DealStarted(
            deal=0, hand=game_pb2.SeatView.FromString(game.view(me)).hand))]
        while game.deal == 0 and game.to_act is not None:
            seat, legal = game.to_act, game.legal_actions(game.to_act)
            if seat == me and game.phase == "trick":
                if sum(e.HasField("exchanged") for e in events) == 2:  # in both rounds
                    return game, me, events
                break
            if seat == me and game.phase == "exchange":
                swaps = [a for a in legal if a.startswith("exchange") and len(a.split()) == 3]
                if not swaps:
                    break
                before = set(game_pb2.SeatView.FromString(game.view(me)).hand)
                action = rng.choice(swaps)
                game.apply(me, action)
                aside = action.split()[1:]
                after = set(game_pb2.SeatView.FromString(game.view(me)).hand)
                events.append(game_pb2.Event(exchanged=game_pb2.Exchanged(
                    seat=me, count=len(aside), set_aside=aside, drawn=sorted(after - (before - set(aside))))))
                continue
            stay = [a for a in legal if a != "drop"] or legal
            game.apply(seat, rng.choice(stay))
    raise AssertionError(f"no seed of {ruleset} has a seat exchange twice and reach a trick")


@pytest.mark.parametrize("ruleset", ["lanterlui", "beste-boer"])
def test_events_let_a_seat_remember_the_cards_it_set_aside(ruleset):
    game, me, events = _exchanging_seat_at_trick(ruleset)
    aside = {c for e in events if e.HasField("exchanged") for c in e.exchanged.set_aside}
    view = game.view(me)
    d = be.Determinizer(view, events=events)
    also_bytes = be.Determinizer(view, events=[e.SerializeToString() for e in events])
    for i in range(60):
        for sample in (d.sample(i), also_bytes.sample(i)):
            assert sample.view(me) == view
            for other in range(4):
                if other != me:
                    held = set(game_pb2.SeatView.FromString(sample.view(other)).hand)
                    assert not held & aside, f"seat {other} was dealt {held & aside}, set aside by seat {me}"
    assert be.playouts(view, d.legal_actions[0], 20, 1, events=events) == d.playouts(d.legal_actions[0], 20, 1)
    with pytest.raises(be.BadViewError, match=r"events\[1\]: not a bete.v1.Event"):
        be.Determinizer(view, events=[events[0], b"\xff\xff"])
    with pytest.raises(be.BadViewError, match=r"events\[0\]: expected a bete.v1.Event"):
        be.Determinizer(view, events=[3])


def test_playouts_are_seeded_and_score_every_legal_action():
    game, seat, view = _mid_deal("beast", 3, 6)
    legal = game.legal_actions(seat)
    assert len(legal) > 1
    a = be.playouts(view, legal[0], 300, 11)
    assert a == be.playouts(view, legal[0], 300, 11)
    d = be.Determinizer(view)
    assert d.playouts(legal[0], 300, 11) == a
    scores = d.evaluate(200, 5)
    assert [s[0] for s in scores] == legal
    assert all(-100 < s[1] < 100 for s in scores)
    assert scores == d.evaluate(200, 5)
    # A time box ends a call of a million samples early, with at least one sample done.
    boxed = d.evaluate(be.MAX_PLAYOUTS, 5, max_ms=20)
    assert [s[0] for s in boxed] == legal and all(-100 < s[1] < 100 for s in boxed)
    assert -100 < be.playouts(view, legal[0], be.MAX_PLAYOUTS, 3, max_ms=0.001) < 100
    for bad in (0, -1, 3_600_001):
        with pytest.raises(ValueError, match="max_ms"):
            d.evaluate(10, 1, max_ms=bad)


def test_views_the_engine_cannot_search_from_raise_its_errors():
    game, seat, view_bytes = _mid_deal("bete", 5, 8)
    view = game_pb2.SeatView.FromString(view_bytes)
    assert game.phase == "trick"
    with pytest.raises(be.BadViewError, match="not a bete.v1.SeatView"):
        be.Determinizer(b"\xff\xff\xff")
    with pytest.raises(be.BadViewError, match="expected a bete.v1.SeatView"):
        be.Determinizer(42)
    with pytest.raises(be.BadViewError, match="spectator"):
        be.Determinizer(game.view())
    bad_card = game_pb2.SeatView()
    bad_card.CopyFrom(view)
    bad_card.hand[0] = "ZZ"
    with pytest.raises(be.BadViewError, match=r"hand\[0\]"):
        be.Determinizer(bad_card)
    # A stale or altered view: a seat credited with a trick nobody saw it win.
    altered = game_pb2.SeatView()
    altered.CopyFrom(view)
    other = (seat + 1) % 5
    altered.seat_states[other].tricks += 1
    with pytest.raises(be.UnreconciledViewError, match="no deal agrees"):
        be.Determinizer(altered).sample(1)
    # The same view read as another ruleset's (another rules version reads it differently).
    other_rules = game_pb2.SeatView()
    other_rules.CopyFrom(view)
    other_rules.ruleset = game_pb2.SeatView.FromString(be.Game("lanterlui", 5, seed=SEED).view(0)).ruleset
    with pytest.raises(be.BadViewError):
        be.Determinizer(other_rules).sample(1)
    d = be.Determinizer(view)
    with pytest.raises(be.IllegalActionError, match="not among the view's legal actions"):
        d.playouts("pass", 10, 1)
    with pytest.raises(be.IllegalActionError):
        d.playouts("card", 10, 1)
    with pytest.raises(ValueError, match="playouts"):
        d.playouts(d.legal_actions[0], 0, 1)
    with pytest.raises(ValueError, match="playouts"):
        d.evaluate(be.MAX_PLAYOUTS + 1, 1)
    over = be.Game("beast", 3, seed=SEED)
    while not over.is_over():
        over.play_out_deal(3)
    with pytest.raises(be.BadViewError, match="no deal"):
        be.Determinizer(over.view(0))


def _search_bot_module():
    spec = importlib.util.spec_from_file_location("search_bot", REPO / "clients/python/examples/search_bot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ruleset,samples,deadline_ms", [
    ("bete", 40, 0), ("beast", 40, 0), ("lanterlui", 40, 0),
    # A million samples would take minutes a decision: the bot's time box (half the time left
    # before the deadline) must end every search in time.
    ("beste-boer", 1_000_000, 600),
])
def test_the_example_search_bot_plays_a_real_table_to_the_end(server, ruleset, samples, deadline_ms):
    bot = _search_bot_module().SearchBot(samples=samples, seed=1)

    async def scenario():
        client = await new_client(server, f"py-search-{ruleset}")
        async with client:
            table = await client.create_table(ruleset, 3, house_bots={1: "heuristic", 2: "heuristic"},
                                              decision_deadline_ms=deadline_ms)
            await client.join_table(table.table_id, seat=0)
            runner = Runner(client, Recorder(bot), tables=())
            runner.track(table.table_id, from_seq=table.last_seq)
            states = await asyncio.wait_for(runner.run(), 110)
            record = json.loads(await client.get_game_record(table.table_id))
            return states[table.table_id], record

    st, record = asyncio.run(scenario())
    assert st.done and st.result is not None and sum(st.balances) == 0
    assert st.illegal == 0 and st.decisions > 0
    assert bot.searched > 0 and bot.fallbacks == 0, "every decision with a choice was searched"
    ours = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0]
    assert len(ours) == st.decisions and not [a for a in ours if a.get("auto")]
    # The referee's engine agrees: the finished record replays to the balances the table ended with.
    assert be.replay(json.dumps(record)).balances == list(st.result.balances)


def test_altered_views_raise_engine_errors_never_a_panic():
    """Random edits of real mid-deal views (seat numbers, counts, cards, phases): each one is
    searched from or refused with an EngineError. A Rust panic would surface as pyo3's
    PanicException, which derives from BaseException and fails this test."""
    rng = random.Random(2026)
    views = [game_pb2.SeatView.FromString(_mid_deal(r, 4 if not r.startswith("bete") else 5, m)[2])
             for r in DETERMINIZED for m in (2, 9, 14)]
    values = [0, 1, 3, 4, 5, 9, 10, 11, 50, 255, 256, 70000, 2**32 - 1]
    cards = ["AS", "KH", "2C", "TD", "JS", "7H"]
    outcomes = {"searched": 0, "refused": 0}
    for i in range(600):
        v = game_pb2.SeatView()
        v.CopyFrom(rng.choice(views))
        for _ in range(rng.randint(1, 3)):
            what = rng.randrange(12)
            if what == 0:
                v.seats = rng.choice(values)
            elif what == 1:
                v.dealer = rng.choice(values)
            elif what == 2:
                v.to_act = rng.choice(values)
            elif what == 3:
                v.viewer_seat = rng.choice(values)
            elif what == 4 and v.seat_states:
                st = rng.choice(v.seat_states)
                setattr(st, rng.choice(["seat", "hand_len", "tricks"]), rng.choice(values))
            elif what == 5 and v.seat_states:
                st = rng.choice(v.seat_states)
                st.exchanged[:] = [rng.choice(values) for _ in range(rng.randint(0, 3))]
            elif what == 6 and v.tricks:
                t = rng.choice(v.tricks)
                if t.plays:
                    p = rng.choice(t.plays)
                    p.seat = rng.choice(values)
                    p.card = rng.choice(cards)
                t.leader = rng.choice(values)
            elif what == 7:
                v.hand.append(rng.choice(cards))
            elif what == 8:
                v.talon_len = rng.choice(values)
            elif what == 9:
                v.phase = rng.randrange(0, 12)
                v.trick_index = rng.choice(values)
                v.exchange_round = rng.choice(values)
            elif what == 10 and len(v.seat_states) > 1:
                del v.seat_states[rng.randrange(len(v.seat_states))]
            elif what == 11:
                v.deal = rng.choice(values)
        try:
            d = be.Determinizer(v)
            d.sample(i)
            if d.legal_actions:
                d.evaluate(2, i)
            outcomes["searched"] += 1
        except be.EngineError as e:
            assert str(e)
            outcomes["refused"] += 1
    assert outcomes["refused"] > 100 and outcomes["searched"] > 20, outcomes
