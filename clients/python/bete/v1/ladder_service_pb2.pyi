import datetime

from bete.v1 import cards_pb2 as _cards_pb2
from bete.v1 import table_pb2 as _table_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LadderMatchState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LADDER_MATCH_STATE_UNSPECIFIED: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_PLAYING: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_RATED: _ClassVar[LadderMatchState]
LADDER_MATCH_STATE_UNSPECIFIED: LadderMatchState
LADDER_MATCH_STATE_PLAYING: LadderMatchState
LADDER_MATCH_STATE_RATED: LadderMatchState

class Ladder(_message.Message):
    __slots__ = ("ladder_id", "ruleset", "seat_count", "config", "deals_per_match", "decision_deadline_ms", "duplicate", "max_matches_per_day", "max_tables_per_bot", "house_entrants", "max_strikes_per_match", "entrants", "online", "matches_rated", "search_budget_ms", "house_fill_after_ms", "strike_window", "max_strike_share", "strike_cooldown_ms", "luck_adjusted")
    class ConfigEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    DEALS_PER_MATCH_FIELD_NUMBER: _ClassVar[int]
    DECISION_DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    MAX_TABLES_PER_BOT_FIELD_NUMBER: _ClassVar[int]
    HOUSE_ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_PER_MATCH_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    ONLINE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_RATED_FIELD_NUMBER: _ClassVar[int]
    SEARCH_BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FILL_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    STRIKE_WINDOW_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKE_SHARE_FIELD_NUMBER: _ClassVar[int]
    STRIKE_COOLDOWN_MS_FIELD_NUMBER: _ClassVar[int]
    LUCK_ADJUSTED_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    ruleset: _cards_pb2.Ruleset
    seat_count: int
    config: _containers.ScalarMap[str, str]
    deals_per_match: int
    decision_deadline_ms: int
    duplicate: bool
    max_matches_per_day: int
    max_tables_per_bot: int
    house_entrants: _containers.RepeatedScalarFieldContainer[_table_pb2.HouseBotPolicy]
    max_strikes_per_match: int
    entrants: int
    online: int
    matches_rated: int
    search_budget_ms: int
    house_fill_after_ms: int
    strike_window: int
    max_strike_share: float
    strike_cooldown_ms: int
    luck_adjusted: bool
    def __init__(self, ladder_id: _Optional[str] = ..., ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., seat_count: _Optional[int] = ..., config: _Optional[_Mapping[str, str]] = ..., deals_per_match: _Optional[int] = ..., decision_deadline_ms: _Optional[int] = ..., duplicate: _Optional[bool] = ..., max_matches_per_day: _Optional[int] = ..., max_tables_per_bot: _Optional[int] = ..., house_entrants: _Optional[_Iterable[_Union[_table_pb2.HouseBotPolicy, str]]] = ..., max_strikes_per_match: _Optional[int] = ..., entrants: _Optional[int] = ..., online: _Optional[int] = ..., matches_rated: _Optional[int] = ..., search_budget_ms: _Optional[int] = ..., house_fill_after_ms: _Optional[int] = ..., strike_window: _Optional[int] = ..., max_strike_share: _Optional[float] = ..., strike_cooldown_ms: _Optional[int] = ..., luck_adjusted: _Optional[bool] = ...) -> None: ...

class LadderEntry(_message.Message):
    __slots__ = ("ladder_id", "bot_id", "capacity", "active", "removed_reason", "entered_at")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    REMOVED_REASON_FIELD_NUMBER: _ClassVar[int]
    ENTERED_AT_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    bot_id: str
    capacity: int
    active: bool
    removed_reason: str
    entered_at: _timestamp_pb2.Timestamp
    def __init__(self, ladder_id: _Optional[str] = ..., bot_id: _Optional[str] = ..., capacity: _Optional[int] = ..., active: _Optional[bool] = ..., removed_reason: _Optional[str] = ..., entered_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("rank", "bot_id", "bot_name", "bot_version", "owner_id", "rating", "mu", "sigma", "matches", "mean_jetons_per_deal", "last_net", "last_place", "house", "active")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    MEAN_JETONS_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    LAST_NET_FIELD_NUMBER: _ClassVar[int]
    LAST_PLACE_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot_id: str
    bot_name: str
    bot_version: str
    owner_id: str
    rating: float
    mu: float
    sigma: float
    matches: int
    mean_jetons_per_deal: float
    last_net: int
    last_place: int
    house: bool
    active: bool
    def __init__(self, rank: _Optional[int] = ..., bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., owner_id: _Optional[str] = ..., rating: _Optional[float] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., matches: _Optional[int] = ..., mean_jetons_per_deal: _Optional[float] = ..., last_net: _Optional[int] = ..., last_place: _Optional[int] = ..., house: _Optional[bool] = ..., active: _Optional[bool] = ...) -> None: ...

class LadderMatchTable(_message.Message):
    __slots__ = ("table_id", "rotation", "seed_sha256", "finished")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    ROTATION_FIELD_NUMBER: _ClassVar[int]
    SEED_SHA256_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    rotation: int
    seed_sha256: str
    finished: bool
    def __init__(self, table_id: _Optional[str] = ..., rotation: _Optional[int] = ..., seed_sha256: _Optional[str] = ..., finished: _Optional[bool] = ...) -> None: ...

class LadderMatchEntrant(_message.Message):
    __slots__ = ("bot_id", "bot_name", "seat", "net", "place", "mu_before", "sigma_before", "mu_after", "sigma_after", "strikes")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NET_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    MU_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SIGMA_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MU_AFTER_FIELD_NUMBER: _ClassVar[int]
    SIGMA_AFTER_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    bot_name: str
    seat: int
    net: int
    place: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    strikes: int
    def __init__(self, bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., seat: _Optional[int] = ..., net: _Optional[int] = ..., place: _Optional[int] = ..., mu_before: _Optional[float] = ..., sigma_before: _Optional[float] = ..., mu_after: _Optional[float] = ..., sigma_after: _Optional[float] = ..., strikes: _Optional[int] = ...) -> None: ...

class LadderMatch(_message.Message):
    __slots__ = ("match_id", "ladder_id", "state", "duplicate", "entrants", "tables", "started_at", "rated_at", "deals")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    RATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ladder_id: str
    state: LadderMatchState
    duplicate: bool
    entrants: _containers.RepeatedCompositeFieldContainer[LadderMatchEntrant]
    tables: _containers.RepeatedCompositeFieldContainer[LadderMatchTable]
    started_at: _timestamp_pb2.Timestamp
    rated_at: _timestamp_pb2.Timestamp
    deals: int
    def __init__(self, match_id: _Optional[str] = ..., ladder_id: _Optional[str] = ..., state: _Optional[_Union[LadderMatchState, str]] = ..., duplicate: _Optional[bool] = ..., entrants: _Optional[_Iterable[_Union[LadderMatchEntrant, _Mapping]]] = ..., tables: _Optional[_Iterable[_Union[LadderMatchTable, _Mapping]]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deals: _Optional[int] = ...) -> None: ...

class ListLaddersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListLaddersResponse(_message.Message):
    __slots__ = ("ladders",)
    LADDERS_FIELD_NUMBER: _ClassVar[int]
    ladders: _containers.RepeatedCompositeFieldContainer[Ladder]
    def __init__(self, ladders: _Optional[_Iterable[_Union[Ladder, _Mapping]]] = ...) -> None: ...

class GetLadderRequest(_message.Message):
    __slots__ = ("ladder_id",)
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    def __init__(self, ladder_id: _Optional[str] = ...) -> None: ...

class GetLadderResponse(_message.Message):
    __slots__ = ("ladder", "entry")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    entry: LadderEntry
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ..., entry: _Optional[_Union[LadderEntry, _Mapping]] = ...) -> None: ...

class EnterLadderRequest(_message.Message):
    __slots__ = ("ladder_id", "capacity")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    capacity: int
    def __init__(self, ladder_id: _Optional[str] = ..., capacity: _Optional[int] = ...) -> None: ...

class EnterLadderResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: LadderEntry
    def __init__(self, entry: _Optional[_Union[LadderEntry, _Mapping]] = ...) -> None: ...

class LeaveLadderRequest(_message.Message):
    __slots__ = ("ladder_id",)
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    def __init__(self, ladder_id: _Optional[str] = ...) -> None: ...

class LeaveLadderResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: LadderEntry
    def __init__(self, entry: _Optional[_Union[LadderEntry, _Mapping]] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("ladder_id", "page_size", "page_token")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    page_size: int
    page_token: str
    def __init__(self, ladder_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetStandingsResponse(_message.Message):
    __slots__ = ("standings", "next_page_token")
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    standings: _containers.RepeatedCompositeFieldContainer[Standing]
    next_page_token: str
    def __init__(self, standings: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListLadderMatchesRequest(_message.Message):
    __slots__ = ("ladder_id", "bot_id", "page_size", "page_token")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    bot_id: str
    page_size: int
    page_token: str
    def __init__(self, ladder_id: _Optional[str] = ..., bot_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLadderMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[LadderMatch]
    next_page_token: str
    def __init__(self, matches: _Optional[_Iterable[_Union[LadderMatch, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WatchLadderResultsRequest(_message.Message):
    __slots__ = ("ladder_id",)
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    def __init__(self, ladder_id: _Optional[str] = ...) -> None: ...

class WatchLadderResultsResponse(_message.Message):
    __slots__ = ("rated", "heartbeat")
    RATED_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    rated: LadderMatch
    heartbeat: _timestamp_pb2.Timestamp
    def __init__(self, rated: _Optional[_Union[LadderMatch, _Mapping]] = ..., heartbeat: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetCrosstableRequest(_message.Message):
    __slots__ = ("ladder_id",)
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    def __init__(self, ladder_id: _Optional[str] = ...) -> None: ...

class CrosstablePair(_message.Message):
    __slots__ = ("bot_a", "bot_a_name", "bot_b", "bot_b_name", "meetings", "deals", "a_ahead", "level", "b_ahead", "mean_net_difference_per_deal", "interval_low", "interval_high")
    BOT_A_FIELD_NUMBER: _ClassVar[int]
    BOT_A_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_B_FIELD_NUMBER: _ClassVar[int]
    BOT_B_NAME_FIELD_NUMBER: _ClassVar[int]
    MEETINGS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    A_AHEAD_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    B_AHEAD_FIELD_NUMBER: _ClassVar[int]
    MEAN_NET_DIFFERENCE_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_LOW_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_HIGH_FIELD_NUMBER: _ClassVar[int]
    bot_a: str
    bot_a_name: str
    bot_b: str
    bot_b_name: str
    meetings: int
    deals: int
    a_ahead: int
    level: int
    b_ahead: int
    mean_net_difference_per_deal: float
    interval_low: float
    interval_high: float
    def __init__(self, bot_a: _Optional[str] = ..., bot_a_name: _Optional[str] = ..., bot_b: _Optional[str] = ..., bot_b_name: _Optional[str] = ..., meetings: _Optional[int] = ..., deals: _Optional[int] = ..., a_ahead: _Optional[int] = ..., level: _Optional[int] = ..., b_ahead: _Optional[int] = ..., mean_net_difference_per_deal: _Optional[float] = ..., interval_low: _Optional[float] = ..., interval_high: _Optional[float] = ...) -> None: ...

class GetCrosstableResponse(_message.Message):
    __slots__ = ("ladder_id", "matches_rated", "pairs")
    LADDER_ID_FIELD_NUMBER: _ClassVar[int]
    MATCHES_RATED_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    ladder_id: str
    matches_rated: int
    pairs: _containers.RepeatedCompositeFieldContainer[CrosstablePair]
    def __init__(self, ladder_id: _Optional[str] = ..., matches_rated: _Optional[int] = ..., pairs: _Optional[_Iterable[_Union[CrosstablePair, _Mapping]]] = ...) -> None: ...
