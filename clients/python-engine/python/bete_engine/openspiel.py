"""OpenSpiel games for every bete ruleset (docs/research.md).

Importing this module registers `python_bete_<ruleset>` (dashes as underscores: `python_bete_bete`,
`python_bete_beste_boer`, …) with pyspiel:

    import pyspiel
    import bete_engine.openspiel
    game = pyspiel.load_game("python_bete_lanterlui", {"players": 5, "rounds": 1})

A game is one match played by the referee's own engine. Parameters: `players` (the seat count)
and the ruleset's config keys with their defaults (`bete_engine.default_config`). Each deal
begins with chance nodes that draw the deck card by card (every remaining card of the pack with
equal probability; the outcome is the card's id 0..51, suit * 13 + rank). Player actions are the
fixed ids of docs/research.md. Observation strings and tensors come from the player's view
alone; the information-state string adds everything the player saw happen, in order; the
information-state tensor adds to the observation tensor what the player remembers of the deal
(its dealt hand, the cards it set aside, drew and discarded, every trick card by card, the words
spoken in order). Returns are the players' net jetons at the end of the match. The match itself
lives in Rust (`bete_engine.DrawnMatch`): a step is one call into it.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pyspiel

from . import INFOSTATE_SIZE, NUM_ACTIONS, OBSERVATION_SIZE, RULESETS, DrawnMatch, Game, default_config, deck_order

__all__ = ["GAMES", "game_name", "BeteGame", "BeteState", "RolloutEvaluator"]

DEFAULT_PLAYERS = 4
_TERMINAL, _CHANCE = int(pyspiel.PlayerId.TERMINAL), int(pyspiel.PlayerId.CHANCE)
# DrawnMatch answers with pyspiel's ids for chance and the end.
assert (_TERMINAL, _CHANCE) == (-4, -1), "pyspiel's player ids changed"
_SEAT_RANGE = {
    "bete": (3, 7), "bete-ace-high": (3, 7), "beast": (3, 5), "beste-boer": (3, 6),
    "lanterlui": (3, 7), "bester-bube": (3, 6), "mouche": (3, 6), "mistigri": (3, 6),
    "loo": (3, 10), "rams": (3, 5),
}
# The bound on jetons won or lost over a match: the engine's ledger is 64-bit (a Lanterlui pot
# that doubles with every bête reaches 10^14 jetons in a long random match).
_UTILITY_BOUND = float(2**63)


def game_name(ruleset: str) -> str:
    """The pyspiel short name of a ruleset's game: `python_bete_` + its id, dashes as underscores."""
    return "python_bete_" + ruleset.replace("-", "_")


def _card_code(i: int) -> str:
    return "23456789TJQKA"[i % 13] + "SHDC"[i // 13]


def _card_id(code: str) -> int:
    return "SHDC".index(code[1]) * 13 + "23456789TJQKA".index(code[0])


def _game_type(ruleset: str) -> pyspiel.GameType:
    lo, hi = _SEAT_RANGE[ruleset]
    params = {"players": DEFAULT_PLAYERS, **default_config(ruleset, DEFAULT_PLAYERS)}
    return pyspiel.GameType(
        short_name=game_name(ruleset),
        long_name=f"bete {ruleset} (the bete referee's engine)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        # Pools can be left on the table when a match ends: the returns need not sum to zero.
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=hi,
        min_num_players=lo,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


class BeteGame(pyspiel.Game):
    """One ruleset's match. Raises `bete_engine.ConfigError` for a bad seat count or config."""

    ruleset: str = ""

    def __init__(self, params: Optional[dict[str, Any]] = None) -> None:
        params = dict(params or {})
        try:
            players = int(params.pop("players", DEFAULT_PLAYERS))
            spec_defaults = default_config(self.ruleset, DEFAULT_PLAYERS)
            # Keys left at their spec default take the seat count's own default.
            config = {k: v for k, v in params.items() if spec_defaults.get(k) != v}
            probe = Game(self.ruleset, players, seed="00" * 32, config=config or None)
        except Exception:
            # pybind11 needs its base built even when the game is refused: an object without it
            # crashes the interpreter when a traceback shows it.
            super().__init__(_game_type(self.ruleset), pyspiel.GameInfo(NUM_ACTIONS, 52, 3, -1.0, 1.0, 0.0, 1), {})
            raise
        self.players = players
        self.config = config
        self.pack = sorted(_card_id(c) for c in deck_order("00" * 32, 0, self.ruleset, players, config or None))
        full = probe.config
        deals = players * int(full.get("rounds", 2)) + int(full.get("max_extra_deals", 8)) + 1
        super().__init__(
            _game_type(self.ruleset),
            pyspiel.GameInfo(
                num_distinct_actions=NUM_ACTIONS,
                max_chance_outcomes=52,
                num_players=players,
                min_utility=-_UTILITY_BOUND,
                max_utility=_UTILITY_BOUND,
                max_game_length=deals * (len(self.pack) + players * 16),
            ),
            {"players": players, **params},
        )

    def new_initial_state(self) -> "BeteState":
        return BeteState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> "BeteObserver":
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        return BeteObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


class BeteState(pyspiel.State):
    """A match in progress: chance nodes draw each deal's deck, then the seats play.

    The match lives in Rust (`bete_engine.DrawnMatch`, attribute `match_`): a step is one call
    into it, and strings and tensors are built only when asked. `legal_actions`,
    `is_chance_node` and `is_player_node` are answered here in Python: the same answers as
    pyspiel's C++ path (which C++ callers such as `random_sim_test` take), without its several
    calls back into Python a step."""

    def __init__(self, game: BeteGame, match: Optional[DrawnMatch] = None) -> None:
        super().__init__(game)
        self.match_ = match if match is not None else DrawnMatch(game.ruleset, game.players, game.config or None)
        self._player = self.match_.player

    def current_player(self) -> int:
        return self._player

    def is_terminal(self) -> bool:
        return self._player == _TERMINAL

    def is_chance_node(self) -> bool:
        return self._player == _CHANCE

    def is_player_node(self) -> bool:
        return self._player >= 0

    def legal_actions(self, player: Optional[int] = None) -> list[int]:
        # As pyspiel's PyState::LegalActions: none once over, the outcomes at a chance node
        # whoever asks, the acting seat's ids, none for another seat.
        if player is None or player == self._player or self._player < 0:
            return self.match_.legal_actions()
        if player < 0:
            raise ValueError(f"legal_actions asked for pseudo-player {player}")
        return []

    def _legal_actions(self, player: int) -> list[int]:
        return self.match_.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.match_.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        # IllegalActionError, the match unchanged, for an outcome or id not legal now.
        self._player = self.match_.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.match_.action_text(player, action)

    @property
    def game_(self) -> Game:
        """A copy of the match as a `bete_engine.Game` (views, hands, balances, record)."""
        return self.match_.game

    @property
    def deck(self) -> list[int]:
        """The cards drawn so far into the deck of the deal being drawn."""
        return self.match_.deck

    def returns(self) -> list[float]:
        return self.match_.returns()

    def __str__(self) -> str:
        return repr(self.match_)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> "BeteState":
        """A state the player cannot tell from this one: the other seats' hands and the talon
        drawn again to agree with its view and with what it saw of its own moves (the cards it
        set aside, drew and discarded: the engine's Determinizer), for information-set search
        such as OpenSpiel's ISMCTSBot. Only while a seat is to act in a deal."""
        seed = int(probability_sampler() * 2**63)
        return BeteState(self.get_game(), self.match_.resample(player_id, seed))


class BeteObserver:
    """The observation or information-state tensor (docs/research.md) and strings of one
    player's view: `perfect_recall` picks the information state."""

    def __init__(self, iig_obs_type: pyspiel.IIGObservationType) -> None:
        self.perfect_recall = iig_obs_type.perfect_recall
        self.tensor = np.zeros(INFOSTATE_SIZE if self.perfect_recall else OBSERVATION_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: BeteState, player: int) -> None:
        m = state.match_
        t = m.information_state_tensor(player) if self.perfect_recall else m.observation_tensor(player)
        self.tensor[:] = np.frombuffer(t, np.float32)

    def string_from(self, state: BeteState, player: int) -> str:
        m = state.match_
        return m.information_state_string(player) if self.perfect_recall else m.observation_string(player)


class RolloutEvaluator:
    """An evaluator for OpenSpiel's MCTS and ISMCTS bots (`evaluate`, `prior`) whose rollouts
    play the rest of the match at random in Rust (`Game.play_random`), new decks shuffled here:
    the mean returns of `n_rollouts` of them."""

    def __init__(self, n_rollouts: int = 1, seed: int = 0) -> None:
        self.n_rollouts = n_rollouts
        self._rng = np.random.default_rng(seed)

    def evaluate(self, state: BeteState) -> np.ndarray:
        total = np.zeros(state.game_.seats)
        for _ in range(self.n_rollouts):
            g = state.game_.copy()
            deck = list(state.deck)
            while not g.is_over():
                if g.to_act is None:
                    rest = [c for c in state.get_game().pack if c not in deck]
                    deck += [rest[i] for i in self._rng.permutation(len(rest))]
                    g.provide_deck([_card_code(c) for c in deck])
                    deck = []
                g.play_random(1_000_000, int(self._rng.integers(2**63)))
            total += np.array(g.settled_balances, dtype=float)
        return total / self.n_rollouts

    def prior(self, state: BeteState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


GAMES: dict[str, type] = {}
for _ruleset in RULESETS:
    _cls = type(f"BeteGame_{_ruleset.replace('-', '_')}", (BeteGame,), {"ruleset": _ruleset})
    GAMES[_ruleset] = _cls
    pyspiel.register_game(_game_type(_ruleset), _cls)
