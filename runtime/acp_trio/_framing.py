"""Newline-delimited JSON over any trio stream: the reading and the writing.

One message per line, ``\\n`` terminated (ACP's stdio transport).  The
framing itself (bounded lines, oversized ones discarded while they stream
in) is :class:`acp_core.LineBuffer`'s; this module moves the bytes:

- :class:`LineReader` reads chunks (and, for tests and tools, lines);
- :class:`LineWriter` queues encoded messages, bounded in bytes, and writes
  what a task sent without yielding to trio in one write.

Over a pipe (:class:`trio.lowlevel.FdStream`, also inside a
:class:`trio.StapledStream`) both call ``os.read`` / ``os.writev``
directly: no checkpoint before every call as ``FdStream`` makes, no failed
read when the pipe is known to be empty, and a backlog leaves as it was
queued, never joined into one buffer.
"""

from __future__ import annotations

import collections
import errno
import os
import time
from collections.abc import Coroutine
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
    "Wakeup",
    "sniff_oversized",
]

_RECEIVE_CHUNK = 64 * 1024
#: Most buffers handed to one ``os.writev`` (POSIX guarantees 16, Linux takes 1024).
_WRITEV_MAX = 512
#: A send writes at once (in the sender's task) once this many bytes are queued.
HOLD_BYTES: Final = 64 * 1024
#: A send writes at once once the oldest byte queued has waited this long
#: (checked at each send: a handler's synchronous work between two sends can
#: delay the first by that stretch at most).
HOLD_SECONDS: Final = 0.001

_FdStream: Any = getattr(trio.lowlevel, "FdStream", None)  # absent on Windows
_perf_counter = time.perf_counter
_current_task = trio.lowlevel.current_task
_wait_task_rescheduled = trio.lowlevel.wait_task_rescheduled


def _fd_stream(stream: object, part: str) -> Any:
    """The :class:`trio.lowlevel.FdStream` under ``stream`` for one direction, if any.

    ``part`` is ``"send_stream"`` or ``"receive_stream"`` (the halves of a
    :class:`trio.StapledStream`, as :func:`~acp_trio.spawn_agent` and
    :func:`~acp_trio.serve_agent_stdio` build).
    """
    if _FdStream is None:  # pragma: no cover (Windows)
        return None
    if isinstance(stream, trio.StapledStream):
        stream = getattr(cast(Any, stream), part)
    return stream if type(stream) is _FdStream else None


def _fileno(fds: Any) -> int:
    fd: int = fds.fileno()
    if fd < 0:
        raise trio.ClosedResourceError("file was already closed")
    return fd


def _os_error(exc: OSError) -> trio.ClosedResourceError | trio.BrokenResourceError:
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(exc))


class Wakeup:
    """One task parked until another wakes it (cheaper than a new Event per wait)."""

    __slots__ = ("task",)

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None

    def wait(self) -> Coroutine[Any, Any, object]:
        """Park until :meth:`wake` (await it at once; a checkpoint, cancellable).

        A plain function returning trio's own wait: no coroutine of ours per wait.
        """
        self.task = _current_task()
        return _wait_task_rescheduled(self._abort)  # the caller awaits it

    def _abort(self, _: Any) -> trio.lowlevel.Abort:
        self.task = None
        return trio.lowlevel.Abort.SUCCEEDED

    def wake(self) -> None:
        task = self.task
        if task is not None:
            self.task = None
            trio.lowlevel.reschedule(task)


class CallWaiter(Wakeup):
    """The task waiting for one response: ``acp_core``'s ``Call.waiter``.

    ``set()`` once the answer is in; :meth:`wait` is a checkpoint, as
    ``trio.Event.wait`` is, and cancellable.
    """

    __slots__ = ("flag",)

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None  # Wakeup's (no super() call)
        self.flag = False

    def set(self) -> None:
        self.flag = True
        self.wake()

    def wait(self) -> Coroutine[Any, Any, object]:
        if self.flag:
            return trio.lowlevel.checkpoint()  # noqa: ASYNC105 (the caller awaits)
        return Wakeup.wait(self)  # no super() object


class LineReader:
    """Reads chunks (or ``\\n``-delimited lines) from a :class:`trio.abc.ReceiveStream`.

    Over a pipe, a read that came back short emptied it: the next one
    waits for the pipe to be readable first instead of failing with
    ``EAGAIN`` (the peer usually answers what was just sent).  A read
    that came back full is followed by a checkpoint at the next call, so a
    peer that floods us cannot starve other tasks.
    """

    def __init__(
        self,
        stream: trio.abc.ReceiveStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._stream = stream
        self._fd_stream = _fd_stream(stream, "receive_stream")
        self._drained = False  # the last read emptied the pipe
        self._lines = LineBuffer(max_message_size=max_message_size)
        self._unread: collections.deque[bytes | Oversized] = collections.deque()

    @property
    def buffered(self) -> int:
        """Bytes held of an incomplete line (bounded by ``max_message_size``)."""
        return self._lines.buffered

    async def receive_line(self) -> bytes | Oversized | None:
        """The next line, an :class:`Oversized` marker, or ``None`` at EOF."""
        unread = self._unread
        while not unread:
            if self._lines.eof:
                return None
            data = await self.receive_some()
            unread.extend(self._lines.feed(data) if data else self._lines.feed_eof())
        return unread.popleft()

    async def receive_some(self) -> bytes | bytearray:
        """The next chunk read (``b""`` at end of input), unframed."""
        fds = self._fd_stream
        if fds is None:
            return await self._stream.receive_some(_RECEIVE_CHUNK)
        if self._drained:
            await trio.lowlevel.wait_readable(_fileno(fds))
        else:
            await trio.lowlevel.checkpoint()
        while True:
            fd = _fileno(fds)
            try:
                data = os.read(fd, _RECEIVE_CHUNK)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(fd)
                continue
            except OSError as exc:
                raise _os_error(exc) from exc
            self._drained = len(data) < _RECEIVE_CHUNK
            return data


class LineWriter:
    """A queue of encoded messages drained into a stream, bounded in bytes.

    ``send_nowait`` never blocks (the reading task writes its answers and
    errors with it, so reading never waits on the peer reading); ``send``
    first waits, cancellably, while ``budget`` bytes or more are queued,
    and ends with a schedule point (:class:`~acp_trio._schedule.SchedulePoint`).
    :attr:`queued` is what is buffered, written or not.

    :meth:`queue` keeps a message for the next :meth:`flush`, which writes
    what the pipe takes at once, in the caller's task (one ``os.writev`` for
    a burst), and wakes the writer task (:meth:`run`) for the rest;
    :meth:`send_nowait` queues and wakes the writer task.  The connection
    queues what a handler sends and flushes when the handler yields to
    trio, so the peer wakes once per burst, not once per message.  Either
    way a message is written at once once ``hold_bytes`` are queued or the
    oldest queued byte has waited ``hold_seconds``.  Order is unchanged:
    one queue.
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
        self._queue: collections.deque[Any] = collections.deque()
        self.queued = 0  # bytes in _queue and taken by run() but not yet written
        self.budget = budget
        #: Ends every :meth:`send`.
        self.schedule_point = schedule_point or SchedulePoint()
        self.hold_bytes = hold_bytes
        self.hold_seconds = hold_seconds
        self._wakeup = Wakeup()
        self._space = trio.lowlevel.ParkingLot()
        self._closed = False
        self._busy = False  # run() waits for the pipe with data of the queue
        # Flush at once when ``queued`` reaches this, or at this time (set
        # when the queue fills from empty and after each flush).
        self._hold_limit = 0
        self._hold_until = 0.0

    def send_nowait(self, line: bytes) -> None:
        """Queue one message (``line`` ends with ``\\n``) for the writer task."""
        self.queue(line)
        self._wakeup.wake()

    def queue(self, line: bytes) -> None:
        """Queue one message for the next :meth:`flush` (past the hold bounds, now)."""
        if self._closed:
            raise trio.ClosedResourceError("connection closed")
        queue = self._queue
        now = _perf_counter()  # one clock read per message
        if not queue:
            self._hold_limit = self.queued + self.hold_bytes
            self._hold_until = now + self.hold_seconds
        queue.append(line)
        self.queued += len(line)
        if self.queued >= self._hold_limit or now >= self._hold_until:
            self.flush()

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

    def flush(self) -> None:
        """Write what is queued now (over a pipe, what it takes without
        waiting); the writer task writes the rest."""
        queue = self._queue
        if not queue:
            return
        fds = self._fd_stream
        if fds is not None and not self._busy:
            try:
                fd = fds.fileno()
                if len(queue) == 1:
                    n = os.write(fd, queue[0])
                else:
                    n = os.writev(fd, _head(queue))
            except OSError:  # would block, or an error run() meets and reports
                n = 0
            if n:
                self._written(n)
        if queue:  # the hold bounds start again (an empty queue sets them)
            self._wakeup.wake()
            self._hold_limit = self.queued + self.hold_bytes
            self._hold_until = _perf_counter() + self.hold_seconds

    async def wait_for_space(self) -> None:
        """Wait (cancellably) until fewer than ``budget`` bytes are queued."""
        while self.queued >= self.budget and not self._closed:
            await self._space.park()

    def reader_gone(self) -> bool:
        """Whether nobody reads what this writer writes any more, as far as can be told.

        Known over a pipe only: its write end reports ``POLLERR`` once every
        read end is closed.  On other streams a dead reader shows only when
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
        fds = self._fd_stream
        while True:
            if not queue:
                if self._closed:
                    return
                await self._wakeup.wait()
            elif fds is None:
                data = b"".join(queue)
                queue.clear()
                await self._stream.send_all(data)
                self._written(len(data), taken=True)
            else:
                self._busy = True
                try:
                    fd = _fileno(fds)
                    try:
                        n = os.writev(fd, _head(queue))
                    except BlockingIOError:
                        await trio.lowlevel.wait_writable(fd)
                        continue
                    except OSError as exc:
                        raise _os_error(exc) from exc
                finally:
                    self._busy = False
                self._written(n)

    def _written(self, n: int, *, taken: bool = False) -> None:
        """``n`` bytes were written: off the queue (unless ``taken`` already)."""
        queued = self.queued = self.queued - n
        queue = self._queue
        if not (queued or taken):  # all written (the usual case): no loop
            queue.clear()
            n = 0
        while n and not taken:
            size = len(queue[0])
            if n >= size:
                queue.popleft()
                n -= size
            else:
                queue[0] = memoryview(queue[0])[n:]
                n = 0
        if self._space and queued < self.budget:
            self._space.unpark_all()


def _head(queue: collections.deque[Any]) -> list[Any]:
    """The buffers of one ``os.writev``: the queue as it is, never joined."""
    if len(queue) <= _WRITEV_MAX:
        return list(queue)
    return [queue[i] for i in range(_WRITEV_MAX)]
