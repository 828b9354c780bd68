"""PettingZoo AEC environments for every bete ruleset (docs/research.md).

    from bete_engine.pettingzoo import env
    e = env(ruleset="beste-boer", seats=4)
    e.reset(seed=7)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else pick(obs["observation"], obs["action_mask"])
        e.step(action)

An episode is one match, played by the referee's own engine with exactly the server's rules.
Agents are "seat_0" … "seat_{n-1}". Actions are the fixed ids of docs/research.md
(`bete_engine.NUM_ACTIONS` of them); every observation is a dict with "observation" (the
float32 tensor, `bete_engine.OBSERVATION_SIZE` long) and "action_mask" (int8, 1 for each legal
id), built only from that seat's view; `env.view(agent)` is the same view structured (the
serialized `bete.v1.SeatView` a bot gets from the server). Rewards are net jetons: with
`reward="deal"` (the default) every seat gets its gain or loss when each deal settles, with
`reward="match"` only at the end; either way they sum over the match to the final balances.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import NUM_ACTIONS, OBSERVATION_SIZE, Game

__all__ = ["env", "raw_env", "match_seed"]

REWARD_MODES = ("deal", "match")
RENDER_MODES = ("ansi",)


def match_seed(seed: int) -> str:
    """The 64-hex-digit match seed (RULES.md 11.5) an integer `reset(seed=...)` stands for."""
    return hashlib.sha256(f"bete-research:{int(seed)}".encode()).hexdigest()


def env(**kwargs: Any) -> AECEnv:
    """`raw_env(**kwargs)` behind PettingZoo's order-enforcing wrapper (calls out of order raise;
    an illegal action raises `bete_engine.IllegalActionError` rather than ending the game)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):
    """One match of `ruleset` at a table of `seats`; `**config` are the ruleset's config keys
    (`bete_engine.default_config(ruleset, seats)` lists them). Raises `bete_engine.ConfigError`
    for an unknown ruleset, seat count or config key, ValueError for an unknown reward or
    render mode."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "bete_v0", "is_parallelizable": False}

    def __init__(
        self,
        ruleset: str = "bete",
        seats: int = 4,
        render_mode: Optional[str] = None,
        reward: str = "deal",
        **config: Any,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' or None")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward {reward!r}: 'deal' (at each settlement) or 'match' (at the end)")
        if isinstance(seats, bool) or not isinstance(seats, int):
            raise TypeError(f"seats must be an int, got {seats!r}")
        # Checks the ruleset, seat count and config now (ConfigError names what is wrong).
        self._game = Game(ruleset, seats, seed=match_seed(0), config=config or None)
        self.ruleset = ruleset
        self.seats = seats
        self.config = dict(config)
        self.render_mode = render_mode
        self.reward_mode = reward
        self.possible_agents = [f"seat_{s}" for s in range(seats)]
        self.agents: list[str] = []
        self._seeds: random.Random = random.Random()
        self.match_seed: Optional[str] = None
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, (OBSERVATION_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self._act_space = spaces.Discrete(NUM_ACTIONS)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """A new match. `seed` fixes every deck (the same seed, the same actions: the same
        match); without one, the next match of the last seeded stream (or an unseeded one)."""
        if seed is not None:
            self._seeds = random.Random(seed)
        self.match_seed = match_seed(self._seeds.getrandbits(63))
        self._game = Game(self.ruleset, self.seats, seed=self.match_seed, config=self.config or None)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._settled = list(self._game.settled_balances)
        self.agent_selection = self._agent(self._game.to_act)

    def _agent(self, seat: Optional[int]) -> str:
        return self.possible_agents[seat if seat is not None else 0]

    def _seat(self, agent: str) -> int:
        try:
            return self.possible_agents.index(agent)
        except ValueError:
            raise ValueError(f"unknown agent {agent!r} (agents are {self.possible_agents})") from None

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat(agent)
        return {
            "observation": np.frombuffer(self._game.observation(seat), np.float32).copy(),
            "action_mask": np.frombuffer(self._game.action_mask(seat), np.int8).copy(),
        }

    def view(self, agent: str) -> bytes:
        """The agent's view as the serialized `bete.v1.SeatView` the server would send it
        (`SeatView.FromString(...)`; `bete_engine.observation_of(...)` gives the tensor back)."""
        return self._game.view(self._seat(agent))

    @property
    def game(self) -> Game:
        """A copy of the match as it stands (all seats' cards: for analysis, not for agents)."""
        return self._game.__copy__()

    def step(self, action: Optional[int]) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: None is only for an agent whose match is over")
        # IllegalActionError (the match unchanged) for an id that is not legal now.
        self._game.apply_id(self._seat(agent), int(action))
        self._cumulative_rewards[agent] = 0
        self.rewards = {a: 0 for a in self.agents}
        over = self._game.is_over()
        settled = list(self._game.settled_balances)
        if settled != self._settled and (self.reward_mode == "deal" or over):
            base = self._settled if self.reward_mode == "deal" else [0] * self.seats
            for s, a in enumerate(self.possible_agents):
                self.rewards[a] = settled[s] - base[s]
            self._settled = settled if self.reward_mode == "deal" else self._settled
        if over:
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self._agent(self._game.to_act)
        self._accumulate_rewards()

    def render(self) -> Optional[str]:
        """`render_mode="ansi"`: the public table as text (no hidden card)."""
        if self.render_mode is None:
            return None
        g = self._game
        lines = [
            f"{g.ruleset} · {g.seats} seats · deal {g.deal} · dealer seat {g.dealer} · {g.phase}"
            + ("" if g.to_act is None else f" · seat {g.to_act} to act"),
            "balances: " + "  ".join(f"seat_{s} {b:+d}" for s, b in enumerate(g.balances))
            + f"  (on the table {g.on_table})",
        ]
        return "\n".join(lines)

    def close(self) -> None:
        pass
