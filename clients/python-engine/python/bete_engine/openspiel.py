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
information-state tensor is the observation tensor (a summary of the view, not perfect
recall). Returns are the players' net jetons at the end of the match.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pyspiel

from . import NUM_ACTIONS, OBSERVATION_SIZE, RULESETS, Determinizer, Game, default_config, deck_order

__all__ = ["GAMES", "game_name", "BeteGame", "BeteState", "RolloutEvaluator"]

DEFAULT_PLAYERS = 4
_TERMINAL, _CHANCE = int(pyspiel.PlayerId.TERMINAL), int(pyspiel.PlayerId.CHANCE)
_SEAT_RANGE = {
    "bete": (3, 7), "bete-ace-high": (3, 7), "beast": (3, 5), "beste-boer": (3, 6),
    "lanterlui": (3, 7), "bester-bube": (3, 6), "mouche": (3, 6), "mistigri": (3, 6),
    "loo": (3, 10), "rams": (3, 5),
}
# The bound on jetons won or lost over a match: the engine's ledger is 64-bit (a Lanterlui pot
# that doubles with every bête reaches 10^14 jetons in a long random match).
_UTILITY_BOUND = float(2**63)


# The chance outcome (card, probability) of every card with n cards left, made once: a deal asks
# for 28 to 52 outcome lists.
_OUTCOMES = [[(c, 1.0 / n) for c in range(52)] if n else [] for n in range(53)]


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
    """A match in progress: chance nodes draw each deal's deck, then the seats play."""

    def __init__(self, game: BeteGame) -> None:
        super().__init__(game)
        self.game_ = Game(game.ruleset, game.players, config=game.config or None)
        self.pack = game.pack
        self.deck: list[int] = []
        self.left = list(game.pack)  # the cards not yet drawn into the deck
        # What happened, in order: ("deal", hands) and (seat, action text). Each player's
        # information-state string is its own reading of it (`_seen`).
        self.log: list[tuple[Any, Any]] = []
        self._player = self._who()

    def _who(self) -> int:
        seat = self.game_.to_act
        if seat is not None:
            return seat
        return _TERMINAL if self.game_.is_over() else _CHANCE

    def current_player(self) -> int:
        # Kept up to date by _apply_action: OpenSpiel asks for it several times a step.
        return self._player

    def _legal_actions(self, player: int) -> list[int]:
        return self.game_.legal_action_ids(player)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        row = _OUTCOMES[len(self.left)]
        return [row[c] for c in self.left]

    def _apply_action(self, action: int) -> None:
        seat = self._player
        if seat >= 0:
            # IllegalActionError, the match unchanged, for an id not legal now.
            self.log.append((seat, self.game_.apply_id(seat, action)))
            self._player = self._who()
            return
        if action not in self.left:
            raise ValueError(f"chance outcome {action} is not a card left in the pack")
        self.left.remove(action)
        self.deck.append(action)
        if not self.left:
            self.game_.provide_deck([_card_code(c) for c in self.deck])
            self.deck, self.left = [], list(self.pack)
            self.log.append(("deal", [self.game_.hand(p) for p in range(self.game_.seats)]))
            self._player = self._who()

    def _seen(self, player: int) -> list[str]:
        """What `player` saw happen, in order: its hand at each deal, its own actions in full,
        the others' as the table sees them."""
        seen = []
        for who, what in self.log:
            if who == "deal":
                seen.append(f"hand {' '.join(what[player])}")
            else:
                seen.append(f"{who} {what if who == player else _public(what)}")
        return seen

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deck {_card_code(action)}"
        return self.game_.action_text(player, action)

    def is_terminal(self) -> bool:
        return self._player == _TERMINAL

    def returns(self) -> list[float]:
        if not self.game_.is_over():
            return [0.0] * self.game_.seats
        return [float(b) for b in self.game_.settled_balances]

    def __str__(self) -> str:
        return repr(self.game_) + f" deck {len(self.deck)}/{len(self.pack)}"

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> "BeteState":
        """A state the player cannot tell from this one: the other seats' hands and the talon
        drawn again to agree with its view (the engine's Determinizer), for information-set
        search such as OpenSpiel's ISMCTSBot. Only while a deal is in progress."""
        seed = int(probability_sampler() * 2**63)
        d = Determinizer(self.game_.view(player_id), config=self.get_game().config or None)
        other = BeteState(self.get_game())
        other.game_ = d.sample(seed)
        other._player = other._who()
        # The player's own reading of the log is the same; the others' hands in it are not
        # known to it, and are replaced by the sample's dealt hands where the view cannot tell.
        other.log = [
            ("deal", [h if p == player_id else [] for p, h in enumerate(what)]) if who == "deal" else (who, what)
            for who, what in self.log
        ]
        return other


def _public(text: str) -> str:
    """What the other seats see of an action: an exchange's count, not its cards; a face-down
    lead and a discard, not their card."""
    verb, _, rest = text.partition(" ")
    if verb == "exchange":
        return f"exchange {len(rest.split())}"
    if verb in ("hidden", "discard"):
        return verb
    return text


class BeteObserver:
    """The observation tensor (docs/research.md) and strings of one player's view."""

    def __init__(self, iig_obs_type: pyspiel.IIGObservationType) -> None:
        self.perfect_recall = iig_obs_type.perfect_recall
        self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: BeteState, player: int) -> None:
        self.tensor[:] = np.frombuffer(state.game_.observation(player), np.float32)

    def string_from(self, state: BeteState, player: int) -> str:
        view = state.game_.view_text(player)
        if self.perfect_recall:
            return "\n".join(state._seen(player) + [view])
        return view


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
                    rest = [c for c in state.pack if c not in deck]
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
