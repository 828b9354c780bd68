import datetime

from bete.v1 import cards_pb2 as _cards_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TableState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TABLE_STATE_UNSPECIFIED: _ClassVar[TableState]
    TABLE_STATE_WAITING: _ClassVar[TableState]
    TABLE_STATE_PLAYING: _ClassVar[TableState]
    TABLE_STATE_FINISHED: _ClassVar[TableState]

class Visibility(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VISIBILITY_UNSPECIFIED: _ClassVar[Visibility]
    VISIBILITY_LISTED: _ClassVar[Visibility]
    VISIBILITY_PRIVATE: _ClassVar[Visibility]

class HouseBotPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOUSE_BOT_POLICY_UNSPECIFIED: _ClassVar[HouseBotPolicy]
    HOUSE_BOT_POLICY_RANDOM: _ClassVar[HouseBotPolicy]
    HOUSE_BOT_POLICY_HEURISTIC: _ClassVar[HouseBotPolicy]
    HOUSE_BOT_POLICY_SEARCH: _ClassVar[HouseBotPolicy]

class OccupantKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OCCUPANT_KIND_UNSPECIFIED: _ClassVar[OccupantKind]
    OCCUPANT_KIND_EMPTY: _ClassVar[OccupantKind]
    OCCUPANT_KIND_BOT: _ClassVar[OccupantKind]
    OCCUPANT_KIND_HOUSE_BOT: _ClassVar[OccupantKind]
TABLE_STATE_UNSPECIFIED: TableState
TABLE_STATE_WAITING: TableState
TABLE_STATE_PLAYING: TableState
TABLE_STATE_FINISHED: TableState
VISIBILITY_UNSPECIFIED: Visibility
VISIBILITY_LISTED: Visibility
VISIBILITY_PRIVATE: Visibility
HOUSE_BOT_POLICY_UNSPECIFIED: HouseBotPolicy
HOUSE_BOT_POLICY_RANDOM: HouseBotPolicy
HOUSE_BOT_POLICY_HEURISTIC: HouseBotPolicy
HOUSE_BOT_POLICY_SEARCH: HouseBotPolicy
OCCUPANT_KIND_UNSPECIFIED: OccupantKind
OCCUPANT_KIND_EMPTY: OccupantKind
OCCUPANT_KIND_BOT: OccupantKind
OCCUPANT_KIND_HOUSE_BOT: OccupantKind

class HouseBotSeat(_message.Message):
    __slots__ = ("seat", "policy", "search_budget_ms")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    SEARCH_BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    policy: HouseBotPolicy
    search_budget_ms: int
    def __init__(self, seat: _Optional[int] = ..., policy: _Optional[_Union[HouseBotPolicy, str]] = ..., search_budget_ms: _Optional[int] = ...) -> None: ...

class TableSeat(_message.Message):
    __slots__ = ("seat", "occupant", "bot_id", "bot_name", "policy", "strikes", "search_budget_ms")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OCCUPANT_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    SEARCH_BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    occupant: OccupantKind
    bot_id: str
    bot_name: str
    policy: HouseBotPolicy
    strikes: int
    search_budget_ms: int
    def __init__(self, seat: _Optional[int] = ..., occupant: _Optional[_Union[OccupantKind, str]] = ..., bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., policy: _Optional[_Union[HouseBotPolicy, str]] = ..., strikes: _Optional[int] = ..., search_budget_ms: _Optional[int] = ...) -> None: ...

class Table(_message.Message):
    __slots__ = ("table_id", "ruleset", "seat_count", "config", "state", "seats", "decision_deadline_ms", "visibility", "last_seq", "created_by", "created_at", "first_dealer", "ladder_id", "ladder_match_id", "seed_sha256", "seed_chosen", "fiche_value")
    class ConfigEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    DECISION_DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEALER_FIELD_NUMBER: _ClassVar[int]
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_SHA256_FIELD_NUMBER: _ClassVar[int]
    SEED_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    FICHE_VALUE_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    ruleset: _cards_pb2.Ruleset
    seat_count: int
    config: _containers.ScalarMap[str, str]
    state: TableState
    seats: _containers.RepeatedCompositeFieldContainer[TableSeat]
    decision_deadline_ms: int
    visibility: Visibility
    last_seq: int
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    first_dealer: int
    ladder_id: str
    ladder_match_id: str
    seed_sha256: str
    seed_chosen: bool
    fiche_value: int
    def __init__(self, table_id: _Optional[str] = ..., ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., seat_count: _Optional[int] = ..., config: _Optional[_Mapping[str, str]] = ..., state: _Optional[_Union[TableState, str]] = ..., seats: _Optional[_Iterable[_Union[TableSeat, _Mapping]]] = ..., decision_deadline_ms: _Optional[int] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., last_seq: _Optional[int] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., first_dealer: _Optional[int] = ..., ladder_id: _Optional[str] = ..., ladder_match_id: _Optional[str] = ..., seed_sha256: _Optional[str] = ..., seed_chosen: _Optional[bool] = ..., fiche_value: _Optional[int] = ...) -> None: ...
