from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_ILLEGAL_ACTION: _ClassVar[ErrorReason]
    ERROR_REASON_STALE_SEQ: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_YOUR_SEAT: _ClassVar[ErrorReason]
    ERROR_REASON_SPECTATOR_CANNOT_ACT: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_FULL: _ClassVar[ErrorReason]
    ERROR_REASON_SEAT_TAKEN: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_CONFIG: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_FINISHED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_SEATED: _ClassVar[ErrorReason]
    ERROR_REASON_FROM_SEQ_OUT_OF_RANGE: _ClassVar[ErrorReason]
    ERROR_REASON_WATCHER_TOO_SLOW: _ClassVar[ErrorReason]
    ERROR_REASON_SHUTTING_DOWN: _ClassVar[ErrorReason]
    ERROR_REASON_RATE_LIMITED: _ClassVar[ErrorReason]
    ERROR_REASON_DUPLICATE_REQUEST_CONFLICT: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_SEATED: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_PRIVATE: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_NOT_FINISHED: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_ILLEGAL_ACTION: ErrorReason
ERROR_REASON_STALE_SEQ: ErrorReason
ERROR_REASON_TABLE_NOT_FOUND: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_NOT_YOUR_SEAT: ErrorReason
ERROR_REASON_SPECTATOR_CANNOT_ACT: ErrorReason
ERROR_REASON_TABLE_FULL: ErrorReason
ERROR_REASON_SEAT_TAKEN: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_BAD_CONFIG: ErrorReason
ERROR_REASON_TABLE_FINISHED: ErrorReason
ERROR_REASON_NOT_SEATED: ErrorReason
ERROR_REASON_FROM_SEQ_OUT_OF_RANGE: ErrorReason
ERROR_REASON_WATCHER_TOO_SLOW: ErrorReason
ERROR_REASON_SHUTTING_DOWN: ErrorReason
ERROR_REASON_RATE_LIMITED: ErrorReason
ERROR_REASON_DUPLICATE_REQUEST_CONFLICT: ErrorReason
ERROR_REASON_ALREADY_SEATED: ErrorReason
ERROR_REASON_TABLE_PRIVATE: ErrorReason
ERROR_REASON_TABLE_NOT_FINISHED: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
