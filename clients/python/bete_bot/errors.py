"""``BeteError``: a failed call with its gRPC code and the server's ``ErrorInfo`` reason.

The server attaches a ``google.rpc.Status`` with a ``google.rpc.ErrorInfo`` (domain ``bete.v1``,
reason e.g. ``ILLEGAL_ACTION``) to every failure; we read it with ``grpc_status.rpc_status``.
Branch on :attr:`BeteError.reason`, never on the message text.
"""

from __future__ import annotations

from typing import Optional

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

_DETAILS_KEY = "grpc-status-details-bin"


class BeteError(Exception):
    """A failed bete call.

    Attributes:
        code: the ``grpc.StatusCode``.
        reason: the ``ErrorInfo.reason`` (an ``ErrorReason`` name without its prefix, e.g.
            ``"ILLEGAL_ACTION"``), or ``""`` when the status carried none (e.g. a transport failure).
        message: the status message.
        metadata: the ``ErrorInfo.metadata`` map (e.g. ``{"last_seq": "17"}`` for STALE_SEQ).
        bad_fields: ``{field: description}`` from a ``google.rpc.BadRequest`` detail, if any.
        domain: the ``ErrorInfo.domain`` (``"bete.v1"``).
        retry_after: seconds the server asked the caller to wait before retrying (a
            ``google.rpc.RetryInfo`` detail, or metadata ``retry_after_ms``), for RATE_LIMITED and
            OVERLOADED; ``None`` otherwise. The client's retries wait at least this long.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str = "",
        metadata: Optional[dict[str, str]] = None,
        bad_fields: Optional[dict[str, str]] = None,
        domain: str = "",
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(f"{code.name}{' ' + reason if reason else ''}: {message}")
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.bad_fields = dict(bad_fields or {})
        self.domain = domain
        if retry_after is None and "retry_after_ms" in self.metadata:
            try:
                retry_after = int(self.metadata["retry_after_ms"]) / 1000.0
            except ValueError:
                retry_after = None
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """The call may be repeated unchanged (with the same request_id): the server did not apply it."""
        return self.code in (grpc.StatusCode.UNAVAILABLE,) or self.reason in (
            "INTERNAL",
            "SHUTTING_DOWN",
            "RATE_LIMITED",
            "OVERLOADED",
        )

    def delay(self, backoff: float) -> float:
        """How long to wait before a retry: the backoff's pause, but never less than the server asked."""
        return max(backoff, self.retry_after or 0.0)

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> "BeteError":
        """Builds a BeteError from a failed call (``grpc.aio.AioRpcError`` or a sync ``grpc.Call``)."""
        code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
        message = err.details() if callable(getattr(err, "details", None)) else str(err)
        status = _rich_status(err)
        reason, domain, metadata, bad, retry_after = "", "", {}, {}, None
        if status is not None:
            for any_detail in status.details:
                if any_detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    any_detail.Unpack(info)
                    reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
                elif any_detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    br = error_details_pb2.BadRequest()
                    any_detail.Unpack(br)
                    bad.update({v.field: v.description for v in br.field_violations})
                elif any_detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    ri = error_details_pb2.RetryInfo()
                    any_detail.Unpack(ri)
                    retry_after = ri.retry_delay.seconds + ri.retry_delay.nanos / 1e9
        return cls(code or grpc.StatusCode.UNKNOWN, message or "", reason, metadata, bad, domain, retry_after)


def _rich_status(err: grpc.RpcError) -> Optional[status_pb2.Status]:
    """The ``google.rpc.Status`` of a failed call, via grpcio-status; None when absent."""
    if not callable(getattr(err, "trailing_metadata", None)):
        return None
    try:
        return rpc_status.from_call(err)
    except ValueError:
        # grpcio-status insists the rich status repeats the call's code and message exactly; a
        # proxy may re-encode the message, so still read the details rather than lose the reason.
        for key, value in err.trailing_metadata() or ():
            if key == _DETAILS_KEY:
                return status_pb2.Status.FromString(value)
        return None
