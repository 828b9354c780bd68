from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterBotRequest(_message.Message):
    __slots__ = ("name", "owner", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    owner: str
    version: str
    def __init__(self, name: _Optional[str] = ..., owner: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class RegisterBotResponse(_message.Message):
    __slots__ = ("bot_id", "token", "owner_id", "version")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    token: str
    owner_id: str
    version: str
    def __init__(self, bot_id: _Optional[str] = ..., token: _Optional[str] = ..., owner_id: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class RotateBotTokenRequest(_message.Message):
    __slots__ = ("bot_id",)
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    def __init__(self, bot_id: _Optional[str] = ...) -> None: ...

class RotateBotTokenResponse(_message.Message):
    __slots__ = ("bot_id", "token")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    token: str
    def __init__(self, bot_id: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...
