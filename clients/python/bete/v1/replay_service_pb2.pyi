from bete.v1 import cards_pb2 as _cards_pb2
from bete.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AnalyseTableRequest(_message.Message):
    __slots__ = ("table_id", "budget_ms")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    budget_ms: int
    def __init__(self, table_id: _Optional[str] = ..., budget_ms: _Optional[int] = ...) -> None: ...

class AnalyseTableResponse(_message.Message):
    __slots__ = ("decisions", "complete", "budget_ms")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[DecisionAnalysis]
    complete: bool
    budget_ms: int
    def __init__(self, decisions: _Optional[_Iterable[_Union[DecisionAnalysis, _Mapping]]] = ..., complete: _Optional[bool] = ..., budget_ms: _Optional[int] = ...) -> None: ...

class DecisionAnalysis(_message.Message):
    __slots__ = ("step", "seat", "played", "best", "cost", "samples")
    STEP_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    BEST_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    step: int
    seat: int
    played: _cards_pb2.Action
    best: _cards_pb2.Action
    cost: float
    samples: int
    def __init__(self, step: _Optional[int] = ..., seat: _Optional[int] = ..., played: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ..., best: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ..., cost: _Optional[float] = ..., samples: _Optional[int] = ...) -> None: ...

class ReplayRecordRequest(_message.Message):
    __slots__ = ("table_id", "record_json")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    record_json: str
    def __init__(self, table_id: _Optional[str] = ..., record_json: _Optional[str] = ...) -> None: ...

class ReplayRecordResponse(_message.Message):
    __slots__ = ("ruleset", "seats", "record_json", "steps", "balances")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    BALANCES_FIELD_NUMBER: _ClassVar[int]
    ruleset: _cards_pb2.Ruleset
    seats: int
    record_json: str
    steps: _containers.RepeatedCompositeFieldContainer[ReplayStep]
    balances: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., seats: _Optional[int] = ..., record_json: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[ReplayStep, _Mapping]]] = ..., balances: _Optional[_Iterable[int]] = ...) -> None: ...

class ReplayStep(_message.Message):
    __slots__ = ("index", "deal", "seat", "action", "auto", "view", "hands", "events")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    AUTO_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    index: int
    deal: int
    seat: int
    action: _cards_pb2.Action
    auto: bool
    view: _game_pb2.SeatView
    hands: _containers.RepeatedCompositeFieldContainer[_game_pb2.SeatCards]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, index: _Optional[int] = ..., deal: _Optional[int] = ..., seat: _Optional[int] = ..., action: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ..., auto: _Optional[bool] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., hands: _Optional[_Iterable[_Union[_game_pb2.SeatCards, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...
