"""Flow rules of a connection, as small objects with no I/O.

:class:`ReadGate` decides when the reading task stops reading (backpressure
towards the peer); :class:`ResumeOrder` keeps wire order between a response
and what the peer wrote after it.  The adapters (``acp_trio``, ``acp_asyncio``) feed them numbers (through
:class:`acp_core.Engine`) and do the waiting; they touch no event loop, so
they are tested with plain calls::

    gate = ReadGate(Limits(notification_queue_size=2))
    gate.reason(write_queued=0, queued=2, queued_bytes=0)  # "notifications"
"""

from __future__ import annotations

from typing import Final

from ._limits import Limits

__all__ = [
    "NOTIFICATIONS",
    "WRITE_BUFFER",
    "LogThrottle",
    "ReadGate",
    "ResumeOrder",
]

#: Reasons :meth:`ReadGate.reason` gives for not reading.
WRITE_BUFFER: Final = "write buffer"
NOTIFICATIONS: Final = "notifications"


class ReadGate:
    """Whether to read the peer's next chunk, from what is buffered.

    Reading stops (the peer's writes then block on the pipe or socket) while

    - ``2 * write_buffer_bytes`` or more wait to be written to the peer.
      Senders (``send``) already wait at ``write_buffer_bytes``; only what
      the runtime writes on its own (answers, errors for bad input, batch
      answers) goes past it, so this bounds those without stopping reading
      while a handler streams to a slow reader (a ``session/cancel`` must
      still be read);
    - ``notification_queue_size`` items or ``notification_queue_bytes``
      bytes of JSON wait in the ordered queue (notifications, and the
      responses and requests held behind them), unless the notification
      handler running waits for an answer from the peer
      (``notifications_wait``; the queue cannot drain before it comes).

    ``max_concurrent_requests`` does not stop reading: requests past it wait
    in the ordered queue (so within its bounds) while notifications and
    responses are still read (a ``session/cancel`` or ``$/cancel_request``
    acts at once).  While a running handler waits for the peer's answer
    to a request it made, requests past the bound are refused instead
    (:meth:`refuse_request`; the engine answers -32603 "Too many concurrent
    requests"): the answers they wait for may be behind them.

    The bounds are checked after every line, so each may be passed by what
    one message brings (a batch: up to ``max_batch_members`` requests and
    their answers).
    """

    __slots__ = ("max_bytes", "max_items", "max_requests", "max_write")

    def __init__(self, limits: Limits) -> None:
        self.max_write = 2 * limits.write_buffer_bytes
        self.max_requests = limits.max_concurrent_requests
        self.max_items = limits.notification_queue_size
        self.max_bytes = limits.notification_queue_bytes

    def full(
        self,
        write_queued: int,
        queued: int,
        queued_bytes: int,
        notifications_wait: int = 0,
    ) -> bool:
        """Whether reading must stop (``reason(...) is not None``, positional)."""
        return write_queued >= self.max_write or (
            (queued >= self.max_items or queued_bytes >= self.max_bytes)
            and not notifications_wait
        )

    def reason(
        self,
        *,
        write_queued: int,
        queued: int,
        queued_bytes: int,
        notifications_wait: int = 0,
    ) -> str | None:
        """Why not to read now (:data:`WRITE_BUFFER`, :data:`NOTIFICATIONS`),
        or ``None``: read.

        ``notifications_wait``: how many requests of ours, made by the
        notification handler, wait for the peer's answer.
        """
        if write_queued >= self.max_write:
            return WRITE_BUFFER
        if (
            queued >= self.max_items or queued_bytes >= self.max_bytes
        ) and not notifications_wait:
            return NOTIFICATIONS
        return None

    def refuse_request(self, running: int, requests_wait: int) -> bool:
        """Whether a request is refused rather than wait: ``running``
        (started) at the bound, and one of those handlers waits for the peer
        (whose answer may be behind the request: it could wait for ever)."""
        return running >= self.max_requests and requests_wait > 0


class ResumeOrder:
    """A caller whose response was released runs before anything read after it.

    The peer's order on the wire is a promise: an agent that answers
    ``session/new`` and then sends an update for that session expects the
    client to know the session when the update is handled.  Releasing a
    response only makes its caller runnable; the notification task is
    runnable too, and trio runs the two in either order.  So a release
    :meth:`hold`\\ s the queue of later messages until the caller
    :meth:`resume`\\ s (its first step after the wait).  Requests made
    from a notification handler are not held (the handler is the caller:
    it resumes when the queue does).
    """

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = 0  # callers released and not resumed yet

    def hold(self) -> None:
        """A caller was released: later messages wait for it."""
        self.held += 1

    def resume(self) -> bool:
        """The caller resumed; ``True`` when no caller is left to wait for."""
        self.held -= 1
        return self.held == 0

    @property
    def blocked(self) -> bool:
        """Whether the next queued message must wait."""
        return self.held > 0


class LogThrottle:
    """Which reports of bad input get a WARNING line: a flood must not flood the log.

    The first ``first`` are logged, then the 100th, 1,000th, 10,000th, ...
    (with the count so far); the rest go to DEBUG.
    """

    __slots__ = ("count", "first", "next_milestone")

    def __init__(self, first: int = 10) -> None:
        self.count = 0
        self.first = first
        self.next_milestone = 100

    def allow(self) -> bool:
        """Count one report; whether it is logged at WARNING."""
        self.count += 1
        if self.count <= self.first:
            return True
        if self.count == self.next_milestone:
            self.next_milestone *= 10
            return True
        return False
