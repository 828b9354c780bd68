"""The research environments of bete-engine (docs/research.md): PettingZoo's own api_test and
OpenSpiel's own random_sim_test on every ruleset, observations that are a function of the seat's
view alone, exact reproduction from a seed, an OpenSpiel search bot through a whole match, and
bad input raising a precise exception with the environment left as it was."""

import random

import numpy as np
import pytest
import pyspiel
from open_spiel.python.algorithms import ismcts
from pettingzoo.test import api_test, seed_test

import bete_engine as be
import bete_engine.openspiel as bo
from bete_engine.pettingzoo import env, raw_env
from bete.v1 import game_pb2

RULESETS = list(be.RULESETS)


def test_every_ruleset_is_covered():
    assert len(RULESETS) == 10 and set(bo.GAMES) == set(RULESETS)


def random_action(obs, rng):
    return rng.choice(np.flatnonzero(obs["action_mask"]).tolist())


def play_match(e, seed, rng):
    """Plays a whole match at random; returns every (agent, observation, reward) seen."""
    e.reset(seed=seed)
    seen, totals = [], {a: 0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        seen.append((agent, obs["observation"].tobytes(), reward))
        e.step(None if term or trunc else random_action(obs, rng))
    return seen, totals


# --- PettingZoo -----------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pettingzoo_api_test_passes(ruleset):
    api_test(env(ruleset=ruleset, seats=3), num_cycles=400)
    api_test(env(ruleset=ruleset, seats=5, rounds=1), num_cycles=200)
    seed_test(lambda render_mode=None: env(ruleset=ruleset, seats=4, render_mode=render_mode), num_cycles=200)


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("reward", ["deal", "match"])
def test_rewards_are_net_jetons_and_sum_to_the_final_balances(ruleset, reward):
    e = raw_env(ruleset=ruleset, seats=4, reward=reward, rounds=1)
    seen, totals = play_match(e, 11, random.Random(1))
    final = e._game.settled_balances
    assert [totals[a] for a in e.possible_agents] == final and any(final)
    paid = [r for _, _, r in seen if r]
    if reward == "match":
        # Only the last step of each agent carries its reward.
        assert len(paid) <= 4
    else:
        assert len(paid) > 4  # each deal settled pays as it settles


def test_a_seed_reproduces_a_match_exactly_and_another_seed_differs():
    a = play_match(env(ruleset="lanterlui", seats=5), 42, random.Random(3))
    b = play_match(env(ruleset="lanterlui", seats=5), 42, random.Random(3))
    c = play_match(env(ruleset="lanterlui", seats=5), 43, random.Random(3))
    assert a == b and a != c
    e = raw_env(ruleset="bete", seats=3)
    e.reset(seed=5)
    first = e.match_seed
    e.reset()
    following = e.match_seed
    e.reset(seed=5)
    assert e.match_seed == first
    e.reset()
    assert e.match_seed == following != first


@pytest.mark.parametrize("ruleset", RULESETS)
def test_an_observation_is_a_function_of_the_seats_view_alone(ruleset):
    """The tensor and mask computed by the environment equal those computed from the serialized
    SeatView alone; and a different deal that agrees with the view (other hands resampled by the
    Determinizer) gives the seat exactly the same observation."""
    e = raw_env(ruleset=ruleset, seats=4)
    e.reset(seed=9)
    rng = random.Random(9)
    differing_worlds = 0
    for step, agent in enumerate(e.agent_iter(max_iter=400)):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        view = e.view(agent)
        assert np.array_equal(obs["observation"], np.frombuffer(be.observation_of(view), np.float32))
        assert np.flatnonzero(obs["action_mask"]).tolist() == be.legal_action_ids_of(view)
        seat = int(agent.split("_")[1])
        if step % 7 == 0 and game_pb2.SeatView.FromString(view).phase == game_pb2.PHASE_TRICK:
            other = be.Determinizer(view).sample(step)
            assert other.view(seat) == view
            assert np.array_equal(np.frombuffer(other.observation(seat), np.float32), obs["observation"])
            truth = e.game
            if any(other.hand(s) != truth.hand(s) for s in range(4) if s != seat):
                differing_worlds += 1
        # The legal ids name exactly the seat's legal actions.
        texts = [be.action_of(view, i) for i in be.legal_action_ids_of(view)]
        assert sorted(texts) == sorted(e.game.legal_actions(seat))
        e.step(random_action(obs, rng))
    assert differing_worlds > 0


def test_observations_hide_other_hands():
    e = raw_env(ruleset="beste-boer", seats=4)
    e.reset(seed=1)
    obs = e.observe("seat_1")["observation"]
    hand = obs[:52]
    assert hand.sum() == 5
    assert {f"{'23456789TJQKA'[i % 13]}{'SHDC'[i // 13]}" for i in np.flatnonzero(hand)} == set(e.game.hand(1))
    assert not np.array_equal(hand, e.observe("seat_2")["observation"][:52])


def test_render_ansi_shows_the_public_table_only():
    e = raw_env(ruleset="bete", seats=3, render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert "bete · 3 seats · deal 0" in text and "balances" in text
    for s in range(3):
        assert not all(card in text for card in e.game.hand(s))
    assert raw_env(ruleset="bete", seats=3).render() is None


# --- bad input ----------------------------------------------------------------------------------


def test_unknown_ruleset_or_seat_count_or_config_is_refused_by_name():
    with pytest.raises(be.ConfigError, match="unknown ruleset \"poker\""):
        env(ruleset="poker")
    with pytest.raises(be.ConfigError, match="seat"):
        env(ruleset="beast", seats=6)
    with pytest.raises(be.ConfigError, match="seat"):
        env(ruleset="loo", seats=11)
    with pytest.raises(be.ConfigError, match="no_such_key"):
        env(ruleset="loo", seats=4, no_such_key=1)
    with pytest.raises(ValueError, match="reward"):
        env(ruleset="loo", reward="trick")
    with pytest.raises(be.ConfigError, match="beast does not allow 6 seats"):
        pyspiel.load_game("python_bete_beast", {"players": 6})
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'no_such_key'"):
        pyspiel.load_game("python_bete_loo", {"players": 4, "no_such_key": 1})
    with pytest.raises(pyspiel.SpielError, match="python_bete_poker"):
        pyspiel.load_game("python_bete_poker")
    with pytest.raises(be.ConfigError, match="'nonsense'|nonsense"):
        pyspiel.load_game("python_bete_loo", {"players": 4, "pam": "nonsense"})


def test_an_illegal_action_id_raises_and_leaves_the_environment_unchanged():
    e = env(ruleset="bete", seats=3)
    e.reset(seed=4)
    agent = e.agent_selection
    before = e.observe(agent)
    masked = int(np.flatnonzero(before["action_mask"] == 0)[0])
    for bad in (masked, be.NUM_ACTIONS, -1):
        with pytest.raises(be.IllegalActionError, match=f"action id {bad}"):
            e.step(bad)
        assert e.agent_selection == agent
        after = e.observe(agent)
        assert np.array_equal(after["observation"], before["observation"])
        assert np.array_equal(after["action_mask"], before["action_mask"])
    with pytest.raises(ValueError, match="is to act"):
        e.step(None)
    # And the match goes on normally.
    e.step(int(np.flatnonzero(before["action_mask"])[0]))
    assert e.agent_selection != agent


def test_an_action_for_a_seat_not_to_act_is_refused():
    g = be.Game("beste-boer", 4, seed="0a" * 32)
    wrong = (g.to_act + 1) % 4
    with pytest.raises(be.IllegalActionError, match=f"not your turn: seat {g.to_act} is to act"):
        g.apply_id(wrong, be.legal_action_ids_of(g.view(g.to_act))[0])
    with pytest.raises(be.IllegalActionError, match="seat 9 is not at this table"):
        g.apply_id(9, 0)
    # A finished match's agents take None only.
    e = env(ruleset="rams", seats=3, rounds=1)
    play_match(e, 3, random.Random(0))
    e.reset(seed=3)
    rng = random.Random(0)
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            with pytest.raises(ValueError, match="only valid action is None"):
                e.step(0)
            break
        e.step(random_action(obs, rng))


def test_openspiel_illegal_actions_raise_and_leave_the_state_unchanged():
    game = pyspiel.load_game("python_bete_loo", {"players": 3})
    state = game.new_initial_state()
    with pytest.raises(Exception, match="not a card left in the pack"):
        state.apply_action(999)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    before = str(state), state.information_state_string(), state.history()
    illegal = next(a for a in range(be.NUM_ACTIONS) if a not in state.legal_actions())
    with pytest.raises(Exception, match=f"action id {illegal}"):
        state.apply_action(illegal)
    assert (str(state), state.information_state_string(), state.history()) == before


# --- OpenSpiel ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", RULESETS)
def test_openspiel_random_sim_test_passes(ruleset):
    game = pyspiel.load_game(bo.game_name(ruleset), {"players": 3, "rounds": 1})
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
    lo, hi = game.get_type().min_num_players, game.get_type().max_num_players
    pyspiel.random_sim_test(pyspiel.load_game(bo.game_name(ruleset), {"players": hi, "rounds": 1, "max_extra_deals": 0}), num_sims=1, serialize=False, verbose=False)
    assert game.num_distinct_actions() == be.NUM_ACTIONS and lo == 3


def test_openspiel_chance_nodes_deal_the_pack_with_equal_probabilities():
    game = pyspiel.load_game("python_bete_bete", {"players": 5})
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 32 and abs(sum(p for _, p in outcomes) - 1) < 1e-9
    assert len({p for _, p in outcomes}) == 1
    for k in range(32):
        assert state.is_chance_node() and len(state.chance_outcomes()) == 32 - k
        state.apply_action(state.chance_outcomes()[-1][0])
    assert state.current_player() >= 0
    me = state.current_player()
    assert np.array_equal(np.array(state.observation_tensor(me), np.float32),
                          np.frombuffer(be.observation_of(state.game_.view(me)), np.float32))
    # Other seats' cards are in no player's strings.
    hands = [set(state.game_.hand(s)) for s in range(5)]
    info = state.information_state_string(me)
    for s in range(5):
        if s != me:
            assert f"hand {' '.join(sorted(hands[s]))}" not in info


def test_an_openspiel_search_bot_plays_a_whole_match():
    game = pyspiel.load_game("python_bete_beste_boer", {"players": 3, "rounds": 1})
    bot = ismcts.ISMCTSBot(game, bo.RolloutEvaluator(1, seed=1), uct_c=2.0, max_simulations=15,
                           random_state=np.random.RandomState(1))
    bots = [bot] + [pyspiel.make_uniform_random_bot(p, p) for p in (1, 2)]
    state = game.new_initial_state()
    rng = np.random.RandomState(0)
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choice(actions, p=probs))
        else:
            if state.current_player() == 0:
                decisions += 1
            state.apply_action(bots[state.current_player()].step(state))
    assert decisions > 5
    assert state.returns() == [float(b) for b in state.game_.settled_balances] and any(state.returns())


# The information-state tensor's memory block (docs/research.md), after the observation tensor.
OBS = be.OBSERVATION_SIZE
MEM_DEALT, MEM_SET_ASIDE, MEM_DRAWN, MEM_DISCARD = OBS, OBS + 52, OBS + 156, OBS + 260
MEM_TRICKS, MEM_SPOKEN = OBS + 312, OBS + 312 + 5 * 10 * 52


def _cards(block):
    return {("23456789TJQKA"[i % 13] + "SHDC"[i // 13]) for i in np.flatnonzero(block)}


def _first_exchange(ruleset, players, seed):
    """A state right after some seat's first exchange of at least one card, and that seat's
    dealt hand, set-aside cards and hand before the exchange."""
    game = pyspiel.load_game(bo.game_name(ruleset), {"players": players})
    rng = random.Random(seed)
    state = game.new_initial_state()
    dealt = None
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.legal_actions()))
            if not state.is_chance_node():
                dealt = [set(state.game_.hand(s)) for s in range(players)]
            continue
        seat = state.current_player()
        exchanges = [a for a in state.legal_actions() if state.action_to_string(seat, a).startswith("exchange")]
        if exchanges:
            a = exchanges[-1]
            before = set(state.game_.hand(seat))
            set_aside = set(state.action_to_string(seat, a).split()[1:])
            state.apply_action(a)
            return state, seat, dealt[seat], set_aside, before
        state.apply_action(rng.choice(state.legal_actions()))
    raise AssertionError("no exchange in a whole match")


def test_information_state_tensor_remembers_what_the_view_forgets():
    state, seat, dealt, set_aside, before = _first_exchange("beste-boer", 4, 3)
    info = np.array(state.information_state_tensor(seat), np.float32)
    obs = np.array(state.observation_tensor(seat), np.float32)
    assert info.shape == (be.INFOSTATE_SIZE,) and obs.shape == (OBS,)
    assert be.INFOSTATE_SIZE > OBS and np.array_equal(info[:OBS], obs)
    hand = set(state.game_.hand(seat))
    # The view shows only the hand now; the memory keeps the dealt hand, what was set aside and
    # what was drawn.
    assert _cards(info[MEM_DEALT:MEM_DEALT + 52]) == dealt
    assert _cards(info[MEM_SET_ASIDE:MEM_SET_ASIDE + 52]) == set_aside and not set_aside & hand
    assert _cards(info[MEM_DRAWN:MEM_DRAWN + 52]) == hand - (before - set_aside)
    # The exchange is spoken: some slot holds this seat (relative 0) and the word "exchange".
    slots = info[MEM_SPOKEN:MEM_SPOKEN + 32 * 20].reshape(32, 20)
    assert any(s[0] == 1 and s[10 + 9] == 1 for s in slots)
    # Another seat's memory holds none of it: only its own dealt hand, nothing set aside by it.
    other = (seat + 1) % 4
    theirs = np.array(state.information_state_tensor(other), np.float32)
    assert _cards(theirs[MEM_DEALT:MEM_DEALT + 52]) != dealt
    assert not _cards(theirs[MEM_SET_ASIDE:MEM_SET_ASIDE + 104]) & set_aside
    slots = theirs[MEM_SPOKEN:MEM_SPOKEN + 32 * 20].reshape(32, 20)
    # The seat that exchanged is `seat`, 3 places on from `other` at four seats.
    assert any(s[3] == 1 and s[10 + 9] == 1 for s in slots)


def test_information_state_tensor_keeps_every_trick_card_by_card():
    game = pyspiel.load_game("python_bete_rams", {"players": 3})
    rng = random.Random(5)
    state = game.new_initial_state()
    view = game_pb2.SeatView()
    # Random play until seat 0's view shows a second trick of the deal.
    while True:
        if state.current_player() >= 0:
            view.ParseFromString(state.game_.view(0))
            if len(view.tricks) >= 2:
                break
        state.apply_action(rng.choice(state.legal_actions()))
    info = np.array(state.information_state_tensor(0), np.float32)
    obs = np.array(state.observation_tensor(0), np.float32)
    for t, trick in enumerate(view.tricks):
        for play in trick.plays:
            at = MEM_TRICKS + (t * 10 + play.seat) * 52  # seat 0's relative seats are the seats
            assert _cards(info[at:at + 52]) == {play.card}
    # Nothing else: each card in its trick, under the seat that played it.
    assert info[MEM_TRICKS:MEM_SPOKEN].sum() == sum(len(t.plays) for t in view.tricks)


def _second_exchange(ruleset, players, seed):
    """A state right after some seat's second exchange of a deal, someone to act, and the cards
    it set aside in its first (its view's last word shows only the second)."""
    game = pyspiel.load_game(bo.game_name(ruleset), {"players": players})
    rng = random.Random(seed)
    state = game.new_initial_state()
    first = {}
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.legal_actions()))
            first = {}
            continue
        seat = state.current_player()
        exchanges = [a for a in state.legal_actions() if state.action_to_string(seat, a).startswith("exchange")]
        a = rng.choice(exchanges or state.legal_actions())
        text = state.action_to_string(seat, a)
        state.apply_action(a)
        if text.startswith("exchange"):
            if seat in first and state.current_player() >= 0:
                return state, seat, first[seat]
            first[seat] = set(text.split()[1:])
    raise AssertionError("no seat exchanged twice in a whole match")


@pytest.mark.parametrize("ruleset", ["beste-boer", "lanterlui"])
def test_resampling_never_gives_another_seat_a_card_the_player_set_aside(ruleset):
    # Before the resample remembered the seat's own exchanges, 40-90 of these 100 samples gave
    # another seat a card set aside in the first exchange.
    state, seat, set_aside = _second_exchange(ruleset, 3, 0)
    rng = np.random.RandomState(0)
    elsewhere = set()
    for _ in range(100):
        other = state.resample_from_infostate(seat, rng.random_sample)
        assert other.information_state_string(seat) == state.information_state_string(seat)
        assert other.information_state_tensor(seat) == state.information_state_tensor(seat)
        for s in range(3):
            if s != seat:
                elsewhere |= set(other.game_.hand(s))
    assert len(elsewhere) > 10 and not elsewhere & set_aside
