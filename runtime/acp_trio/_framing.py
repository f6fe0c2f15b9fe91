"""Newline-delimited JSON framing over any trio stream.

One message per line, ``\\n`` terminated (ACP's stdio transport).  Reading is
bounded: a line longer than ``max_message_size`` is discarded *while it
streams in*; only a small head and tail are kept so that its ``id`` can be
answered.  Writing goes through a queue drained by one task, so concurrent
senders never interleave bytes and a burst of small messages leaves in one
``send_all``; over a pipe a message is written at once by its sender when no
write is in flight::

    reader = LineReader(stream, max_message_size=1 << 20)
    while (line := await reader.receive_line()) is not None:
        if isinstance(line, Oversized):
            ...  # line.head / line.tail: the first and last bytes
        else:
            ...  # bytes of one message, without the newline
"""

from __future__ import annotations

import collections
import errno
import os
import time
from typing import Any, Final, cast

import trio
from acp_core import DEFAULT_MAX_MESSAGE_SIZE, LineBuffer, Oversized, sniff_oversized
from acp_host import reader_gone

from ._schedule import SchedulePoint

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HOLD_BYTES",
    "HOLD_SECONDS",
    "CallWaiter",
    "LineReader",
    "LineWriter",
    "Oversized",
    "SchedulePoint",
    "Wakeup",
    "sniff_oversized",
]

_RECEIVE_CHUNK = 64 * 1024

_FdStream: Any = getattr(trio.lowlevel, "FdStream", None)  # absent on Windows


def _fd_stream(stream: object, part: str) -> Any:
    """The :class:`trio.lowlevel.FdStream` under ``stream`` for one direction, if any.

    ``part`` is ``"send_stream"`` or ``"receive_stream"`` (the halves of a
    :class:`trio.StapledStream`, as :func:`~acp_trio.spawn_agent` and
    :func:`~acp_trio.serve_agent_stdio` build).  Pipes found this way are
    read and written with ``os.read`` / ``os.write`` directly, which saves
    the scheduler pass ``FdStream.receive_some`` / ``send_all`` spend on a
    checkpoint before every call (see :class:`LineReader`, :class:`LineWriter`).
    """
    if _FdStream is None:  # pragma: no cover (Windows)
        return None
    if isinstance(stream, trio.StapledStream):
        stream = getattr(cast(Any, stream), part)
    return stream if type(stream) is _FdStream else None


def _os_error(exc: OSError) -> trio.ClosedResourceError | trio.BrokenResourceError:
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(exc))


class Wakeup:
    """One task parked until another wakes it (cheaper than a new Event per wait)."""

    __slots__ = ("task",)

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None

    async def wait(self) -> None:
        self.task = trio.lowlevel.current_task()

        def abort(_: Any) -> trio.lowlevel.Abort:
            self.task = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def wake(self) -> None:
        task = self.task
        if task is not None:
            self.task = None
            trio.lowlevel.reschedule(task)


class CallWaiter:
    """The task waiting for one response (``trio.Event``'s ``wait``/``set``, one waiter).

    ``acp_core``'s ``Call.waiter``: ``set()`` once the answer is in.  No
    parking lot: one task waits, so a slot is enough.
    """

    __slots__ = ("flag", "task")

    def __init__(self) -> None:
        self.flag = False
        self.task: trio.lowlevel.Task | None = None

    def set(self) -> None:
        self.flag = True
        task = self.task
        if task is not None:
            self.task = None
            trio.lowlevel.reschedule(task)

    async def wait(self) -> None:
        """Until :meth:`set` (a checkpoint, as ``Event.wait``; cancellable)."""
        if self.flag:
            await trio.lowlevel.checkpoint()
            return
        self.task = trio.lowlevel.current_task()
        await trio.lowlevel.wait_task_rescheduled(self._abort)

    def _abort(self, _: Any) -> trio.lowlevel.Abort:
        self.task = None
        return trio.lowlevel.Abort.SUCCEEDED


class LineReader:
    """Reads ``\\n``-delimited lines from a :class:`trio.abc.ReceiveStream`.

    The framing is :class:`acp_core.LineBuffer`'s (bounded; empty lines
    skipped, a trailing ``\\r`` dropped, a final line without newline
    before EOF still returned); this adds the reading.
    """

    def __init__(
        self,
        stream: trio.abc.ReceiveStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._lines = LineBuffer(max_message_size=max_message_size)
        self._stream = stream
        self._fd_stream = _fd_stream(stream, "receive_stream")
        self._hot = False  # the last read returned without waiting
        #: The next read waits for the pipe to be readable first (set when
        #: the peer is expected to answer what was just sent: a read now
        #: would only find the pipe empty, a system call and an exception).
        self.wait_first = False
        self._unread: list[bytes | Oversized] = []

    @property
    def buffered(self) -> int:
        """Bytes held of an incomplete line (bounded by ``max_message_size``)."""
        return self._lines.buffered

    async def receive_line(self) -> bytes | Oversized | None:
        """Return the next line, an :class:`Oversized` marker, or ``None`` at EOF."""
        if not self._unread:
            lines = await self.receive_lines()
            if lines is None:
                return None
            self._unread = lines
        return self._unread.pop(0)

    async def receive_lines(self) -> list[bytes | Oversized] | None:
        """Every line complete now (waiting for one if none is), or ``None`` at EOF."""
        if self._unread:
            lines, self._unread = self._unread, []
            return lines
        buffer = self._lines
        while not buffer.eof:
            data = await self._receive_some()
            lines = buffer.feed(data) if data else buffer.feed_eof()
            if lines:
                return lines
        return None

    def unread(self, lines: list[bytes | Oversized]) -> None:
        """Give back lines taken by :meth:`receive_lines`: the next call returns them first."""
        if lines:
            self._unread = lines + self._unread

    async def receive_some(self) -> bytes | bytearray:
        """The next chunk read (``b""`` at end of input), unframed."""
        return await self._receive_some()

    async def _receive_some(self) -> bytes | bytearray:
        fds = self._fd_stream
        if fds is None:
            return await self._stream.receive_some(_RECEIVE_CHUNK)
        # A pipe: os.read first, wait_readable only when it would block.  The
        # wait is the checkpoint; a read that did not wait is followed by one
        # at the next call, so a peer that floods us cannot starve other tasks.
        waited = False
        if self._hot:
            await trio.lowlevel.checkpoint()
        elif self.wait_first:
            fd = fds.fileno()
            if fd < 0:
                raise trio.ClosedResourceError("file was already closed")
            await trio.lowlevel.wait_readable(fd)
            waited = True
        self.wait_first = False
        while True:
            fd = fds.fileno()
            if fd < 0:
                raise trio.ClosedResourceError("file was already closed")
            try:
                data = os.read(fd, _RECEIVE_CHUNK)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(fd)
                waited = True
                continue
            except OSError as exc:
                raise _os_error(exc) from exc
            self._hot = not waited
            return data


#: Most buffers handed to one ``os.writev`` (POSIX guarantees 16, Linux takes 1024).
_WRITEV_MAX = 512

#: While held (:meth:`LineWriter.hold`), sends are written at once when this
#: many bytes are kept back.
HOLD_BYTES: Final = 64 * 1024
#: While held, sends are written at once when the oldest byte kept back has
#: waited this long (checked at each send: a handler's synchronous work
#: between two sends can delay the first by that stretch at most).
HOLD_SECONDS: Final = 0.001

_perf_counter = time.perf_counter


class LineWriter:
    """A queue of encoded messages drained into a stream by :meth:`run`, bounded in bytes.

    ``send_nowait`` never blocks (the receive loop uses it for the answers
    and errors it writes on its own, so reading never waits on the peer
    reading); ``send`` first waits, cancellably, while ``budget`` bytes or
    more are queued, and ends with a schedule point (:class:`SchedulePoint`),
    as every trio ``await`` does.  :attr:`queued` is what is buffered.

    Over a pipe (:class:`trio.lowlevel.FdStream`), a message sent while
    nothing is queued or in flight is written at once by its sender
    (``os.write``, non-blocking): no pass of the writer task.  What the pipe
    does not take is queued; while the writer task waits for the pipe to
    drain, later messages queue behind it and leave together in one
    ``os.writev`` (no copy of the backlog).  Other streams always go through
    the queue and one ``send_all`` per burst.

    Between :meth:`hold` and :meth:`release` (the reading task holds while
    it runs handlers' first steps, where no other task can run), messages
    are kept back, queued and counted in :attr:`queued`, and leave together
    in one ``os.write`` / ``os.writev`` at :meth:`release` or :meth:`flush`,
    or at once when ``hold_bytes`` are kept back or the oldest has waited
    ``hold_seconds``.  The peer then wakes once per burst, not once per
    message.  Order is unchanged: one queue.
    """

    def __init__(
        self,
        stream: trio.abc.SendStream,
        *,
        budget: int = 1024 * 1024,
        schedule_point: SchedulePoint | None = None,
        hold_bytes: int = HOLD_BYTES,
        hold_seconds: float | None = None,
    ) -> None:
        if hold_seconds is None:  # read now: bench/runtime_callgrind.py scales it
            hold_seconds = HOLD_SECONDS
        if budget < 1:
            raise ValueError("budget must be positive")
        if hold_bytes < 1 or hold_seconds < 0:
            raise ValueError("hold_bytes must be positive, hold_seconds not negative")
        self._stream = stream
        self._fd_stream = _fd_stream(stream, "send_stream")
        self._queue: collections.deque[bytes] = collections.deque()
        self.queued = 0  # bytes in _queue and taken by run() but not yet written
        self.budget = budget
        #: Ends every :meth:`send` (see :class:`SchedulePoint`).
        self.schedule_point = schedule_point or SchedulePoint()
        self._wakeup = Wakeup()
        self._space = trio.lowlevel.ParkingLot()
        self._closed = False
        self._busy = False  # run() holds data it has not finished writing
        self.hold_bytes = hold_bytes
        self.hold_seconds = hold_seconds
        #: Whether sends are kept back (see :meth:`hold`).
        self.holding = False
        # While holding: flush when ``queued`` reaches this, or at this time
        # (set when the hold starts and after each flush, so no byte kept
        # back waits longer than ``hold_seconds``).
        self._hold_limit = 0
        self._hold_until = 0.0
        self._hold_sent = False  # a flush wrote what this hold kept back
        self._waiting = 0  # tasks in wait_for_space

    def hold(self) -> None:
        """Keep messages back until :meth:`release` (see the class docstring).

        Only for a stretch of code that does not yield to trio: every
        ``await`` that may reach the scheduler must come after
        :meth:`release`.
        """
        self.holding = True
        self._hold_sent = False
        self._hold_limit = self.queued + self.hold_bytes
        self._hold_until = _perf_counter() + self.hold_seconds

    def release(self) -> bool:
        """Stop holding; write what was kept back.  Whether anything was sent
        while held (written since, or still queued)."""
        self.holding = False
        if self._queue:
            self.flush()
            return True
        return self._hold_sent

    def flush(self) -> None:
        """Write what is queued now (over a pipe, what it takes without waiting)."""
        queue: collections.deque[Any] = self._queue
        fds = self._fd_stream
        if fds is not None and not self._busy and queue:
            # run() holds nothing: ``queued`` is the queue's size
            try:
                fd = fds.fileno()
                if len(queue) == 1:
                    n = os.write(fd, queue[0])
                elif len(queue) <= _WRITEV_MAX:
                    n = os.writev(fd, queue)
                else:
                    n = os.writev(fd, [queue[i] for i in range(_WRITEV_MAX)])
            except OSError:  # would block, or an error run() meets and reports
                n = 0
            if n == self.queued:
                queue.clear()
                self.queued = 0
                if self._waiting:
                    self._space.unpark_all()
            elif n:
                self._written(n)
                _drop_written(queue, n)
        if queue:
            self._wakeup.wake()
        if self.holding:
            self._hold_limit = self.queued + self.hold_bytes
            self._hold_until = _perf_counter() + self.hold_seconds

    def send_nowait(self, line: bytes) -> None:
        """Queue one message (``line`` must end with ``\\n``); over a pipe, write it at once if idle."""
        if self._closed:
            raise trio.ClosedResourceError("connection closed")
        if self.holding:
            self._queue.append(line)
            self.queued += len(line)
            if self.queued >= self._hold_limit or _perf_counter() >= self._hold_until:
                self._hold_sent = True  # (the queue may be empty at release)
                self.flush()
            return
        fds = self._fd_stream
        if fds is not None and not self._busy and not self._queue:
            fd = fds.fileno()
            try:
                n = os.write(fd, line) if fd >= 0 else 0
            except OSError:  # BlockingIOError, or an error run() meets and reports
                n = 0
            if n == len(line):
                return
            if n:
                line = line[n:]
        self._queue.append(line)
        self.queued += len(line)
        self._wakeup.wake()

    async def send(self, line: bytes) -> None:
        """Queue one message, first waiting while ``budget`` bytes are queued.

        A checkpoint: raises ``Cancelled`` (having sent nothing) if cancelled
        before the message was queued, and lets other tasks run after.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.queued >= self.budget and not self._closed:
            await self.wait_for_space()
        self.send_nowait(line)
        if self.schedule_point.needed():
            await trio.lowlevel.cancel_shielded_checkpoint()

    async def wait_for_space(self, threshold: int | None = None) -> None:
        """Wait (cancellably) until fewer than ``threshold`` bytes (default ``budget``) are queued."""
        limit = self.budget if threshold is None else threshold
        while self.queued >= limit and not self._closed:
            self._waiting += 1
            try:
                await self._space.park()
            finally:
                self._waiting -= 1

    def reader_gone(self) -> bool:
        """Whether nobody reads what this writer writes any more, as far as can be told.

        Known over a pipe only: its write end reports ``POLLERR`` once every
        read end is closed (the peer process exited or closed its stdin).  On
        other streams (sockets, in-memory pairs) a dead reader shows only when
        a write fails; this returns ``False`` there.
        """
        fds = self._fd_stream
        return fds is not None and reader_gone(fds.fileno())

    def close(self) -> None:
        """Refuse further messages; :meth:`run` returns once the queue is drained."""
        self._closed = True
        self._wakeup.wake()
        self._space.unpark_all()

    async def run(self) -> None:
        """Write queued messages until :meth:`close` and the queue is empty."""
        queue = self._queue
        while True:
            if not queue:
                if self._closed:
                    return
                await self._wakeup.wait()
                continue
            if self._fd_stream is None:
                data = queue.popleft() if len(queue) == 1 else b"".join(queue)
                queue.clear()
                await self._stream.send_all(data)
                self._written(len(data))
                continue
            self._busy = True
            try:
                await self._write_fd()
            finally:
                self._busy = False

    def _written(self, n: int) -> None:
        self.queued -= n
        if self.queued < self.budget and self._waiting:
            self._space.unpark_all()

    async def _write_fd(self) -> None:
        # FdStream.send_all, without its leading checkpoint (the wait for
        # messages in run() is this task's checkpoint), and with writev: the
        # queue leaves as it is, buffers are never joined, a partial write
        # keeps a view of the rest of its message.
        fds = self._fd_stream
        queue: collections.deque[Any] = self._queue
        while queue:
            fd = fds.fileno()
            if fd < 0:
                raise trio.ClosedResourceError("file was already closed")
            buffers = (
                list(queue)
                if len(queue) <= _WRITEV_MAX
                else [queue[i] for i in range(_WRITEV_MAX)]
            )
            try:
                n = os.writev(fd, buffers)
            except BlockingIOError:
                await trio.lowlevel.wait_writable(fd)
                continue
            except OSError as exc:
                raise _os_error(exc) from exc
            self._written(n)
            _drop_written(queue, n)


def _drop_written(queue: collections.deque[Any], n: int) -> None:
    """Take the first ``n`` bytes, just written, off the front of ``queue``."""
    while n:
        size = len(queue[0])
        if n >= size:
            queue.popleft()
            n -= size
        else:
            queue[0] = memoryview(queue[0])[n:]
            n = 0
