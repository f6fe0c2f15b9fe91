"""Newline-delimited JSON framing without I/O: bytes in, lines out.

One message per line, ``\\n`` terminated (ACP's stdio transport).  A line
longer than ``max_message_size`` is discarded *while it streams in*: only its
first and last 4 KiB are kept (an :class:`Oversized` record) so that its
``id`` can be answered (:func:`sniff_oversized`)::

    buffer = LineBuffer(max_message_size=1 << 20)
    for line in buffer.feed(chunk):          # every line complete in what came so far
        if isinstance(line, Oversized):
            ...  # line.size, line.head, line.tail
        else:
            ...  # bytes of one message, without the newline
    rest = buffer.feed_eof()                 # a last line without newline
"""

from __future__ import annotations

import re

import msgspec

from ._limits import DEFAULT_MAX_MESSAGE_SIZE

__all__ = ["KEEP", "LineBuffer", "Oversized", "sniff_oversized"]

#: Bytes kept from each end of an oversized line.
KEEP = 4096


class Oversized(msgspec.Struct, frozen=True):
    """A line that exceeded the size limit: its length and both ends."""

    size: int
    head: bytes
    tail: bytes


class LineBuffer:
    """Splits a byte stream into lines, holding at most about ``max_message_size``.

    Empty (whitespace-only) lines are skipped; a trailing ``\\r`` is
    dropped.  A final line without newline is returned by :meth:`feed_eof`.
    ``verbatim=True`` (a recorder, ``acp_inspect``): every line exactly as
    it came between two newlines, blank ones and ``\\r`` kept; the same bound.
    """

    __slots__ = ("_buf", "_discard", "_max", "_verbatim", "eof")

    def __init__(
        self,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        verbatim: bool = False,
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self._max = max_message_size
        self._verbatim = verbatim
        self._buf = bytearray()
        # While an oversized line streams: [size so far, head, tail].
        self._discard: list[object] | None = None
        self.eof = False

    @property
    def buffered(self) -> int:
        """Bytes held (of an incomplete line)."""
        return len(self._buf)

    @property
    def discarding(self) -> bool:
        """An oversized line is streaming in (its :class:`Oversized` record
        comes with its newline, or at EOF)."""
        return self._discard is not None

    def feed(self, data: bytes | bytearray) -> list[bytes | Oversized]:
        """Take ``data``; return every line it completed, in order."""
        if (
            self._discard is None
            and not self._verbatim
            and not self._buf
            and type(data) is bytes
            and data[-1:] == b"\n"
            and len(data) <= self._max + 1  # so is every line in it
        ):
            # The common case, decided in C for the whole chunk (no copy):
            # whole lines, none ending with "\r", every one starting with a
            # byte >= "{" (so none is blank); else line by line (_split).
            parts = data.split(b"\n")
            del parts[-1]  # after the last newline
            if len(parts) == 1:  # one line: its two ends tell
                if data[0] >= 0x7B and data[-2] != 0x0D:
                    return parts  # type: ignore[return-value]  # a list of bytes only
            elif b"\r" not in data and min(parts) >= b"{":
                return parts  # type: ignore[return-value]
        return self._feed(data)

    def _feed(self, data: bytes | bytearray) -> list[bytes | Oversized]:
        lines: list[bytes | Oversized] = []
        if self._discard is not None:
            i = data.find(b"\n")
            size, head, tail = self._discard
            if i < 0:
                self._discard = [
                    size + len(data),  # type: ignore[operator]
                    head,
                    (tail + bytes(data))[-KEEP:],  # type: ignore[operator]
                ]
                return lines
            self._discard = None
            lines.append(
                Oversized(
                    size + i,  # type: ignore[operator]
                    head,  # type: ignore[arg-type]
                    (tail + bytes(data[:i]))[-KEEP:],  # type: ignore[operator]
                )
            )
            data = data[i + 1 :]
        buf = self._buf
        if buf:
            scanned = len(buf)
            buf += data
            end = buf.rfind(b"\n", scanned)
        else:
            end = data.rfind(b"\n")
            if end >= 0 and end == len(data) - 1:  # whole lines
                self._split(bytes(data[:end]), lines)
                return lines
            buf += data
        if end >= 0:
            block = bytes(buf[:end])
            del buf[: end + 1]
            self._split(block, lines)
        if len(buf) > self._max:  # an oversized line: keep its ends only
            self._discard = [len(buf), bytes(buf[:KEEP]), bytes(buf[-KEEP:])]
            buf.clear()
        return lines

    def feed_eof(self) -> list[bytes | Oversized]:
        """The end of the stream: the last line, if it had no newline."""
        self.eof = True
        lines: list[bytes | Oversized] = []
        if self._discard is not None:
            size, head, tail = self._discard
            self._discard = None
            lines.append(Oversized(size, head, tail))  # type: ignore[arg-type]
            return lines
        buf = self._buf
        if buf if self._verbatim else buf.strip():
            self._split(bytes(buf), lines)
        buf.clear()
        return lines

    def _split(self, block: bytes, lines: list[bytes | Oversized]) -> None:
        limit = self._max
        if self._verbatim:
            for line in block.split(b"\n"):
                if len(line) > limit:
                    lines.append(Oversized(len(line), line[:KEEP], line[-KEEP:]))
                else:
                    lines.append(line)
            return
        # The common case decided in C for the whole block: no line can be
        # too long, none has a "\r", none is blank (every line starts with a
        # byte >= "{", above every whitespace byte: the least line shows it).
        parts = block.split(b"\n")
        if len(block) <= limit and b"\r" not in block and min(parts) >= b"{":
            lines += parts
            return
        append = lines.append
        for line in parts:
            if len(line) > limit:
                append(Oversized(len(line), line[:KEEP], line[-KEEP:]))
            elif line[-1:] == b"}" and line[:1] == b"{":  # the common case
                append(line)
            else:
                line = line.rstrip(b"\r")
                if line and not line.isspace():
                    append(line)


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
