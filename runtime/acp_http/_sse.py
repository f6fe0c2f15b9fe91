"""Server-sent events, as the transport uses them: ``data:`` lines, one message each.

The reader is bounded (:class:`SseReader`, ``max_event_bytes``): a peer that
never ends a line or an event cannot grow our memory past the bound.  Its
lines are framed by :class:`acp_core.LineBuffer` (verbatim: a blank line
ends an event), the one framer of the project.
"""

from __future__ import annotations

from acp_core import LineBuffer

__all__ = ["EventTooLarge", "SseReader"]


class EventTooLarge(Exception):
    """An SSE event (or line) over the reader's bound."""


class SseReader:
    """Splits an SSE byte stream into the ``data`` of its events.

    Comments (``:``) and the ``event``/``id``/``retry`` fields are skipped;
    the ``data`` lines of one event are joined by ``\\n`` as the SSE standard
    says (a JSON-RPC message is one line anyway).
    """

    __slots__ = ("_data", "_lines", "_max", "_size")

    def __init__(self, max_event_bytes: int) -> None:
        self._max = max_event_bytes
        # the one framer, verbatim: a blank line ends an event here
        self._lines = LineBuffer(max_message_size=max_event_bytes, verbatim=True)
        self._data: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The events that ``chunk`` completes (:class:`EventTooLarge` past the bound)."""
        events: list[bytes] = []
        lines = self._lines.feed(chunk)
        if self._lines.discarding:
            raise EventTooLarge(f"an SSE line is over {self._max} bytes")
        for raw in lines:
            if type(raw) is not bytes:  # an Oversized record: ended in this chunk
                raise EventTooLarge(f"an SSE line is over {self._max} bytes")
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                if self._data:
                    events.append(b"\n".join(self._data))
                    self._data = []
                    self._size = 0
                continue
            if line.startswith(b"data:"):
                value = line[6:] if line.startswith(b"data: ") else line[5:]
                self._size += len(value) + 1
                if self._size > self._max:
                    raise EventTooLarge(f"an SSE event is over {self._max} bytes")
                self._data.append(value)
        return events
