"""The bete referee's own rules engine (the Rust crate bete-rules), for Python bots.

Actions are RULES.md 11.3 text ("play", "pass", "card KS", "exchange 2S 3S", ...), cards 11.2
codes ("KS", "TH"), seats ints from 0. Views are `bete.v1.SeatView` messages: a method taking a
view accepts the message object (anything with `SerializeToString()`) or its serialized bytes,
and `Game.view` returns the bytes (`SeatView.FromString(game.view(seat))`).
"""

from typing import Any, Iterable, Mapping, Optional, Protocol, Union, final

__all__ = [
    "RULES_VERSION", "RULESETS", "MAX_PLAYOUTS", "EngineError", "ConfigError", "IllegalActionError",
    "BadRecordError", "BadViewError", "UnreconciledViewError", "Game", "Record", "Determinizer",
    "replay", "deck_order", "default_config", "playouts", "NUM_ACTIONS", "OBSERVATION_SIZE",
    "INFOSTATE_SIZE", "DrawnMatch", "observation_of", "legal_action_ids_of", "action_of",
]

RULES_VERSION: int
"""The rules version this engine plays (a record's `rules_version`)."""
RULESETS: list[str]
"""Every ruleset id: "bete", "bete-ace-high", "beast", "beste-boer", ..."""
MAX_PLAYOUTS: int
"""The most playouts one call may run."""
NUM_ACTIONS: int
"""The number of action ids of the research encoding (docs/research.md): 196."""
OBSERVATION_SIZE: int
"""The length of the observation tensor (docs/research.md)."""
INFOSTATE_SIZE: int
"""The length of the information-state tensor: the observation tensor, then the seat's memory of
the deal (docs/research.md)."""

class _Message(Protocol):
    def SerializeToString(self) -> bytes: ...

_SeatViewLike = Union[bytes, _Message]
"""A bete.v1.SeatView message, or its serialized bytes."""
_EventLike = Union[bytes, _Message]
"""A bete.v1.Event message, or its serialized bytes."""
_ConfigLike = Optional[Union[Mapping[str, Any], str]]
"""A table config: None (the ruleset's defaults), a dict or its JSON text; keys left out take
their defaults."""

class EngineError(Exception):
    """Base class of every error bete_engine raises."""

class ConfigError(EngineError):
    """An unknown ruleset, a bad seat count, seed or config key."""

class IllegalActionError(EngineError):
    """An action that is not legal now, or not an action at all, with the engine's reason.
    From `replay`, the message is exactly `bete replay`'s line
    `illegal action at deal D, action A (seat S): REASON`."""

class BadRecordError(EngineError):
    """A malformed game record (what `bete replay` exits 2 for)."""

class BadViewError(EngineError):
    """A SeatView the engine cannot read or search from: not a SeatView, a spectator's view,
    or no deal in progress."""

class UnreconciledViewError(BadViewError):
    """A SeatView no deal agrees with: a stale or altered view, or another rules version."""

@final
class Game:
    """A match: its deals, every pool carried between them, and the ledger."""

    def __new__(
        cls,
        ruleset: str,
        seats: int,
        seed: Optional[str] = None,
        config: _ConfigLike = None,
        first_dealer: int = 0,
    ) -> "Game":
        """A new match. With `seed` (64 hex digits) each deal's deck is the seed's (RULES.md
        11.5), as at a server's table; without, the match waits for `provide_deck`.
        Raises ConfigError."""
    @property
    def ruleset(self) -> str: ...
    @property
    def seats(self) -> int: ...
    @property
    def deal(self) -> int:
        """The current deal's index from 0 (the last one once the match is over)."""
    @property
    def dealer(self) -> int: ...
    @property
    def phase(self) -> str:
        """"bidding", "exchange", "dealer_discard", "challenge", "trick", "awaiting_deck" or
        "match_over"."""
    @property
    def to_act(self) -> Optional[int]:
        """The seat that must act now, or None."""
    @property
    def config(self) -> dict[str, Any]:
        """The full effective config, as a record writes it."""
    @property
    def balances(self) -> list[int]:
        """Net jetons per seat."""
    @property
    def settled_balances(self) -> list[int]:
        """Each seat's balance right after the last settled deal, before the next antes."""
    @property
    def on_table(self) -> int:
        """Everything still on the table: sum(balances) + on_table == 0."""
    def is_over(self) -> bool: ...
    def legal_actions(self, seat: int) -> list[str]:
        """The seat's legal actions now; empty when it is not its turn."""
    def apply(self, seat: int, action: str) -> None:
        """Plays `action` for `seat`. Raises IllegalActionError (the match is then unchanged)."""
    def view(self, seat: Optional[int] = None) -> bytes:
        """What `seat` (None: a spectator) may see, as a serialized bete.v1.SeatView."""
    def provide_deck(self, deck: list[str]) -> None:
        """Gives a match without a seed the deck of the deal it waits for."""
    def play_out_deal(self, seed: int) -> bool:
        """Plays the current deal to its settlement with uniformly random legal actions;
        False (nothing done) when no deal waits for an action."""
    def copy(self) -> "Game":
        """A copy for search: the same state, without the record."""
    def report(self) -> dict[str, Any]:
        """What `bete replay --json` prints: balances, on_table, match_over, deal, and one summary per
        settled deal (declarer, tricks, outcome, pools_won, betes, net)."""
    def report_json(self) -> str:
        """`report()` as the exact line of JSON `bete replay --json` prints."""
    def record_json(self, pretty: bool = False) -> str:
        """The match's record (bete-record/1). Raises BadRecordError for a copy()."""
    def legal_action_ids(self, seat: int) -> list[int]:
        """The ids of the seat's legal actions (docs/research.md), ascending; empty when it is
        not its turn."""
    def action_mask(self, seat: int) -> bytes:
        """NUM_ACTIONS bytes, 1 for each legal id (`numpy.frombuffer(m, numpy.int8)`)."""
    def apply_id(self, seat: int, action_id: int) -> str:
        """Plays the action with this id; returns its 11.3 text. Raises IllegalActionError naming the id, its action
        and why (the match is then unchanged)."""
    def action_text(self, seat: int, action_id: int) -> str:
        """The action (11.3 text) an id stands for from `seat` now."""
    def action_id(self, seat: int, action: str) -> int:
        """The id of an action (11.3 text) from `seat` now."""
    def observation(self, seat: int) -> bytes:
        """The seat's observation tensor from its view alone: OBSERVATION_SIZE little-endian
        float32 (`numpy.frombuffer(t, numpy.float32)`)."""
    def play_random(self, steps: int, seed: int) -> int:
        """Plays up to `steps` uniformly random legal actions (the loop in Rust), stopping
        when no seat is to act; returns how many were played."""
    def hand(self, seat: int) -> list[str]:
        """The seat's hand, as its view shows it."""
    def view_text(self, seat: int) -> str:
        """The seat's whole view as one line of text (the OpenSpiel observation string)."""
    def __copy__(self) -> "Game":
        """An exact copy, record included."""
    def __deepcopy__(self, memo: Any) -> "Game":
        """An exact copy, record included."""

@final
class Record:
    """A parsed and checked game record (bete-record/1, RULES.md 11.4)."""

    @staticmethod
    def parse(text: str) -> "Record":
        """Raises BadRecordError naming what is wrong."""
    @staticmethod
    def from_game(game: Game) -> "Record": ...
    @property
    def ruleset(self) -> str: ...
    @property
    def seats(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self, pretty: bool = False) -> str: ...
    def replay(self) -> Game:
        """Replays every action and checks the stored balances. Raises IllegalActionError or
        BadRecordError."""

@final
class Determinizer:
    """Samples full deals that agree with everything one seat's view shows: its hand, cards
    played, exchanged-card counts, turn-ups, and the voids its opponents revealed.

    The view does not carry the table's config: pass the table's (GetTable's `config`) when it
    is not the ruleset's defaults. `events`, the seat's own bete.v1.Event messages (or their
    bytes) of the deal as received (`Bot.on_event`), let it remember the cards it set aside, drew
    and discarded, which its view no longer shows. Raises BadViewError, or UnreconciledViewError
    when no deal agrees with the view."""

    def __new__(
        cls,
        view: _SeatViewLike,
        config: _ConfigLike = None,
        events: Optional[Iterable[_EventLike]] = None,
    ) -> "Determinizer": ...
    @property
    def seat(self) -> int:
        """The seat whose view this is."""
    @property
    def legal_actions(self) -> list[str]:
        """The view's legal actions."""
    def sample(self, seed: int) -> Game:
        """One full deal that agrees with the view, as a match standing where the view stands."""
    def playouts(self, action: str, n: int, seed: int, max_ms: Optional[float] = None) -> float:
        """Mean jetons won by the deal's settlement if the seat plays `action` now and every
        seat then plays at random, over `n` sampled deals (the loop runs in Rust), or as many
        as fit in `max_ms` milliseconds (at least one). Raises IllegalActionError for an action
        not among the view's legal actions, ValueError for n outside 1..MAX_PLAYOUTS or max_ms
        outside (0, 3,600,000]."""
    def evaluate(
        self, n: int, seed: int, max_ms: Optional[float] = None
    ) -> list[tuple[str, float]]:
        """`playouts` of every legal action on the same sampled deals: (action, mean jetons)
        in the view's order of legal actions."""

@final
class DrawnMatch:
    """A match whose decks chance draws card by card (outcome: the card's number, suit * 13 +
    rank, every card left with equal probability), played by action ids, remembering what each
    seat saw: the Rust half of `bete_engine.openspiel`'s states (one call a step)."""

    def __new__(cls, ruleset: str, seats: int, config: _ConfigLike = None) -> "DrawnMatch": ...
    @property
    def player(self) -> int:
        """The player to act: a seat, -1 (chance) or -4 (the match is over)."""
    def apply(self, action: int) -> int:
        """Applies a chance outcome (a card left in the pack) or the acting seat's action id and
        returns the player to act next. Raises IllegalActionError, the match unchanged, for one
        not legal now."""
    def legal_actions(self) -> list[int]:
        """The legal actions now, ascending: the seat's ids, or at a chance node the cards left."""
    def chance_outcomes(self) -> list[tuple[int, float]]:
        """At a chance node, (card, probability) for every card left in the pack."""
    @property
    def deck(self) -> list[int]:
        """The cards drawn into the deck of the deal being drawn, in order."""
    @property
    def game(self) -> Game:
        """A copy of the match as a Game (record included)."""
    def action_text(self, player: int, action: int) -> str:
        """The action an id stands for from `player` now (11.3 text), or `deck C` for chance."""
    def observation_string(self, player: int) -> str:
        """The player's whole view as one line."""
    def information_state_string(self, player: int) -> str:
        """The player's hand at each deal, its own actions in full and the others' as the table
        saw them, one a line, then its view."""
    def observation_tensor(self, player: int) -> bytes:
        """The observation tensor, OBSERVATION_SIZE little-endian float32."""
    def information_state_tensor(self, player: int) -> bytes:
        """The information-state tensor, INFOSTATE_SIZE little-endian float32."""
    def returns(self) -> list[float]:
        """Each seat's settled balance once the match is over; zeros before."""
    def resample(self, player: int, seed: int) -> "DrawnMatch":
        """A match `player` cannot tell from this one (the other hands and the talon drawn again
        to agree with its view and its own exchanges and discard), from `seed`."""
    def __copy__(self) -> "DrawnMatch": ...
    def __deepcopy__(self, memo: Any) -> "DrawnMatch": ...

def playouts(
    view: _SeatViewLike,
    action: str,
    n: int,
    seed: int,
    config: _ConfigLike = None,
    events: Optional[Iterable[_EventLike]] = None,
    max_ms: Optional[float] = None,
) -> float:
    """`Determinizer(view, config, events).playouts(action, n, seed, max_ms)` in one call."""

def replay(text: str) -> Game:
    """Parses and replays a record's JSON text. Raises IllegalActionError (with `bete replay`'s
    exact line) or BadRecordError."""

def deck_order(
    seed: str, deal: int, ruleset: str, seats: int, config: _ConfigLike = None
) -> list[str]:
    """The deck of deal `deal` of a match with `seed` (RULES.md 11.5)."""

def default_config(ruleset: str, seats: int) -> dict[str, Any]:
    """The full effective default config of a ruleset at a table of `seats`."""

def observation_of(view: _SeatViewLike) -> bytes:
    """The observation tensor of a SeatView (OBSERVATION_SIZE little-endian float32): the same
    as `Game.observation` for that seat, from the view alone."""

def legal_action_ids_of(view: _SeatViewLike) -> list[int]:
    """The ids of a SeatView's legal actions, ascending."""

def action_of(view: _SeatViewLike, action_id: int) -> str:
    """The action (11.3 text) an id stands for in a SeatView; IllegalActionError unless it is
    one of the view's legal actions."""
