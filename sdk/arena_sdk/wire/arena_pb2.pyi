from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Clock(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOCK_WALL: _ClassVar[Clock]
    CLOCK_CPU: _ClassVar[Clock]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    BLIND_NIL: _ClassVar[DecisionKind]
    DRAW: _ClassVar[DecisionKind]
    EXCHANGE: _ClassVar[DecisionKind]
    BID: _ClassVar[DecisionKind]
    PLAY: _ClassVar[DecisionKind]
CLOCK_WALL: Clock
CLOCK_CPU: Clock
DECISION_KIND_UNSPECIFIED: DecisionKind
BLIND_NIL: DecisionKind
DRAW: DecisionKind
EXCHANGE: DecisionKind
BID: DecisionKind
PLAY: DecisionKind

class BotMessage(_message.Message):
    __slots__ = ("join", "answer")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    join: Join
    answer: Answer
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("token", "protocol_version", "bot_name", "bot_version")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    token: str
    protocol_version: int
    bot_name: str
    bot_version: str
    def __init__(self, token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("request_id", "bid", "card", "blind_nil", "keep", "exchange", "think_time_us", "note")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    BLIND_NIL_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_FIELD_NUMBER: _ClassVar[int]
    THINK_TIME_US_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    bid: int
    card: str
    blind_nil: bool
    keep: bool
    exchange: CardList
    think_time_us: int
    note: str
    def __init__(self, request_id: _Optional[int] = ..., bid: _Optional[int] = ..., card: _Optional[str] = ..., blind_nil: _Optional[bool] = ..., keep: _Optional[bool] = ..., exchange: _Optional[_Union[CardList, _Mapping]] = ..., think_time_us: _Optional[int] = ..., note: _Optional[str] = ...) -> None: ...

class CardList(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "game_start", "request", "hand_end", "game_end", "match_end", "notice")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    HAND_END_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_start: GameStart
    request: DecisionRequest
    hand_end: HandEnd
    game_end: GameEnd
    match_end: MatchEnd
    notice: Notice
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., hand_end: _Optional[_Union[HandEnd, _Mapping]] = ..., game_end: _Optional[_Union[GameEnd, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "partner", "players", "ruleset_json", "ruleset_hash", "time_control", "games", "seat_names", "protocol_version")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PARTNER_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULESET_JSON_FIELD_NUMBER: _ClassVar[int]
    RULESET_HASH_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    partner: int
    players: int
    ruleset_json: str
    ruleset_hash: str
    time_control: TimeControl
    games: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    protocol_version: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., partner: _Optional[int] = ..., players: _Optional[int] = ..., ruleset_json: _Optional[str] = ..., ruleset_hash: _Optional[str] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., games: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("move_ms", "bank_ms", "hard_cap_ms", "strikes_to_forfeit", "clock")
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    HARD_CAP_MS_FIELD_NUMBER: _ClassVar[int]
    STRIKES_TO_FORFEIT_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    move_ms: int
    bank_ms: int
    hard_cap_ms: int
    strikes_to_forfeit: int
    clock: Clock
    def __init__(self, move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., hard_cap_ms: _Optional[int] = ..., strikes_to_forfeit: _Optional[int] = ..., clock: _Optional[_Union[Clock, str]] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("game_index", "game_id", "bot_seed", "first", "scores", "bags")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    BAGS_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    game_id: str
    bot_seed: int
    first: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    bags: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_index: _Optional[int] = ..., game_id: _Optional[str] = ..., bot_seed: _Optional[int] = ..., first: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., bags: _Optional[_Iterable[int]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "kind", "view", "legal", "move_ms", "bank_ms", "allowed_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    kind: DecisionKind
    view: SeatView
    legal: _containers.RepeatedScalarFieldContainer[str]
    move_ms: int
    bank_ms: int
    allowed_ms: int
    def __init__(self, request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., view: _Optional[_Union[SeatView, _Mapping]] = ..., legal: _Optional[_Iterable[str]] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., allowed_ms: _Optional[int] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "cards", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "hand_number", "first", "hand", "hand_hidden", "bids", "blind", "tricks_won", "leader", "current_trick", "tricks", "spades_broken", "scores", "bags", "offered_card", "seen_discards", "exchanged")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    BLIND_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    SPADES_BROKEN_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    BAGS_FIELD_NUMBER: _ClassVar[int]
    OFFERED_CARD_FIELD_NUMBER: _ClassVar[int]
    SEEN_DISCARDS_FIELD_NUMBER: _ClassVar[int]
    EXCHANGED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_number: int
    first: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    hand_hidden: bool
    bids: _containers.RepeatedScalarFieldContainer[int]
    blind: _containers.RepeatedScalarFieldContainer[bool]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    leader: int
    current_trick: _containers.RepeatedCompositeFieldContainer[Play]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    spades_broken: bool
    scores: _containers.RepeatedScalarFieldContainer[int]
    bags: _containers.RepeatedScalarFieldContainer[int]
    offered_card: str
    seen_discards: _containers.RepeatedScalarFieldContainer[str]
    exchanged: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., hand_number: _Optional[int] = ..., first: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., hand_hidden: _Optional[bool] = ..., bids: _Optional[_Iterable[int]] = ..., blind: _Optional[_Iterable[bool]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., leader: _Optional[int] = ..., current_trick: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., spades_broken: _Optional[bool] = ..., scores: _Optional[_Iterable[int]] = ..., bags: _Optional[_Iterable[int]] = ..., offered_card: _Optional[str] = ..., seen_discards: _Optional[_Iterable[str]] = ..., exchanged: _Optional[_Iterable[int]] = ...) -> None: ...

class HandEnd(_message.Message):
    __slots__ = ("hand_number", "result_json", "tricks", "scores", "bags")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    BAGS_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    result_json: str
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    scores: _containers.RepeatedScalarFieldContainer[int]
    bags: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., result_json: _Optional[str] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., bags: _Optional[_Iterable[int]] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("game_index", "game_id", "ending", "winner", "scores", "bags")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    ENDING_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    BAGS_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    game_id: str
    ending: str
    winner: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    bags: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_index: _Optional[int] = ..., game_id: _Optional[str] = ..., ending: _Optional[str] = ..., winner: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., bags: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("level", "code", "message", "request_id")
    class Level(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        LEVEL_UNSPECIFIED: _ClassVar[Notice.Level]
        INFO: _ClassVar[Notice.Level]
        STRIKE: _ClassVar[Notice.Level]
        FORFEIT: _ClassVar[Notice.Level]
    LEVEL_UNSPECIFIED: Notice.Level
    INFO: Notice.Level
    STRIKE: Notice.Level
    FORFEIT: Notice.Level
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    level: Notice.Level
    code: str
    message: str
    request_id: int
    def __init__(self, level: _Optional[_Union[Notice.Level, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., request_id: _Optional[int] = ...) -> None: ...
