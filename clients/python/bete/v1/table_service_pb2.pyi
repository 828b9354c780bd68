import datetime

from bete.v1 import cards_pb2 as _cards_pb2
from bete.v1 import game_pb2 as _game_pb2
from bete.v1 import table_pb2 as _table_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateTableRequest(_message.Message):
    __slots__ = ("ruleset", "seats", "config", "decision_deadline_ms", "house_bots", "visibility", "seed", "first_dealer")
    class ConfigEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    DECISION_DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEALER_FIELD_NUMBER: _ClassVar[int]
    ruleset: _cards_pb2.Ruleset
    seats: int
    config: _containers.ScalarMap[str, str]
    decision_deadline_ms: int
    house_bots: _containers.RepeatedCompositeFieldContainer[_table_pb2.HouseBotSeat]
    visibility: _table_pb2.Visibility
    seed: str
    first_dealer: int
    def __init__(self, ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., seats: _Optional[int] = ..., config: _Optional[_Mapping[str, str]] = ..., decision_deadline_ms: _Optional[int] = ..., house_bots: _Optional[_Iterable[_Union[_table_pb2.HouseBotSeat, _Mapping]]] = ..., visibility: _Optional[_Union[_table_pb2.Visibility, str]] = ..., seed: _Optional[str] = ..., first_dealer: _Optional[int] = ...) -> None: ...

class CreateTableResponse(_message.Message):
    __slots__ = ("table", "invitation_code")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    INVITATION_CODE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.Table
    invitation_code: str
    def __init__(self, table: _Optional[_Union[_table_pb2.Table, _Mapping]] = ..., invitation_code: _Optional[str] = ...) -> None: ...

class GetTableRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class GetTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.Table
    def __init__(self, table: _Optional[_Union[_table_pb2.Table, _Mapping]] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "ruleset", "state")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    ruleset: _cards_pb2.Ruleset
    state: _table_pb2.TableState
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., state: _Optional[_Union[_table_pb2.TableState, str]] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("tables", "next_page_token")
    TABLES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[_table_pb2.Table]
    next_page_token: str
    def __init__(self, tables: _Optional[_Iterable[_Union[_table_pb2.Table, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class JoinTableRequest(_message.Message):
    __slots__ = ("table_id", "seat", "invitation_code")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    INVITATION_CODE_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    invitation_code: str
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., invitation_code: _Optional[str] = ...) -> None: ...

class JoinTableResponse(_message.Message):
    __slots__ = ("seat", "table")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    table: _table_pb2.Table
    def __init__(self, seat: _Optional[int] = ..., table: _Optional[_Union[_table_pb2.Table, _Mapping]] = ...) -> None: ...

class LeaveTableRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class LeaveTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.Table
    def __init__(self, table: _Optional[_Union[_table_pb2.Table, _Mapping]] = ...) -> None: ...

class SubmitActionRequest(_message.Message):
    __slots__ = ("table_id", "action", "expected_seq", "request_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQ_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    action: _cards_pb2.Action
    expected_seq: int
    request_id: str
    def __init__(self, table_id: _Optional[str] = ..., action: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ..., expected_seq: _Optional[int] = ..., request_id: _Optional[str] = ...) -> None: ...

class SubmitActionResponse(_message.Message):
    __slots__ = ("seq", "replayed")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    seq: int
    replayed: bool
    def __init__(self, seq: _Optional[int] = ..., replayed: _Optional[bool] = ...) -> None: ...

class SubmitActionsRequest(_message.Message):
    __slots__ = ("table_id", "action", "expected_seq", "request_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQ_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    action: _cards_pb2.Action
    expected_seq: int
    request_id: str
    def __init__(self, table_id: _Optional[str] = ..., action: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ..., expected_seq: _Optional[int] = ..., request_id: _Optional[str] = ...) -> None: ...

class SubmitActionsResponse(_message.Message):
    __slots__ = ("index", "request_id", "accepted", "rejected")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    index: int
    request_id: str
    accepted: SubmitActionResponse
    rejected: ActionRejected
    def __init__(self, index: _Optional[int] = ..., request_id: _Optional[str] = ..., accepted: _Optional[_Union[SubmitActionResponse, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("code", "message", "reason", "domain", "metadata", "field_violations")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    FIELD_VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    reason: str
    domain: str
    metadata: _containers.ScalarMap[str, str]
    field_violations: _containers.RepeatedCompositeFieldContainer[FieldViolation]
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., domain: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., field_violations: _Optional[_Iterable[_Union[FieldViolation, _Mapping]]] = ...) -> None: ...

class FieldViolation(_message.Message):
    __slots__ = ("field", "description")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    field: str
    description: str
    def __init__(self, field: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class GetSeatViewRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class GetSeatViewResponse(_message.Message):
    __slots__ = ("view",)
    VIEW_FIELD_NUMBER: _ClassVar[int]
    view: _game_pb2.SeatView
    def __init__(self, view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ...) -> None: ...

class WatchTableRequest(_message.Message):
    __slots__ = ("table_id", "from_seq")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    from_seq: int
    def __init__(self, table_id: _Optional[str] = ..., from_seq: _Optional[int] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("time", "last_seq")
    TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    last_seq: int
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_seq: _Optional[int] = ...) -> None: ...

class Resync(_message.Message):
    __slots__ = ("from_seq", "reason")
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    from_seq: int
    reason: str
    def __init__(self, from_seq: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class WatchTableResponse(_message.Message):
    __slots__ = ("snapshot", "event", "heartbeat", "resync")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    RESYNC_FIELD_NUMBER: _ClassVar[int]
    snapshot: _game_pb2.SeatView
    event: _game_pb2.Event
    heartbeat: Heartbeat
    resync: Resync
    def __init__(self, snapshot: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., resync: _Optional[_Union[Resync, _Mapping]] = ...) -> None: ...

class WatchBotRequest(_message.Message):
    __slots__ = ("from_seq", "exclusive")
    class FromSeqEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    from_seq: _containers.ScalarMap[str, int]
    exclusive: bool
    def __init__(self, from_seq: _Optional[_Mapping[str, int]] = ..., exclusive: _Optional[bool] = ...) -> None: ...

class Seated(_message.Message):
    __slots__ = ("table_id", "seat", "table")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    table: _table_pb2.Table
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., table: _Optional[_Union[_table_pb2.Table, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("table_id", "seq", "view")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seq: int
    view: _game_pb2.SeatView
    def __init__(self, table_id: _Optional[str] = ..., seq: _Optional[int] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ...) -> None: ...

class WatchBotResponse(_message.Message):
    __slots__ = ("table_id", "seated", "snapshot", "event", "decision", "heartbeat", "resync")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEATED_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    RESYNC_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seated: Seated
    snapshot: _game_pb2.SeatView
    event: _game_pb2.Event
    decision: DecisionRequest
    heartbeat: Heartbeat
    resync: Resync
    def __init__(self, table_id: _Optional[str] = ..., seated: _Optional[_Union[Seated, _Mapping]] = ..., snapshot: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., resync: _Optional[_Union[Resync, _Mapping]] = ...) -> None: ...

class GetGameRecordRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class GetGameRecordResponse(_message.Message):
    __slots__ = ("record_json", "seed_chosen", "seed_sha256")
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    SEED_SHA256_FIELD_NUMBER: _ClassVar[int]
    record_json: str
    seed_chosen: bool
    seed_sha256: str
    def __init__(self, record_json: _Optional[str] = ..., seed_chosen: _Optional[bool] = ..., seed_sha256: _Optional[str] = ...) -> None: ...
