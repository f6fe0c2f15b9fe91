"""One reader's queue of server -> client messages, bounded in count, bytes and time.

The connection's pump puts each agent line on the outbox of the stream that
carries it; the SSE response (or the WebSocket) takes them, sends them, and
says so (:meth:`Outbox.delivered`).  The bytes of every outbox of one
connection, queued or being sent, count against one :class:`Budget`
(``HttpLimits.max_queued_bytes``): past it :meth:`Outbox.put` waits, and the
agent's output waits with it (backpressure).  Each outbox knows since when its
oldest message waits for its reader (:attr:`Outbox.waiting_since`): queued on
a stream nobody reads, or in a send that does not complete; the connection is
closed when that passes ``HttpLimits.stall_seconds`` (the registry's sweep).
Each also knows since when its reader took nothing (:attr:`Outbox.quiet_since`):
the sweep wakes a reader quiet over ``HttpLimits.keepalive_seconds``
(:meth:`Outbox.nudge`), whose :meth:`Outbox.take` then gives no line and who
sends a keepalive comment: no timer per wait.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Literal

import anyio
import anyio.lowlevel

from ._signal import Signal

__all__ = ["NOT_READY", "Budget", "Outbox"]


class _Ready(enum.Enum):
    NOT_READY = "not ready"


#: :meth:`Outbox.take_ready`: nothing to take yet
NOT_READY: Literal[_Ready.NOT_READY] = _Ready.NOT_READY


class Budget:
    """The bytes one connection holds for its readers: queued and being sent."""

    __slots__ = ("_freed", "limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._freed = Signal()

    def room_for(self, size: int) -> bool:
        """Whether ``size`` more bytes fit (any line fits when nothing is held)."""
        return self.used == 0 or self.used + size <= self.limit

    async def wait_freed(self) -> None:
        """Until some bytes are released."""
        await self._freed.wait()

    def take(self, size: int) -> None:
        self.used += size

    def release(self, size: int) -> None:
        self.used -= size
        self._freed.wake()


class Outbox:
    """A bounded FIFO of message lines with one putter and one reader at a time."""

    __slots__ = (
        "_budget",
        "_bytes",
        "_closed",
        "_items",
        "_max_events",
        "_nudged",
        "_queued_since",
        "_readable",
        "_sending",
        "_sending_since",
        "_writable",
        "has_reader",
        "on_ready",
        "quiet_since",
    )

    def __init__(self, max_events: int, budget: Budget) -> None:
        # appended to, then taken whole: a list (a deque allocates a block of
        # 64 slots at once, for each outbox of each idle connection)
        self._items: list[bytes] = []
        self._bytes = 0
        self._max_events = max_events
        self._budget = budget
        self._closed = False
        self._readable = Signal()
        self._writable = Signal()
        self._queued_since: float | None = None
        self._sending = 0
        self._sending_since: float | None = None
        #: an SSE response (or a WebSocket) is taking from it
        self.has_reader = False
        #: when its reader last took (or began to take) lines
        self.quiet_since = 0.0
        self._nudged = False
        #: called (besides the waiters' wake-up) when :meth:`take_ready` has
        #: something: an SSE reader waiting for its client meanwhile
        self.on_ready: Callable[[], object] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @property
    def closed(self) -> bool:
        """Closed: :meth:`put` drops, :meth:`take` answers None once empty."""
        return self._closed

    @property
    def queued_bytes(self) -> int:
        """Bytes of the lines waiting (not taken yet)."""
        return self._bytes

    @property
    def waiting_since(self) -> float | None:
        """When the oldest message not delivered yet was queued (None: none)."""
        sending, queued = self._sending_since, self._queued_since
        if sending is None:
            return queued
        return sending if queued is None else min(sending, queued)

    def full_for(self, size: int) -> bool:
        """Whether a line of ``size`` bytes would have to wait.

        A line larger than the byte bound alone still goes in when the
        connection holds nothing else, so that no message is refused for its
        size here.
        """
        items = self._items
        full = bool(items) and len(items) >= self._max_events
        return full or not self._budget.room_for(size)

    async def put(self, line: bytes) -> None:
        """Queue ``line`` once there is room (dropped if the outbox closes)."""
        size = len(line)
        while self.full_for(size) and not self._closed:
            if self._items and len(self._items) >= self._max_events:
                await self._writable.wait()
            else:
                await self._budget.wait_freed()
        if self._closed:
            return
        if not self._items:
            self._queued_since = anyio.current_time()
        self._items.append(line)
        self._bytes += size
        self._budget.take(size)
        self._ready()

    async def take(self) -> list[bytes] | None:
        """What :meth:`take_ready` gives, waiting until it gives something.
        Woken by a line, it lets the other ready tasks run once before it
        takes: the lines of one burst go in one send."""
        while (lines := self.take_ready()) is NOT_READY:
            await self._readable.wait()
            await anyio.lowlevel.checkpoint()
        return lines

    def take_ready(self) -> list[bytes] | Literal[_Ready.NOT_READY] | None:
        """Every line queued; none once :meth:`nudge` woke the reader; None
        once closed and empty; else :data:`NOT_READY`.  The lines count as
        being sent until :meth:`delivered`."""
        if not self._items:
            if self._closed:
                return None
            if not self._nudged:
                return NOT_READY
            self._nudged = False
            self.quiet_since = anyio.current_time()
            return []
        self._nudged = False
        self.quiet_since = anyio.current_time()
        taken, self._items = self._items, []
        self.delivered()  # what a reader took before, if it did not say so
        self._sending, self._sending_since = self._bytes, self._queued_since
        self._bytes, self._queued_since = 0, None
        self._writable.wake()
        return taken

    def _ready(self) -> None:
        self._readable.wake()
        if self.on_ready is not None:
            self.on_ready()

    def nudge(self) -> None:
        """Wake the reader: its :meth:`take` gives no line (once), unless
        lines come first (a keepalive is due: the registry's sweep)."""
        self._nudged = True
        self._ready()

    def delivered(self) -> None:
        """What :meth:`take` gave was sent: its bytes are released."""
        if self._sending:
            self._budget.release(self._sending)
        self._sending, self._sending_since = 0, None

    def close(self) -> None:
        """No more lines; the reader takes what is queued, then None."""
        self._closed = True
        self._ready()
        self._writable.wake()
        self._budget.release(0)  # a putter waiting on the budget sees it

    def discard(self) -> None:
        """Close and drop what is queued or being sent (the connection is gone)."""
        self._items.clear()
        self._budget.release(self._bytes + self._sending)
        self._bytes, self._sending = 0, 0
        self._queued_since = self._sending_since = None
        self.close()
