import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateAccountRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class CreateAccountResponse(_message.Message):
    __slots__ = ("account_id", "token")
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    token: str
    def __init__(self, account_id: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class ListAccountBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AccountBot(_message.Message):
    __slots__ = ("bot_id", "name", "version", "created_at")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    name: str
    version: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, bot_id: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAccountBotsResponse(_message.Message):
    __slots__ = ("account_id", "bots")
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    bots: _containers.RepeatedCompositeFieldContainer[AccountBot]
    def __init__(self, account_id: _Optional[str] = ..., bots: _Optional[_Iterable[_Union[AccountBot, _Mapping]]] = ...) -> None: ...
