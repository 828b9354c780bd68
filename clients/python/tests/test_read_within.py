"""The stream read with a deadline that the runner and ``follow_table`` use keeps a Ctrl-C.

``asyncio.run`` turns Ctrl-C into one cancellation of the main task. When that cancellation met a
read completing in the same loop turn, ``asyncio.wait_for`` (Python before 3.12) returned the
message and dropped the cancellation, and a ladder bot ran on after Ctrl-C.
"""

import asyncio

import pytest

from bete_bot.client import read_within


class _Call:
    """A stream whose next read completes when the test says so."""

    def __init__(self) -> None:
        self.pending: asyncio.Future = asyncio.get_running_loop().create_future()

    def read(self) -> asyncio.Future:
        return self.pending


def test_a_cancellation_meeting_a_completed_read_is_kept():
    async def scenario():
        call = _Call()
        reader = asyncio.ensure_future(read_within(call, 60.0))
        await asyncio.sleep(0)  # the reader is now waiting on the read
        await asyncio.sleep(0)
        # The message and the Ctrl-C arrive in the same loop turn.
        call.pending.set_result("heartbeat")
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader

    asyncio.run(scenario())


def test_a_silent_stream_times_out_and_a_message_is_returned():
    async def scenario():
        call = _Call()
        with pytest.raises(asyncio.TimeoutError):
            await read_within(call, 0.05)
        call = _Call()
        asyncio.get_running_loop().call_later(0.01, call.pending.set_result, "event")
        assert await read_within(call, 5.0) == "event"

    asyncio.run(scenario())
