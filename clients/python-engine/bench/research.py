"""Random-play speed of the research environments, side by side with comparable environments of
each framework in the same process (docs/benchmarks.md, "Research environments").

- PettingZoo AEC: `bete_engine.pettingzoo` (four rulesets) against PettingZoo's own
  `leduc_holdem_v4` and `texas_holdem_v4`, the same loop for all: `env.last()`, a uniformly
  random id among the mask's, `env.step`; counted: the steps that play an action.
- OpenSpiel: `python_bete_*` against OpenSpiel's C++ `euchre` and `hearts` driven from Python
  the same way: `chance_outcomes()` or `legal_actions()`, a uniformly random one,
  `apply_action`; counted: every action applied, chance outcomes included.
- For scale, OpenSpiel's own Python game `python_block_dominoes` (chance deals the tiles); the
  floor of any pyspiel Python game, `python_trivial_deal` below (a deal of 28 chance draws and 24
  moves whose every method does nothing but count, through pyspiel's calls back into Python:
  what a Python game costs before it does any work); and the bare engine: `Game.legal_action_ids` + `Game.apply_id` from Python, and
  `Game.play_random` (the loop in Rust).

The environments take turns: ROUNDS rounds, each running every environment for about
`SECONDS` seconds in turn, so that a change of the machine's load falls on all of them; each
figure is an environment's best round (the least disturbed on a shared machine).

    pip install -r clients/python-engine/bench/requirements.txt
    .tools/py-venv/bin/python clients/python-engine/bench/research.py [SECONDS]   # 2 by default
"""

import random
import sys
import time

import numpy as np
import pyspiel

import bete_engine as be
import bete_engine.openspiel as bo
from bete_engine.pettingzoo import env as bete_env

RULESETS = [("bete", 4), ("beste-boer", 4), ("loo", 4), ("rams", 4)]


ROUNDS = 5


def rate(run, seconds):
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        steps += run()
    return steps / (time.perf_counter() - start)


def pettingzoo_run(make):
    rng = random.Random(1)
    e = make()
    seed = iter(range(10**9))

    def episode():
        e.reset(seed=next(seed))
        steps = 0
        for _ in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            steps += 1
        return steps

    return episode


def openspiel_run(game):
    rng = random.Random(1)

    def episode():
        state = game.new_initial_state()
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
        return steps

    return episode


def _trivial_type(players=4):
    return pyspiel.GameType(
        short_name="python_trivial_deal", long_name="a Python game that does nothing",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM, reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players, min_num_players=players,
        provides_information_state_string=False, provides_information_state_tensor=False,
        provides_observation_string=False, provides_observation_tensor=False,
        parameter_specification={})


_TRIVIAL_OUTCOMES = [[(c, 1.0 / n) for c in range(n)] if n else [] for n in range(29)]
_TERMINAL, _CHANCE = int(pyspiel.PlayerId.TERMINAL), int(pyspiel.PlayerId.CHANCE)


class TrivialDeal(pyspiel.Game):
    """15 deals of 28 chance draws (a prebuilt outcome list each) and 24 moves (5 legal)."""

    def __init__(self, params=None):
        super().__init__(_trivial_type(), pyspiel.GameInfo(
            num_distinct_actions=5, max_chance_outcomes=28, num_players=4, min_utility=-1.0,
            max_utility=1.0, utility_sum=0.0, max_game_length=15 * 52), params or {})

    def new_initial_state(self):
        return TrivialState(self)


class TrivialState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.steps, self.player = 0, _CHANCE

    def current_player(self):
        return self.player

    def _legal_actions(self, player):
        return [0, 1, 2, 3, 4]

    def chance_outcomes(self):
        return _TRIVIAL_OUTCOMES[28 - self.steps % 52]

    def _apply_action(self, action):
        self.steps += 1
        k = self.steps % 52
        self.player = _TERMINAL if self.steps == 15 * 52 else _CHANCE if k < 28 else k % 4

    def is_terminal(self):
        return self.player == _TERMINAL

    def returns(self):
        return [0.0] * 4

    def _action_to_string(self, player, action):
        return str(action)

    def __str__(self):
        return str(self.steps)


pyspiel.register_game(_trivial_type(), TrivialDeal)


def engine_runs(ruleset, seats):
    rng = random.Random(1)
    seed = iter(range(10**9))

    def match():
        g = be.Game(ruleset, seats, seed=f"{next(seed) % 256:02x}" * 32)
        steps = 0
        while not g.is_over():
            s = g.to_act
            g.apply_id(s, rng.choice(g.legal_action_ids(s)))
            steps += 1
        return steps

    def in_rust():
        g = be.Game(ruleset, seats, seed=f"{next(seed) % 256:02x}" * 32)
        return g.play_random(10**9, next(seed))

    return match, in_rust


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4

    # OpenSpiel's own game written in Python, with chance (the deal): the cost of any Python game.
    import open_spiel.python.games.block_dominoes  # noqa: F401  (registers python_block_dominoes)

    rows = []
    for name, make in [("leduc_holdem_v4", leduc_holdem_v4.env), ("texas_holdem_v4", texas_holdem_v4.env)]:
        rows.append(("PettingZoo", f"{name} (PettingZoo, RLCard)", pettingzoo_run(make)))
    for ruleset, seats in RULESETS:
        rows.append(("PettingZoo", f"bete_engine.pettingzoo {ruleset}/{seats}",
                     pettingzoo_run(lambda r=ruleset, s=seats: bete_env(ruleset=r, seats=s))))
    for name in ["euchre", "hearts"]:
        rows.append(("OpenSpiel", f"{name} (C++)", openspiel_run(pyspiel.load_game(name))))
    rows.append(("OpenSpiel", "python_block_dominoes (OpenSpiel, Python)",
                 openspiel_run(pyspiel.load_game("python_block_dominoes"))))
    rows.append(("OpenSpiel", "python_trivial_deal (a Python game doing nothing: the floor)",
                 openspiel_run(pyspiel.load_game("python_trivial_deal"))))
    for ruleset, seats in RULESETS:
        game = pyspiel.load_game(bo.game_name(ruleset), {"players": seats})
        rows.append(("OpenSpiel", f"{bo.game_name(ruleset)} players={seats}", openspiel_run(game)))
    for ruleset, seats in RULESETS:
        py, rust = engine_runs(ruleset, seats)
        rows.append(("bete_engine.Game", f"{ruleset}/{seats}: legal_action_ids + apply_id from Python", py))
        rows.append(("bete_engine.Game", f"{ruleset}/{seats}: play_random (loop in Rust)", rust))
    best = [0.0] * len(rows)
    for _ in range(ROUNDS):
        for k, (_, _, run) in enumerate(rows):
            best[k] = max(best[k], rate(run, seconds))
    print("| API | environment | steps/s |")
    print("|---|---|---|")
    for (api, name, _), r in zip(rows, best):
        print(f"| {api} | {name} | {r:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
