"""The in-memory seam: two components of one process joined as by a pipe, without I/O.

A :class:`BytePipe` is one direction: bytes a writer put in and a reader has
not taken yet, at most ``capacity`` of them (64 KiB by default, a Linux
pipe's size).  It keeps a pipe's rules, so that an agent and a client
joined in memory behave as over ``os.pipe()``:

- a write takes what fits and says how much (``0``: full, the writer waits
  until the reader took some);
- a read takes what is there (``None``: nothing yet, the reader waits;
  ``b""``: the writer closed and everything was read);
- a write to a pipe whose reader closed raises :class:`BrokenPipeError`.

The pipe never waits: each end (acp_trio's stream, acp_asyncio's transport,
acp_http's anyio stream) registers a waker (:attr:`BytePipe.on_readable`,
:attr:`BytePipe.on_writable`) and waits in its own event loop.  Both ends
live in one thread; the pipe is not thread-safe.

:func:`seam_ends` gives the two ends of a two-way seam, each a
:class:`SeamEnd` (what it reads, what it writes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec

__all__ = ["DEFAULT_SEAM_CAPACITY", "BytePipe", "SeamEnd", "seam_ends"]

#: Bytes one direction of a seam holds before its writer waits (a Linux pipe's 64 KiB).
DEFAULT_SEAM_CAPACITY: Final = 64 * 1024


def _nothing() -> None:
    pass


class BytePipe:
    """One direction of a seam: a bounded buffer with a pipe's rules (see the module)."""

    __slots__ = (
        "_buffer",
        "capacity",
        "on_readable",
        "on_writable",
        "read_closed",
        "write_closed",
    )

    def __init__(self, capacity: int = DEFAULT_SEAM_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"a pipe's capacity is at least 1 byte, not {capacity}")
        self.capacity = capacity
        self._buffer = bytearray()
        self.read_closed = False
        self.write_closed = False
        #: Called when a read may now succeed (bytes arrived, or the writer closed).
        self.on_readable: Callable[[], None] = _nothing
        #: Called when a write may now succeed (room freed, or the reader closed).
        self.on_writable: Callable[[], None] = _nothing

    @property
    def buffered(self) -> int:
        """Bytes written and not read yet (at most :attr:`capacity`)."""
        return len(self._buffer)

    @property
    def room(self) -> int:
        """Bytes a write takes now."""
        return self.capacity - len(self._buffer)

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Take what fits of ``data``; how many bytes (``0``: full, wait for room).

        :class:`BrokenPipeError` once the reader closed; ``ValueError`` after
        :meth:`close_write`.
        """
        if self.write_closed:
            raise ValueError("write to a pipe whose writing end is closed")
        if self.read_closed:
            raise BrokenPipeError("the reading end of the pipe is closed")
        taken = min(len(data), self.capacity - len(self._buffer))
        if taken:
            was_empty = not self._buffer
            self._buffer += data[:taken]
            if was_empty:
                self.on_readable()
        return taken

    def read(self, max_bytes: int | None = None) -> bytes | None:
        """Up to ``max_bytes`` of what is buffered; ``None``: nothing yet, wait;
        ``b""``: the writer closed and all was read."""
        buffer = self._buffer
        if not buffer:
            return b"" if self.write_closed or self.read_closed else None
        was_full = len(buffer) >= self.capacity
        if max_bytes is None or max_bytes >= len(buffer):
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:max_bytes])
            del buffer[:max_bytes]
        if was_full:
            self.on_writable()
        return data

    def close_write(self) -> None:
        """The writer is done: the reader reads what is left, then ``b""``."""
        if not self.write_closed:
            self.write_closed = True
            self.on_readable()
            self.on_writable()

    def close_read(self) -> None:
        """The reader is gone: what is buffered is dropped, writes break."""
        if not self.read_closed:
            self.read_closed = True
            self._buffer.clear()
            self.on_writable()
            self.on_readable()


class SeamEnd(msgspec.Struct, frozen=True):
    """One end of a two-way seam: the pipe it reads and the pipe it writes."""

    incoming: BytePipe
    outgoing: BytePipe

    def close(self) -> None:
        """Both directions closed from this end (as closing a socket)."""
        self.outgoing.close_write()
        self.incoming.close_read()


def seam_ends(capacity: int = DEFAULT_SEAM_CAPACITY) -> tuple[SeamEnd, SeamEnd]:
    """The two ends of a seam, ``capacity`` bytes each way."""
    there, back = BytePipe(capacity), BytePipe(capacity)
    return SeamEnd(incoming=back, outgoing=there), SeamEnd(
        incoming=there, outgoing=back
    )
