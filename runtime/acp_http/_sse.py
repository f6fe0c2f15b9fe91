"""Server-sent events, as the transport uses them: ``data:`` lines, one message each.

The reader is bounded (:class:`SseReader`, ``max_event_bytes``): a peer that
never ends a line or an event cannot grow our memory past the bound.  Its
lines are framed by :class:`acp_core.LineBuffer` (verbatim: a blank line
ends an event), the one framer of the project; an event past the bound is
discarded while it streams and given as an :class:`acp_core.Oversized`
record of its data (both ends kept), for the verdict every reader takes.
"""

from __future__ import annotations

from acp_core import LineBuffer, Oversized

__all__ = ["SseReader"]

#: bytes kept of each end of an over-long event's data (as LineBuffer keeps)
ENDS = 4096


class SseReader:
    """Splits an SSE byte stream into the ``data`` of its events.

    Comments (``:``) and the ``event``/``id``/``retry`` fields are skipped;
    the ``data`` lines of one event are joined by ``\\n`` as the SSE standard
    says (a JSON-RPC message is one line anyway).
    """

    __slots__ = ("_data", "_lines", "_max", "_over", "_size")

    def __init__(self, max_event_bytes: int) -> None:
        self._max = max_event_bytes
        # the one framer, verbatim: a blank line ends an event here
        self._lines = LineBuffer(max_message_size=max_event_bytes, verbatim=True)
        self._data: list[bytes] = []
        self._size = 0
        # the event's data once past the bound: its size and ends only
        self._over: Oversized | None = None

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The events that ``chunk`` completes: the data of each, or the
        :class:`~acp_core.Oversized` record of one past the bound."""
        events: list[bytes | Oversized] = []
        for raw in self._lines.feed(chunk):
            if type(raw) is not bytes:  # a line past the bound, discarded
                assert isinstance(raw, Oversized)
                if raw.head.startswith(b"data:"):
                    cut = 6 if raw.head.startswith(b"data: ") else 5
                    # the tail holds the field name too when the line is short
                    drop = max(0, cut - (raw.size - len(raw.tail)))
                    value = Oversized(raw.size - cut, raw.head[cut:], raw.tail[drop:])
                    self._add(value)
                continue  # another field that long is no part of a message
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                if self._over is not None:
                    events.append(self._over)
                elif self._data:
                    events.append(b"\n".join(self._data))
                self._data, self._size, self._over = [], 0, None
                continue
            if line.startswith(b"data:"):
                self._add(line[6:] if line.startswith(b"data: ") else line[5:])
        return events

    def _add(self, value: bytes | Oversized) -> None:
        """One ``data`` line of the event, within the bound or not."""
        over = self._over
        if isinstance(value, bytes) and over is None:
            if self._size + len(value) <= self._max:
                self._size += len(value) + 1
                self._data.append(value)
                return
        # past the bound: the event is an Oversized record from now on
        if over is None:
            joined = b"\n".join(self._data)
            over = Oversized(len(joined), joined[:ENDS], joined[-ENDS:])
            self._data = []
        if isinstance(value, bytes):
            value = Oversized(len(value), value[:ENDS], value[-ENDS:])
        sep = 1 if over.size else 0  # the "\n" between two data lines
        head = (
            over.head if over.size >= ENDS else (over.head + b"\n" * sep + value.head)
        )
        self._over = Oversized(
            over.size + sep + value.size,
            head[:ENDS],
            (over.tail + b"\n" * sep + value.tail)[-ENDS:],
        )
