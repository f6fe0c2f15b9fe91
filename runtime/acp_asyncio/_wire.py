"""Bytes in and out of one connection on asyncio: pipes, sockets or a stream pair.

The connection sees one :class:`Wire`: it is told about input through
callbacks (``on_data``, ``on_eof``) and writes whole lines with
``write``, which never blocks; senders that must respect the write budget
(``Limits.write_buffer_bytes``) then ``await wait_for_space()``.

Three kinds:

- :class:`PipeWire`: a read and a write file descriptor (stdio, the pipes of a
  subprocess, a socket): asyncio's pipe transports, which read with
  ``os.read`` in a reader callback and write with ``os.write`` at once when
  nothing is queued (the fast path of acp_trio's pipes, for free).  Input is
  handed over chunk by chunk in the event loop's callback, without a task
  switch.
- :class:`StreamWire`: an :class:`asyncio.StreamReader` /
  :class:`asyncio.StreamWriter` pair you already have (a TCP connection, a
  process started with :func:`asyncio.create_subprocess_exec`): a task reads
  the reader and hands the chunks over the same way.
- :class:`SeamWire`: one end of the in-memory seam (``acp_core.SeamEnd``),
  read and written directly: no streams and no task
  (:func:`~acp_asyncio.connect_to_client_in_memory`).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Final, Protocol, TypeAlias

from acp_host import pollable, reader_gone

if TYPE_CHECKING:
    from acp_core import Limits, SeamEnd

__all__ = ["PipeWire", "SeamWire", "StreamWire", "Wire", "WireCallbacks"]


class WireCallbacks(Protocol):
    """What a wire tells its owner (a connection, a proxy's connection)."""

    @property
    def limits(self) -> Limits:
        """``write_buffer_bytes`` is the wire's write budget."""
        ...

    def on_data(self, data: bytes) -> None:
        """Input arrived (never empty)."""
        ...

    def on_eof(self) -> None:
        """Input ended."""
        ...

    def on_broken(self) -> None:
        """The peer stopped reading: writing failed."""
        ...


#: Bytes asked for per read of a stream (the pipe transports read 256 KiB).
READ_CHUNK: Final = 64 * 1024


class _ReadProtocol(asyncio.Protocol):
    def __init__(self, wire: PipeWire) -> None:
        self.wire = wire

    def data_received(self, data: bytes) -> None:
        self.wire.callbacks.on_data(data)

    def eof_received(self) -> bool | None:
        self._eof()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        # EOF on a pipe arrives as connection_lost(None) without eof_received
        self._eof()

    def _eof(self) -> None:
        wire = self.wire
        if not wire.eof_seen and not wire.closing:
            wire.eof_seen = True
            wire.callbacks.on_eof()


class _WriteProtocol(asyncio.BaseProtocol):
    def __init__(self, wire: PipeWire) -> None:
        self.wire = wire

    def pause_writing(self) -> None:
        self.wire.space.clear()

    def resume_writing(self) -> None:
        self.wire.space.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.wire.space.set()
        self.wire.write_closed.set()
        if not self.wire.closing:
            self.wire.callbacks.on_broken()


class PipeWire:
    """A connection over a read fd and a write fd (pipes, sockets, a tty).

    Built with :meth:`open`; the fds are the wire's own (closed with it).
    """

    def __init__(self, callbacks: WireCallbacks) -> None:
        self.callbacks = callbacks
        self.budget = callbacks.limits.write_buffer_bytes
        self.space = asyncio.Event()
        self.space.set()
        self.write_closed = asyncio.Event()
        self.eof_seen = False
        self.closing = False
        self._aborted = False
        self._write_fd = -1
        # both set by open(), before the connection may use the wire
        self._read: asyncio.ReadTransport
        self._write: asyncio.WriteTransport

    @classmethod
    async def open(
        cls, read_fd: int, write_fd: int, callbacks: WireCallbacks
    ) -> PipeWire:
        """Take ``read_fd`` / ``write_fd`` (closed with the wire).

        Pipes, sockets and terminals go through asyncio's pipe transports;
        what the event loop cannot wait on (a regular file, ``/dev/null``:
        ``agent < requests.jsonl > replies.jsonl``) is read in chunks from
        loop callbacks and written directly, as neither ever blocks.
        """
        loop = asyncio.get_running_loop()
        wire = cls(callbacks)
        budget = wire.budget
        wire._write_fd = write_fd
        if pollable(write_fd):
            write_transport, _ = await loop.connect_write_pipe(
                lambda: _WriteProtocol(wire),
                os.fdopen(write_fd, "wb", buffering=0),
            )
        else:
            write_transport = _FileWriter(write_fd, _WriteProtocol(wire))
        write_transport.set_write_buffer_limits(high=budget, low=budget)
        wire._write = write_transport
        if pollable(read_fd):
            read_transport, _ = await loop.connect_read_pipe(
                lambda: _ReadProtocol(wire),
                os.fdopen(read_fd, "rb", buffering=0),
            )
        else:
            read_transport = _FileReader(loop, read_fd, _ReadProtocol(wire))
        wire._read = read_transport
        return wire

    def write(self, data: bytes) -> None:
        if not self._write.is_closing():
            self._write.write(data)

    @property
    def queued(self) -> int:
        return self._write.get_write_buffer_size()

    async def wait_for_space(self) -> None:
        while self.queued > self.budget and not self.write_closed.is_set():
            self.space.clear()
            await self.space.wait()

    def pause_reading(self) -> None:
        if self._read.is_reading():
            self._read.pause_reading()

    def resume_reading(self) -> None:
        if not self._read.is_closing() and not self._read.is_reading():
            self._read.resume_reading()

    def reader_gone(self) -> bool:
        return self.write_closed.is_set() or reader_gone(self._write_fd)

    def close(self) -> None:
        self.closing = True
        self._read.close()
        self._write.close()  # after what is queued was written

    def abort(self) -> None:
        """Close now, dropping what is queued.  Once: the ``FLUSH_GRACE``
        timer and the end of the grace both call it, maybe after the pipe
        closed, and asyncio's pipe transport fails on a second abort."""
        self.close()
        if self._aborted or self.write_closed.is_set():
            return
        self._aborted = True
        self._write.abort()

    async def wait_closed(self) -> None:
        await self.write_closed.wait()


class StreamWire:
    """A connection over an :class:`asyncio.StreamReader` / ``StreamWriter`` pair."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        callbacks: WireCallbacks,
    ) -> None:
        self.callbacks = callbacks
        self.budget = budget = callbacks.limits.write_buffer_bytes
        self.reader = reader
        self.writer = writer
        writer.transport.set_write_buffer_limits(high=budget, low=budget)
        self._paused = False
        # made while reading is paused, resolved by resume_reading: no
        # asyncio.Event (and its waiters' deque) per idle connection
        self._resumed: asyncio.Future[None] | None = None
        self._closing = False
        # reads from the next loop iteration on: the connection has the wire by then
        self._task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        callbacks = self.callbacks
        try:
            while not self._closing:
                if self._paused:
                    resumed = self._resumed = asyncio.get_running_loop().create_future()
                    try:
                        await resumed
                    finally:
                        self._resumed = None
                    continue
                data = await self.reader.read(READ_CHUNK)
                if not data:
                    break
                callbacks.on_data(data)
        except (ConnectionError, OSError):
            pass
        if not self._closing:
            callbacks.on_eof()

    def write(self, data: bytes) -> None:
        if not self.writer.transport.is_closing():
            self.writer.write(data)

    @property
    def queued(self) -> int:
        return self.writer.transport.get_write_buffer_size()

    async def wait_for_space(self) -> None:
        if self.queued > self.budget:
            try:
                await self.writer.drain()
            except (ConnectionError, OSError):
                self.callbacks.on_broken()

    def pause_reading(self) -> None:
        self._paused = True

    def resume_reading(self) -> None:
        self._paused = False
        resumed = self._resumed
        if resumed is not None and not resumed.done():
            resumed.set_result(None)

    def reader_gone(self) -> bool:
        return self.writer.transport.is_closing()

    def close(self) -> None:
        self._closing = True
        self.resume_reading()
        self._task.cancel()
        self.writer.close()

    def abort(self) -> None:
        self.close()
        self.writer.transport.abort()

    async def wait_closed(self) -> None:
        try:
            await self.writer.wait_closed()
        except NotImplementedError:
            # a writer over a bare FlowControlMixin (the usual recipe for a
            # pipe: connect_write_pipe) cannot wait for its close; its
            # transport still writes what is queued before closing
            pass
        except (ConnectionError, OSError):
            pass


class _FileReader(asyncio.ReadTransport):
    """Reads a file that never blocks, one chunk per event-loop callback."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, fd: int, protocol: asyncio.Protocol
    ) -> None:
        super().__init__()
        self._loop = loop
        self._fd = fd
        self._protocol = protocol
        self._reading = True
        self._closed = False
        loop.call_soon(self._read)

    def _read(self) -> None:
        if self._closed or not self._reading:
            return
        try:
            data = os.read(self._fd, READ_CHUNK)
        except OSError as exc:
            self._finish(exc)
            return
        if not data:
            self._finish(None)
            return
        self._protocol.data_received(data)
        self._loop.call_soon(self._read)

    def _finish(self, exc: Exception | None) -> None:
        if not self._closed:
            self.close()
            self._protocol.connection_lost(exc)

    def is_reading(self) -> bool:
        return self._reading and not self._closed

    def pause_reading(self) -> None:
        self._reading = False

    def resume_reading(self) -> None:
        if not self._reading and not self._closed:
            self._reading = True
            self._loop.call_soon(self._read)

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)


class _FileWriter(asyncio.WriteTransport):
    """Writes a file (or ``/dev/null``) directly: it never blocks for long."""

    def __init__(self, fd: int, protocol: asyncio.BaseProtocol) -> None:
        super().__init__()
        self._fd = fd
        self._protocol = protocol
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self.abort()
            self._protocol.connection_lost(exc)

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(
        self, high: int | None = None, low: int | None = None
    ) -> None:
        pass

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)
            self._protocol.connection_lost(None)

    def abort(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)


class SeamWire:
    """A connection over one end of the in-memory seam itself (a
    :class:`acp_core.SeamEnd`): no streams, no transport, no reading task.

    The pipe says when it is readable; a loop callback then hands the
    engine a chunk (one loop step, where a transport under a
    ``StreamReader`` and a task reading it take two).  Writes go into the
    peer's pipe as far as it has room; the rest waits here, counted against
    the write budget (``queued``), and goes on as the peer reads.  A waiter
    for room or for the end is a loop future made while it waits.
    """

    __slots__ = (
        "_closed",
        "_closing",
        "_end",
        "_flush_scheduled",
        "_input_over",
        "_loop",
        "_paused",
        "_pending",
        "_read_scheduled",
        "_space",
        "_written",
        "budget",
        "callbacks",
    )

    def __init__(self, end: SeamEnd, callbacks: WireCallbacks) -> None:
        self.callbacks = callbacks
        self.budget = callbacks.limits.write_buffer_bytes
        self._end = end
        self._loop = asyncio.get_running_loop()
        self._pending = bytearray()  # what the peer's pipe had no room for
        self._paused = False
        self._read_scheduled = False
        self._flush_scheduled = False
        self._closing = False
        self._input_over = False
        self._written = False  # writing ended: closed once flushed, or broken
        self._space: asyncio.Future[None] | None = None
        self._closed: asyncio.Future[None] | None = None
        end.incoming.on_readable = self._schedule_read
        end.outgoing.on_writable = self._schedule_flush
        # reads from the next loop iteration on: the connection has the wire by then
        self._schedule_read()

    # -- reading -------------------------------------------------------------

    def _schedule_read(self) -> None:
        if not (self._read_scheduled or self._paused or self._input_over):
            self._read_scheduled = True
            self._loop.call_soon(self._read)

    def _read(self) -> None:
        self._read_scheduled = False
        if self._paused or self._input_over or self._closing:
            return
        incoming = self._end.incoming
        data = incoming.read(READ_CHUNK)
        if data is None:
            return  # the pipe calls _schedule_read when bytes come
        if not data:
            self._input_over = True
            self.callbacks.on_eof()
            return
        self.callbacks.on_data(data)
        if incoming.buffered or incoming.write_closed:
            self._schedule_read()  # more, or the end: each in a callback of its own

    def pause_reading(self) -> None:
        self._paused = True

    def resume_reading(self) -> None:
        if self._paused:
            self._paused = False
            self._schedule_read()

    # -- writing -------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self._closing or self._written:
            return
        if self._pending:
            self._pending += data
            return
        try:
            taken = self._end.outgoing.write(data)
        except (BrokenPipeError, ValueError):
            self._broken()
            return
        if taken < len(data):
            self._pending += memoryview(data)[taken:]

    @property
    def queued(self) -> int:
        return len(self._pending)

    async def wait_for_space(self) -> None:
        while len(self._pending) > self.budget and not self._written:
            space = self._space
            if space is None:
                space = self._space = self._loop.create_future()
            await asyncio.shield(space)

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled and (self._pending or self._closing):
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._written:
            return
        pending = self._pending
        if pending:
            try:
                taken = self._end.outgoing.write(pending)
            except (BrokenPipeError, ValueError):
                self._broken()
                return
            del pending[:taken]
        if len(pending) <= self.budget:
            self._wake_space()
        if not pending and self._closing:
            self._end.outgoing.close_write()
            self._end_writing()

    def _broken(self) -> None:
        """The peer stopped reading: what waits is dropped."""
        self._pending.clear()
        self._end_writing()
        if not self._closing:
            self.callbacks.on_broken()

    def _wake_space(self) -> None:
        space, self._space = self._space, None
        if space is not None and not space.done():
            space.set_result(None)

    def _end_writing(self) -> None:
        self._written = True
        self._wake_space()
        closed = self._closed
        if closed is not None and not closed.done():
            closed.set_result(None)

    # -- the end -------------------------------------------------------------

    def reader_gone(self) -> bool:
        return self._written

    def close(self) -> None:
        """Stop reading; write what waits, then close (``wait_closed``)."""
        if self._closing:
            return
        self._closing = True
        self._end.incoming.close_read()
        self._flush()

    def abort(self) -> None:
        self._closing = True
        self._pending.clear()
        self._end.close()
        self._end_writing()

    async def wait_closed(self) -> None:
        if self._written:
            return
        closed = self._closed
        if closed is None:
            closed = self._closed = self._loop.create_future()
        await asyncio.shield(closed)


#: What a connection reads and writes through.
Wire: TypeAlias = PipeWire | StreamWire | SeamWire
