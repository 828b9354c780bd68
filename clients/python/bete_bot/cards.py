"""Card codes of RULES.md 11.2 and the card order of each ruleset.

A card is two characters, rank then suit: ranks ``2 3 4 5 6 7 8 9 T J Q K A`` (``T`` is the ten),
suits ``S H D C``. Parsing is case-insensitive; output is upper case. The ranking helpers give a
bot enough of the rules to compare cards in a trick; the server stays the judge of legality.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional, Sequence

RANKS = "23456789TJQKA"
SUITS = "SHDC"
RED = frozenset("HD")

#: Ruleset ids of RULES.md 11.1 by their ``bete.v1.Ruleset`` enum number.
RULESET_IDS = {
    1: "bete",
    2: "bete-ace-high",
    3: "beast",
    4: "beste-boer",
    5: "lanterlui",
    6: "bester-bube",
    7: "mouche",
    8: "mistigri",
    9: "loo",
    10: "rams",
}
RULESET_NUMBERS = {name: number for number, name in RULESET_IDS.items()}

#: The rulesets whose top trumps are the two jacks of the trump colour (bowers).
BOWER_RULESETS = frozenset({"beste-boer", "lanterlui", "bester-bube"})

#: The rulesets where the Jack of clubs (Mistigri, MI2; Pam, LO2 with the default
#: ``pam = "jack_of_clubs"``) is a trump above every other card.
TOP_JACK_OF_CLUBS_RULESETS = frozenset({"mistigri", "loo"})

#: Ace-high rulesets without bowers: Loo (LO2) and Rams (RA2, default ``ranking``).
_ACE_HIGH_RULESETS = frozenset({"bete-ace-high", "loo", "rams"})

# High to low; ranks not in a ruleset's pack simply never occur.
_ECARTE = "KQJAT98765432"  # bete, beast (B3, BS2)
_ACE_HIGH_BETE = "AKQJT98765432"  # bete-ace-high (AH1)
_PLAIN_ACE_HIGH = "AKQJT98765432"  # plain suits of the bower games
_TRUMP_WITHOUT_JACKS = "AKQT98765432"  # trumps below the two bowers


class CardError(ValueError):
    """A token that is not a card code; the message names the token."""


class Card(NamedTuple):
    """A parsed card: ``rank`` one of RANKS, ``suit`` one of SUITS."""

    rank: str
    suit: str

    def __str__(self) -> str:
        return self.rank + self.suit


def parse_card(token: str) -> Card:
    """Parses a card code case-insensitively (``"ks"`` -> ``Card("K", "S")``)."""
    if not isinstance(token, str) or len(token) != 2:
        raise CardError(f"not a card: {token!r}")
    rank, suit = token[0].upper(), token[1].upper()
    if rank not in RANKS or suit not in SUITS:
        raise CardError(f"not a card: {token!r}")
    return Card(rank, suit)


def normalize(token: str) -> str:
    """Returns the canonical upper-case code of a card (``"th"`` -> ``"TH"``)."""
    return str(parse_card(token))


def format_card(card: Card | str) -> str:
    """Formats a card (or re-formats a code) in canonical notation."""
    return normalize(str(card))


def parse_cards(text: str | Iterable[str]) -> list[str]:
    """Parses space-separated codes (or an iterable of codes) into canonical codes."""
    tokens = text.split() if isinstance(text, str) else list(text)
    return [normalize(t) for t in tokens]


def suit_of(card: str) -> str:
    """The printed suit letter of a card code."""
    return parse_card(card).suit


def rank_of(card: str) -> str:
    """The rank letter of a card code."""
    return parse_card(card).rank


def same_colour_suit(suit: str) -> str:
    """The other suit of the same colour: S<->C, H<->D."""
    return {"S": "C", "C": "S", "H": "D", "D": "H"}[suit.upper()]


def ruleset_id(ruleset: int | str) -> str:
    """A ruleset id from a ``bete.v1.Ruleset`` number or an id (``1`` -> ``"bete"``)."""
    if isinstance(ruleset, str):
        if ruleset not in RULESET_NUMBERS:
            raise ValueError(f"unknown ruleset {ruleset!r}; known: {', '.join(RULESET_NUMBERS)}")
        return ruleset
    return RULESET_IDS[int(ruleset)]


def effective_suit(card: str, trump: Optional[str], ruleset: int | str) -> str:
    """The suit a card belongs to in play: in the bower games the jack of the trump colour is a
    trump; in Mistigri and Loo the Jack of clubs (Mistigri, Pam) is a trump."""
    c = parse_card(card)
    rid = ruleset_id(ruleset)
    if trump and rid in BOWER_RULESETS and c.rank == "J" and c.suit == same_colour_suit(trump):
        return trump
    if trump and rid in TOP_JACK_OF_CLUBS_RULESETS and str(c) == "JC":
        return trump
    return c.suit


def strength(card: str, trump: Optional[str], ruleset: int | str) -> int:
    """A number that orders cards for trick-taking: any trump beats any plain card; higher wins.

    Plain cards of different suits get comparable numbers but never beat each other in a trick:
    use :func:`trick_winner` for that.
    """
    rid = ruleset_id(ruleset)
    c = parse_card(card)
    suit = effective_suit(card, trump, rid)
    is_trump = bool(trump) and suit == trump
    if rid in TOP_JACK_OF_CLUBS_RULESETS and str(c) == "JC" and is_trump:
        return 300  # Mistigri, Pam: above every trump
    if rid in BOWER_RULESETS:
        if is_trump:
            if c.rank == "J":
                return 200 if c.suit == trump else 199
            order = _TRUMP_WITHOUT_JACKS
        else:
            order = _PLAIN_ACE_HIGH
    else:
        # Écarté in bete, beast, mouche, mistigri (B3, BS2, MO3); ace high in the others.
        order = _ACE_HIGH_BETE if rid in _ACE_HIGH_RULESETS else _ECARTE
    value = len(order) - order.index(c.rank)
    return value + (100 if is_trump else 0)


def beats(card: str, best: str, led_suit: str, trump: Optional[str], ruleset: int | str) -> bool:
    """True when ``card`` played now would beat ``best``, the winning card so far of a trick led in ``led_suit``."""
    cs, bs = effective_suit(card, trump, ruleset), effective_suit(best, trump, ruleset)
    if cs == bs:
        return strength(card, trump, ruleset) > strength(best, trump, ruleset)
    if trump and cs == trump:
        return True
    return False


def trick_winner(cards: Sequence[str], trump: Optional[str], ruleset: int | str) -> int:
    """Index in ``cards`` (play order, first = lead) of the card winning the trick so far."""
    if not cards:
        raise ValueError("empty trick")
    led = effective_suit(cards[0], trump, ruleset)
    best = 0
    for i in range(1, len(cards)):
        if beats(cards[i], cards[best], led, trump, ruleset):
            best = i
    return best


def suit_letter(suit_enum: int) -> Optional[str]:
    """The letter of a ``bete.v1.Suit`` number (1..4 -> S, H, D, C); None for UNSPECIFIED."""
    return SUITS[suit_enum - 1] if 1 <= suit_enum <= 4 else None


def sort_key(card: str) -> tuple[int, int]:
    """The server's hand order: suit S, H, D, C, then rank ascending."""
    c = parse_card(card)
    return SUITS.index(c.suit), RANKS.index(c.rank)
