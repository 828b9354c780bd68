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

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_AWAITING_PLAYERS: _ClassVar[Phase]
    PHASE_AWAITING_DECK: _ClassVar[Phase]
    PHASE_BIDDING: _ClassVar[Phase]
    PHASE_EXCHANGE: _ClassVar[Phase]
    PHASE_DEALER_DISCARD: _ClassVar[Phase]
    PHASE_CHALLENGE: _ClassVar[Phase]
    PHASE_TRICK: _ClassVar[Phase]
    PHASE_MATCH_OVER: _ClassVar[Phase]

class BidderOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BIDDER_OUTCOME_UNSPECIFIED: _ClassVar[BidderOutcome]
    BIDDER_OUTCOME_WIN: _ClassVar[BidderOutcome]
    BIDDER_OUTCOME_WIN_VOLE: _ClassVar[BidderOutcome]
    BIDDER_OUTCOME_NULL: _ClassVar[BidderOutcome]
    BIDDER_OUTCOME_LOSE: _ClassVar[BidderOutcome]
    BIDDER_OUTCOME_LOSE_DEVOLE: _ClassVar[BidderOutcome]
PHASE_UNSPECIFIED: Phase
PHASE_AWAITING_PLAYERS: Phase
PHASE_AWAITING_DECK: Phase
PHASE_BIDDING: Phase
PHASE_EXCHANGE: Phase
PHASE_DEALER_DISCARD: Phase
PHASE_CHALLENGE: Phase
PHASE_TRICK: Phase
PHASE_MATCH_OVER: Phase
BIDDER_OUTCOME_UNSPECIFIED: BidderOutcome
BIDDER_OUTCOME_WIN: BidderOutcome
BIDDER_OUTCOME_WIN_VOLE: BidderOutcome
BIDDER_OUTCOME_NULL: BidderOutcome
BIDDER_OUTCOME_LOSE: BidderOutcome
BIDDER_OUTCOME_LOSE_DEVOLE: BidderOutcome

class SeatState(_message.Message):
    __slots__ = ("seat", "balance", "hand_len", "tricks", "declarer", "contrer", "dropped", "exchanged", "last_spoke")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    HAND_LEN_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    CONTRER_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    EXCHANGED_FIELD_NUMBER: _ClassVar[int]
    LAST_SPOKE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    balance: int
    hand_len: int
    tricks: int
    declarer: bool
    contrer: bool
    dropped: bool
    exchanged: _containers.RepeatedScalarFieldContainer[int]
    last_spoke: _cards_pb2.Action
    def __init__(self, seat: _Optional[int] = ..., balance: _Optional[int] = ..., hand_len: _Optional[int] = ..., tricks: _Optional[int] = ..., declarer: _Optional[bool] = ..., contrer: _Optional[bool] = ..., dropped: _Optional[bool] = ..., exchanged: _Optional[_Iterable[int]] = ..., last_spoke: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ...) -> None: ...

class TrickPlay(_message.Message):
    __slots__ = ("seat", "card", "face_down")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    FACE_DOWN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    face_down: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., face_down: _Optional[bool] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "plays", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[TrickPlay]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[TrickPlay, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class Pools(_message.Message):
    __slots__ = ("pot", "fiches", "deals_since_won", "king_pool", "staked_bete", "bete_queue", "heap_king", "heap_play", "heap_triolet", "bete_streak", "fiche_value", "on_table")
    POT_FIELD_NUMBER: _ClassVar[int]
    FICHES_FIELD_NUMBER: _ClassVar[int]
    DEALS_SINCE_WON_FIELD_NUMBER: _ClassVar[int]
    KING_POOL_FIELD_NUMBER: _ClassVar[int]
    STAKED_BETE_FIELD_NUMBER: _ClassVar[int]
    BETE_QUEUE_FIELD_NUMBER: _ClassVar[int]
    HEAP_KING_FIELD_NUMBER: _ClassVar[int]
    HEAP_PLAY_FIELD_NUMBER: _ClassVar[int]
    HEAP_TRIOLET_FIELD_NUMBER: _ClassVar[int]
    BETE_STREAK_FIELD_NUMBER: _ClassVar[int]
    FICHE_VALUE_FIELD_NUMBER: _ClassVar[int]
    ON_TABLE_FIELD_NUMBER: _ClassVar[int]
    pot: int
    fiches: int
    deals_since_won: int
    king_pool: int
    staked_bete: int
    bete_queue: _containers.RepeatedScalarFieldContainer[int]
    heap_king: int
    heap_play: int
    heap_triolet: int
    bete_streak: int
    fiche_value: int
    on_table: int
    def __init__(self, pot: _Optional[int] = ..., fiches: _Optional[int] = ..., deals_since_won: _Optional[int] = ..., king_pool: _Optional[int] = ..., staked_bete: _Optional[int] = ..., bete_queue: _Optional[_Iterable[int]] = ..., heap_king: _Optional[int] = ..., heap_play: _Optional[int] = ..., heap_triolet: _Optional[int] = ..., bete_streak: _Optional[int] = ..., fiche_value: _Optional[int] = ..., on_table: _Optional[int] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("table_id", "seq", "viewer_seat", "ruleset", "seats", "deal", "dealer", "phase", "exchange_round", "trick_index", "to_act", "hand", "turn_up", "set_aside_turn_ups", "trump", "talon_len", "muss", "turn_up_taken", "seat_states", "tricks", "pools", "legal_actions", "deadline", "match_over", "trick_holder")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    VIEWER_SEAT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_ROUND_FIELD_NUMBER: _ClassVar[int]
    TRICK_INDEX_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TURN_UP_FIELD_NUMBER: _ClassVar[int]
    SET_ASIDE_TURN_UPS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    TALON_LEN_FIELD_NUMBER: _ClassVar[int]
    MUSS_FIELD_NUMBER: _ClassVar[int]
    TURN_UP_TAKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_STATES_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    MATCH_OVER_FIELD_NUMBER: _ClassVar[int]
    TRICK_HOLDER_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seq: int
    viewer_seat: int
    ruleset: _cards_pb2.Ruleset
    seats: int
    deal: int
    dealer: int
    phase: Phase
    exchange_round: int
    trick_index: int
    to_act: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    turn_up: str
    set_aside_turn_ups: _containers.RepeatedScalarFieldContainer[str]
    trump: _cards_pb2.Suit
    talon_len: int
    muss: bool
    turn_up_taken: bool
    seat_states: _containers.RepeatedCompositeFieldContainer[SeatState]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    pools: Pools
    legal_actions: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Action]
    deadline: _timestamp_pb2.Timestamp
    match_over: bool
    trick_holder: int
    def __init__(self, table_id: _Optional[str] = ..., seq: _Optional[int] = ..., viewer_seat: _Optional[int] = ..., ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., seats: _Optional[int] = ..., deal: _Optional[int] = ..., dealer: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., exchange_round: _Optional[int] = ..., trick_index: _Optional[int] = ..., to_act: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., turn_up: _Optional[str] = ..., set_aside_turn_ups: _Optional[_Iterable[str]] = ..., trump: _Optional[_Union[_cards_pb2.Suit, str]] = ..., talon_len: _Optional[int] = ..., muss: _Optional[bool] = ..., turn_up_taken: _Optional[bool] = ..., seat_states: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., pools: _Optional[_Union[Pools, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[_cards_pb2.Action, _Mapping]]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., match_over: _Optional[bool] = ..., trick_holder: _Optional[int] = ...) -> None: ...

class SeatCards(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class DealStarted(_message.Message):
    __slots__ = ("deal", "dealer", "paid", "turn_up", "trump", "muss", "pools", "hand")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PAID_FIELD_NUMBER: _ClassVar[int]
    TURN_UP_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    MUSS_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    deal: int
    dealer: int
    paid: _containers.RepeatedScalarFieldContainer[int]
    turn_up: str
    trump: _cards_pb2.Suit
    muss: bool
    pools: Pools
    hand: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deal: _Optional[int] = ..., dealer: _Optional[int] = ..., paid: _Optional[_Iterable[int]] = ..., turn_up: _Optional[str] = ..., trump: _Optional[_Union[_cards_pb2.Suit, str]] = ..., muss: _Optional[bool] = ..., pools: _Optional[_Union[Pools, _Mapping]] = ..., hand: _Optional[_Iterable[str]] = ...) -> None: ...

class Spoke(_message.Message):
    __slots__ = ("seat", "action")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: _cards_pb2.Action
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ...) -> None: ...

class Curieuse(_message.Message):
    __slots__ = ("set_aside", "turn_up", "trump", "paid")
    SET_ASIDE_FIELD_NUMBER: _ClassVar[int]
    TURN_UP_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    PAID_FIELD_NUMBER: _ClassVar[int]
    set_aside: str
    turn_up: str
    trump: _cards_pb2.Suit
    paid: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, set_aside: _Optional[str] = ..., turn_up: _Optional[str] = ..., trump: _Optional[_Union[_cards_pb2.Suit, str]] = ..., paid: _Optional[_Iterable[int]] = ...) -> None: ...

class Exchanged(_message.Message):
    __slots__ = ("seat", "count", "set_aside", "drawn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    SET_ASIDE_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    set_aside: _containers.RepeatedScalarFieldContainer[str]
    drawn: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ..., set_aside: _Optional[_Iterable[str]] = ..., drawn: _Optional[_Iterable[str]] = ...) -> None: ...

class TookTurnUp(_message.Message):
    __slots__ = ("seat", "turn_up", "discarded")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_UP_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    turn_up: str
    discarded: str
    def __init__(self, seat: _Optional[int] = ..., turn_up: _Optional[str] = ..., discarded: _Optional[str] = ...) -> None: ...

class FlushShown(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class HiddenLead(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("trick", "winner")
    TRICK_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    trick: int
    winner: int
    def __init__(self, trick: _Optional[int] = ..., winner: _Optional[int] = ...) -> None: ...

class BiddersResult(_message.Message):
    __slots__ = ("declarer", "declarer_outcome", "contrer", "contrer_outcome")
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    DECLARER_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CONTRER_FIELD_NUMBER: _ClassVar[int]
    CONTRER_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    declarer: int
    declarer_outcome: BidderOutcome
    contrer: int
    contrer_outcome: BidderOutcome
    def __init__(self, declarer: _Optional[int] = ..., declarer_outcome: _Optional[_Union[BidderOutcome, str]] = ..., contrer: _Optional[int] = ..., contrer_outcome: _Optional[_Union[BidderOutcome, str]] = ...) -> None: ...

class AllPassedResult(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HeapsResult(_message.Message):
    __slots__ = ("king", "play", "triolet")
    KING_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    TRIOLET_FIELD_NUMBER: _ClassVar[int]
    king: int
    play: int
    triolet: int
    def __init__(self, king: _Optional[int] = ..., play: _Optional[int] = ..., triolet: _Optional[int] = ...) -> None: ...

class PlayedResult(_message.Message):
    __slots__ = ("stayers",)
    STAYERS_FIELD_NUMBER: _ClassVar[int]
    stayers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, stayers: _Optional[_Iterable[int]] = ...) -> None: ...

class LoneStayerResult(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class CarriedResult(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FlushResult(_message.Message):
    __slots__ = ("seat", "dealt")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    dealt: bool
    def __init__(self, seat: _Optional[int] = ..., dealt: _Optional[bool] = ...) -> None: ...

class DealerTakesPotResult(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DealResult(_message.Message):
    __slots__ = ("bidders", "all_passed", "heaps", "played", "lone_stayer", "carried", "flush", "dealer_takes_pot")
    BIDDERS_FIELD_NUMBER: _ClassVar[int]
    ALL_PASSED_FIELD_NUMBER: _ClassVar[int]
    HEAPS_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    LONE_STAYER_FIELD_NUMBER: _ClassVar[int]
    CARRIED_FIELD_NUMBER: _ClassVar[int]
    FLUSH_FIELD_NUMBER: _ClassVar[int]
    DEALER_TAKES_POT_FIELD_NUMBER: _ClassVar[int]
    bidders: BiddersResult
    all_passed: AllPassedResult
    heaps: HeapsResult
    played: PlayedResult
    lone_stayer: LoneStayerResult
    carried: CarriedResult
    flush: FlushResult
    dealer_takes_pot: DealerTakesPotResult
    def __init__(self, bidders: _Optional[_Union[BiddersResult, _Mapping]] = ..., all_passed: _Optional[_Union[AllPassedResult, _Mapping]] = ..., heaps: _Optional[_Union[HeapsResult, _Mapping]] = ..., played: _Optional[_Union[PlayedResult, _Mapping]] = ..., lone_stayer: _Optional[_Union[LoneStayerResult, _Mapping]] = ..., carried: _Optional[_Union[CarriedResult, _Mapping]] = ..., flush: _Optional[_Union[FlushResult, _Mapping]] = ..., dealer_takes_pot: _Optional[_Union[DealerTakesPotResult, _Mapping]] = ...) -> None: ...

class DealRevealed(_message.Message):
    __slots__ = ("deal", "hands", "deck")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    deal: int
    hands: _containers.RepeatedCompositeFieldContainer[SeatCards]
    deck: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deal: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[SeatCards, _Mapping]]] = ..., deck: _Optional[_Iterable[str]] = ...) -> None: ...

class DealSettled(_message.Message):
    __slots__ = ("deal", "result", "tricks", "net", "betes", "hidden_revealed", "pools", "balances", "revealed")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    NET_FIELD_NUMBER: _ClassVar[int]
    BETES_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_REVEALED_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    BALANCES_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    deal: int
    result: DealResult
    tricks: _containers.RepeatedScalarFieldContainer[int]
    net: _containers.RepeatedScalarFieldContainer[int]
    betes: _containers.RepeatedScalarFieldContainer[int]
    hidden_revealed: _containers.RepeatedScalarFieldContainer[str]
    pools: Pools
    balances: _containers.RepeatedScalarFieldContainer[int]
    revealed: DealRevealed
    def __init__(self, deal: _Optional[int] = ..., result: _Optional[_Union[DealResult, _Mapping]] = ..., tricks: _Optional[_Iterable[int]] = ..., net: _Optional[_Iterable[int]] = ..., betes: _Optional[_Iterable[int]] = ..., hidden_revealed: _Optional[_Iterable[str]] = ..., pools: _Optional[_Union[Pools, _Mapping]] = ..., balances: _Optional[_Iterable[int]] = ..., revealed: _Optional[_Union[DealRevealed, _Mapping]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("returned", "balances")
    RETURNED_FIELD_NUMBER: _ClassVar[int]
    BALANCES_FIELD_NUMBER: _ClassVar[int]
    returned: _containers.RepeatedScalarFieldContainer[int]
    balances: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, returned: _Optional[_Iterable[int]] = ..., balances: _Optional[_Iterable[int]] = ...) -> None: ...

class SeatTaken(_message.Message):
    __slots__ = ("seat", "occupant", "bot_id", "bot_name", "policy")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OCCUPANT_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    occupant: _table_pb2.OccupantKind
    bot_id: str
    bot_name: str
    policy: _table_pb2.HouseBotPolicy
    def __init__(self, seat: _Optional[int] = ..., occupant: _Optional[_Union[_table_pb2.OccupantKind, str]] = ..., bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., policy: _Optional[_Union[_table_pb2.HouseBotPolicy, str]] = ...) -> None: ...

class SeatLeft(_message.Message):
    __slots__ = ("seat", "bot_id")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot_id: str
    def __init__(self, seat: _Optional[int] = ..., bot_id: _Optional[str] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("ruleset", "seats", "config", "first_dealer")
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
    FIRST_DEALER_FIELD_NUMBER: _ClassVar[int]
    ruleset: _cards_pb2.Ruleset
    seats: int
    config: _containers.ScalarMap[str, str]
    first_dealer: int
    def __init__(self, ruleset: _Optional[_Union[_cards_pb2.Ruleset, str]] = ..., seats: _Optional[int] = ..., config: _Optional[_Mapping[str, str]] = ..., first_dealer: _Optional[int] = ...) -> None: ...

class StrikeCounted(_message.Message):
    __slots__ = ("seat", "strikes")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    strikes: int
    def __init__(self, seat: _Optional[int] = ..., strikes: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("seq", "table_id", "time", "auto", "deal_started", "spoke", "curieuse", "exchanged", "took_turn_up", "flush_shown", "card_played", "hidden_lead", "trick_won", "deal_settled", "match_ended", "seat_taken", "seat_left", "match_started", "strike_counted")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    AUTO_FIELD_NUMBER: _ClassVar[int]
    DEAL_STARTED_FIELD_NUMBER: _ClassVar[int]
    SPOKE_FIELD_NUMBER: _ClassVar[int]
    CURIEUSE_FIELD_NUMBER: _ClassVar[int]
    EXCHANGED_FIELD_NUMBER: _ClassVar[int]
    TOOK_TURN_UP_FIELD_NUMBER: _ClassVar[int]
    FLUSH_SHOWN_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_LEAD_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    DEAL_SETTLED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    SEAT_TAKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_LEFT_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    STRIKE_COUNTED_FIELD_NUMBER: _ClassVar[int]
    seq: int
    table_id: str
    time: _timestamp_pb2.Timestamp
    auto: bool
    deal_started: DealStarted
    spoke: Spoke
    curieuse: Curieuse
    exchanged: Exchanged
    took_turn_up: TookTurnUp
    flush_shown: FlushShown
    card_played: CardPlayed
    hidden_lead: HiddenLead
    trick_won: TrickWon
    deal_settled: DealSettled
    match_ended: MatchEnded
    seat_taken: SeatTaken
    seat_left: SeatLeft
    match_started: MatchStarted
    strike_counted: StrikeCounted
    def __init__(self, seq: _Optional[int] = ..., table_id: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., auto: _Optional[bool] = ..., deal_started: _Optional[_Union[DealStarted, _Mapping]] = ..., spoke: _Optional[_Union[Spoke, _Mapping]] = ..., curieuse: _Optional[_Union[Curieuse, _Mapping]] = ..., exchanged: _Optional[_Union[Exchanged, _Mapping]] = ..., took_turn_up: _Optional[_Union[TookTurnUp, _Mapping]] = ..., flush_shown: _Optional[_Union[FlushShown, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., hidden_lead: _Optional[_Union[HiddenLead, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., deal_settled: _Optional[_Union[DealSettled, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., seat_taken: _Optional[_Union[SeatTaken, _Mapping]] = ..., seat_left: _Optional[_Union[SeatLeft, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., strike_counted: _Optional[_Union[StrikeCounted, _Mapping]] = ...) -> None: ...
