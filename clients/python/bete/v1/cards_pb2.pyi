from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]

class Ruleset(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RULESET_UNSPECIFIED: _ClassVar[Ruleset]
    RULESET_BETE: _ClassVar[Ruleset]
    RULESET_BETE_ACE_HIGH: _ClassVar[Ruleset]
    RULESET_BEAST: _ClassVar[Ruleset]
    RULESET_BESTE_BOER: _ClassVar[Ruleset]
    RULESET_LANTERLUI: _ClassVar[Ruleset]
    RULESET_BESTER_BUBE: _ClassVar[Ruleset]
    RULESET_MOUCHE: _ClassVar[Ruleset]
    RULESET_MISTIGRI: _ClassVar[Ruleset]
    RULESET_LOO: _ClassVar[Ruleset]
    RULESET_RAMS: _ClassVar[Ruleset]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_PASS: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
    ACTION_KIND_CONTRE: _ClassVar[ActionKind]
    ACTION_KIND_DROP: _ClassVar[ActionKind]
    ACTION_KIND_STAND: _ClassVar[ActionKind]
    ACTION_KIND_EXCHANGE: _ClassVar[ActionKind]
    ACTION_KIND_DISCARD: _ClassVar[ActionKind]
    ACTION_KIND_CHALLENGE: _ClassVar[ActionKind]
    ACTION_KIND_DECLINE: _ClassVar[ActionKind]
    ACTION_KIND_CARD: _ClassVar[ActionKind]
    ACTION_KIND_HIDDEN: _ClassVar[ActionKind]
    ACTION_KIND_WIDOW: _ClassVar[ActionKind]
    ACTION_KIND_GENERAL: _ClassVar[ActionKind]
SUIT_UNSPECIFIED: Suit
SUIT_SPADES: Suit
SUIT_HEARTS: Suit
SUIT_DIAMONDS: Suit
SUIT_CLUBS: Suit
RULESET_UNSPECIFIED: Ruleset
RULESET_BETE: Ruleset
RULESET_BETE_ACE_HIGH: Ruleset
RULESET_BEAST: Ruleset
RULESET_BESTE_BOER: Ruleset
RULESET_LANTERLUI: Ruleset
RULESET_BESTER_BUBE: Ruleset
RULESET_MOUCHE: Ruleset
RULESET_MISTIGRI: Ruleset
RULESET_LOO: Ruleset
RULESET_RAMS: Ruleset
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_PASS: ActionKind
ACTION_KIND_PLAY: ActionKind
ACTION_KIND_CONTRE: ActionKind
ACTION_KIND_DROP: ActionKind
ACTION_KIND_STAND: ActionKind
ACTION_KIND_EXCHANGE: ActionKind
ACTION_KIND_DISCARD: ActionKind
ACTION_KIND_CHALLENGE: ActionKind
ACTION_KIND_DECLINE: ActionKind
ACTION_KIND_CARD: ActionKind
ACTION_KIND_HIDDEN: ActionKind
ACTION_KIND_WIDOW: ActionKind
ACTION_KIND_GENERAL: ActionKind

class Action(_message.Message):
    __slots__ = ("kind", "cards", "text")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    cards: _containers.RepeatedScalarFieldContainer[str]
    text: str
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., cards: _Optional[_Iterable[str]] = ..., text: _Optional[str] = ...) -> None: ...
