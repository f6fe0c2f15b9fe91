"""One reader's queue of server -> client messages, bounded in count and bytes.

The connection's pump puts each agent line on the outbox of the stream that
carries it; the SSE response (or the WebSocket) takes them.  A full outbox
makes :meth:`Outbox.put` wait: the agent's output waits with it
(backpressure); the connection decides how long (``HttpLimits.stall_seconds``).
"""

from __future__ import annotations

from collections import deque

import anyio

__all__ = ["Outbox"]


class Outbox:
    """A bounded FIFO of message lines with one putter and one reader at a time."""

    __slots__ = (
        "_bytes",
        "_closed",
        "_items",
        "_max_bytes",
        "_max_events",
        "_readable",
        "_writable",
        "has_reader",
    )

    def __init__(self, max_events: int, max_bytes: int) -> None:
        self._items: deque[bytes] = deque()
        self._bytes = 0
        self._max_events = max_events
        self._max_bytes = max_bytes
        self._closed = False
        self._readable = anyio.Event()
        self._writable = anyio.Event()
        #: an SSE response (or a WebSocket) is taking from it
        self.has_reader = False

    def __len__(self) -> int:
        return len(self._items)

    @property
    def closed(self) -> bool:
        """Closed: :meth:`put` drops, :meth:`take` answers None once empty."""
        return self._closed

    @property
    def queued_bytes(self) -> int:
        """Bytes of the lines waiting."""
        return self._bytes

    def full_for(self, size: int) -> bool:
        """Whether a line of ``size`` bytes would have to wait.

        A line larger than the byte bound alone still goes into an empty
        outbox, so that no message is refused for its size here.
        """
        items = self._items
        return bool(items) and (
            len(items) >= self._max_events or self._bytes + size > self._max_bytes
        )

    async def put(self, line: bytes) -> None:
        """Queue ``line`` once there is room (dropped if the outbox closes)."""
        while self.full_for(len(line)) and not self._closed:
            if self._writable.is_set():
                self._writable = anyio.Event()
            await self._writable.wait()
        if self._closed:
            return
        self._items.append(line)
        self._bytes += len(line)
        self._readable.set()

    async def take(self) -> list[bytes] | None:
        """Every line queued (at least one, waiting for it); None once closed and empty."""
        items = self._items
        while not items:
            if self._closed:
                return None
            if self._readable.is_set():
                self._readable = anyio.Event()
            await self._readable.wait()
        taken = list(items)
        items.clear()
        self._bytes = 0
        self._writable.set()
        return taken

    def close(self) -> None:
        """No more lines; the reader takes what is queued, then None."""
        self._closed = True
        self._readable.set()
        self._writable.set()

    def discard(self) -> None:
        """Close and drop what is queued (the connection is gone)."""
        self._items.clear()
        self._bytes = 0
        self.close()
