from bete.v1 import table_pb2 as _table_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StopTableRequest(_message.Message):
    __slots__ = ("table_id", "reason")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    reason: str
    def __init__(self, table_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class StopTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.Table
    def __init__(self, table: _Optional[_Union[_table_pb2.Table, _Mapping]] = ...) -> None: ...
