"""Newline-delimited JSON framing over any trio stream.

One message per line, ``\\n`` terminated (ACP's stdio transport).  Reading is
bounded: a line longer than ``max_message_size`` is discarded *while it
streams in*; only a small head and tail are kept so that its ``id`` can be
answered.  Writing goes through a queue drained by one task, so concurrent
senders never interleave bytes and a burst of small messages leaves in one
``send_all``::

    reader = LineReader(stream, max_message_size=1 << 20)
    while (line := await reader.receive_line()) is not None:
        if isinstance(line, Oversized):
            ...  # line.head / line.tail: the first and last bytes
        else:
            ...  # bytes of one message, without the newline
"""

from __future__ import annotations

import collections
import re

import msgspec
import trio

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "LineReader",
    "LineWriter",
    "Oversized",
    "sniff_oversized",
]

#: Default bound on one incoming message, newline excluded (64 MiB: room for
#: base64 images in prompts, small enough to refuse a runaway peer).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024

_RECEIVE_CHUNK = 64 * 1024
_KEEP = 4096  # bytes kept from each end of an oversized line


class Oversized(msgspec.Struct, frozen=True):
    """A line that exceeded the size limit: its length and both ends."""

    size: int
    head: bytes
    tail: bytes


class LineReader:
    """Reads ``\\n``-delimited lines from a :class:`trio.abc.ReceiveStream`.

    Empty (whitespace-only) lines are skipped; a trailing ``\\r`` is dropped.
    A final line without newline before EOF is still returned.
    """

    def __init__(
        self,
        stream: trio.abc.ReceiveStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self._stream = stream
        self._max = max_message_size
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no newline
        self._eof = False

    async def receive_line(self) -> bytes | Oversized | None:
        """Return the next line, an :class:`Oversized` marker, or ``None`` at EOF."""
        while True:
            buf = self._buf
            i = buf.find(b"\n", self._scanned)
            if i >= 0:
                self._scanned = 0
                if i > self._max:
                    line: bytes | Oversized = Oversized(
                        i, bytes(buf[:_KEEP]), bytes(buf[max(0, i - _KEEP) : i])
                    )
                else:
                    line = bytes(buf[:i])
                del buf[: i + 1]
                if isinstance(line, Oversized):
                    return line
                line = line.rstrip(b"\r")
                if line.strip():
                    return line
                continue
            if self._eof:
                if not buf.strip():
                    return None
                line = bytes(buf).rstrip(b"\r")
                buf.clear()
                if len(line) > self._max:
                    return Oversized(len(line), line[:_KEEP], line[-_KEEP:])
                return line
            if len(buf) > self._max:
                return await self._discard_rest()
            self._scanned = len(buf)
            data = await self._stream.receive_some(_RECEIVE_CHUNK)
            if not data:
                self._eof = True
            else:
                buf += data

    async def _discard_rest(self) -> Oversized:
        # Keep the head and a rolling tail; never hold more than ~2 chunks.
        head = bytes(self._buf[:_KEEP])
        size = len(self._buf)
        tail = bytes(self._buf[-_KEEP:])
        self._buf.clear()
        self._scanned = 0
        while True:
            data = await self._stream.receive_some(_RECEIVE_CHUNK)
            if not data:
                self._eof = True
                return Oversized(size, head, tail)
            i = data.find(b"\n")
            if i >= 0:
                size += i
                tail = (tail + data[:i])[-_KEEP:]
                self._buf += data[i + 1 :]
                return Oversized(size, head, tail)
            size += len(data)
            tail = (tail + data)[-_KEEP:]


class LineWriter:
    """A queue of encoded messages drained into a stream by :meth:`run`.

    ``send_nowait`` never blocks (the receive loop uses it, so reading never
    waits on the peer reading); ``send`` waits while more than ``high_water``
    messages are queued, which gives user code backpressure.
    """

    def __init__(self, stream: trio.abc.SendStream, *, high_water: int = 1024) -> None:
        self._stream = stream
        self._queue: collections.deque[bytes] = collections.deque()
        self._high_water = high_water
        self._wakeup = trio.Event()
        self._space = trio.lowlevel.ParkingLot()
        self._closed = False

    def send_nowait(self, line: bytes) -> None:
        """Queue one message (``line`` must end with ``\\n``)."""
        if self._closed:
            raise trio.ClosedResourceError("connection closed")
        self._queue.append(line)
        self._wakeup.set()

    async def send(self, line: bytes) -> None:
        """Queue one message, first waiting while the queue is full."""
        await trio.lowlevel.checkpoint_if_cancelled()
        while len(self._queue) >= self._high_water and not self._closed:
            await self._space.park()
        self.send_nowait(line)

    def close(self) -> None:
        """Refuse further messages; :meth:`run` returns once the queue is drained."""
        self._closed = True
        self._wakeup.set()
        self._space.unpark_all()

    async def run(self) -> None:
        """Write queued messages until :meth:`close` and the queue is empty."""
        queue = self._queue
        while True:
            if not queue:
                if self._closed:
                    return
                await self._wakeup.wait()
                self._wakeup = trio.Event()
                continue
            if len(queue) == 1:
                data = queue.popleft()
            else:
                data = b"".join(queue)
                queue.clear()
            self._space.unpark_all()
            await self._stream.send_all(data)


# -- id sniffing for oversized lines -------------------------------------------

_WS = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(
    rb'-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false'
)
_TAIL_ID = re.compile(
    rb'"id"[ \t\r\n]*:[ \t\r\n]*(-?\d+|"(?:[^"\\]|\\.)*")[ \t\r\n]*\}[ \t\r\n]*\Z'
)


def sniff_oversized(line: Oversized) -> tuple[int | str | None, str | None, bool]:
    """Best effort ``(id, method, is_response)`` of a discarded line.

    Reads the top-level keys of the kept head (skipping nested values) and,
    when ``id`` is not among them, an ``"id": ...}`` that closes the line.
    ``id`` is ``None`` when none was found.
    """
    found: dict[bytes, object] = {}
    head = line.head
    pos = _WS.match(head, 0).end()  # type: ignore[union-attr]
    if head[pos : pos + 1] == b"{":
        pos += 1
        while True:
            pos = _WS.match(head, pos).end()  # type: ignore[union-attr]
            m = _STRING.match(head, pos)
            if m is None:
                break
            key = m.group()
            pos = _WS.match(head, m.end()).end()  # type: ignore[union-attr]
            if head[pos : pos + 1] != b":":
                break
            pos = _WS.match(head, pos + 1).end()  # type: ignore[union-attr]
            end = _skip_value(head, pos)
            if end < 0:
                found.setdefault(key, None)
                break
            scalar = _SCALAR.fullmatch(head, pos, end)
            found[key] = msgspec.json.decode(scalar.group()) if scalar else None
            pos = _WS.match(head, end).end()  # type: ignore[union-attr]
            if head[pos : pos + 1] != b",":
                break
            pos += 1
    ident = found.get(b'"id"')
    if not isinstance(ident, (int, str)) or isinstance(ident, bool):
        ident = None
        m = _TAIL_ID.search(line.tail)
        if m is not None:
            ident = msgspec.json.decode(m.group(1))
    method = found.get(b'"method"')
    is_response = b'"method"' not in found and (
        b'"result"' in found or b'"error"' in found
    )
    return ident, method if isinstance(method, str) else None, is_response


def _skip_value(data: bytes, pos: int) -> int:
    """End offset of the JSON value starting at ``pos``, or -1 if cut off."""
    m = _SCALAR.match(data, pos)
    if m is not None:
        return m.end()
    depth = 0
    n = len(data)
    while pos < n:
        c = data[pos]
        if c == 0x22:  # "
            m = _STRING.match(data, pos)
            if m is None:
                return -1
            pos = m.end()
            continue
        if c in b"[{":
            depth += 1
        elif c in b"]}":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return -1
