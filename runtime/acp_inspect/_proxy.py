"""``python -m acp_inspect proxy``: forward both ways, byte for byte, then check.

An editor starts the proxy in place of the agent.  Each chunk read from one
side is written to the other *first*; its lines then go to a backlog that
one task checks and traces a line at a time once the wire has been quiet
for ``DEFAULT_QUIET`` seconds, yielding to the forwarding between lines: a
check never holds back a message (a line arriving while one is checked
waits for that one line at most), and the checks run in the gaps between
messages rather than in the moment an answer is expected.  The pipes are read and
written with ``os.read`` / ``os.write`` directly, waiting in trio only when
they would block (no stream object and no checkpoint per chunk on the
forwarding path).  When more than ``max_backlog`` bytes wait to be checked,
forwarding waits for the checks (memory stays bounded; nothing is dropped).

The agent runs in a process group of its own; when the editor closes the
proxy's stdin the agent's stdin is closed and it gets ``grace_period``
seconds to exit, then its group gets SIGTERM and, ``kill_after`` seconds
later, SIGKILL; the proxy's own SIGTERM, SIGHUP or SIGINT sends SIGTERM to
the group at once (see ``_process``: both fit inside an editor's close
schedule).  When the agent closes its stdout the proxy ends with its exit
status; when it exits, what it left in its group is ended, and a process
outside its group still holding its stdout is not waited for.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import cast

import trio

from ._inspector import DEFAULT_MAX_LINE, Finding
from ._message import AGENT, CLIENT, Direction
from ._observer import DEFAULT_MAX_REPORTS, Observer, Reporter
from ._process import (
    DEFAULT_EOF_GRACE,
    DEFAULT_KILL_AFTER,
    open_agent,
    reap,
    terminate,
    wait_gone,
)
from ._spec import REFS
from ._trace import DEFAULT_MAX_TRACE_BYTES, TraceWriter

__all__ = [
    "CHUNK",
    "DEFAULT_GRACE",
    "DEFAULT_KILL_AFTER",
    "DEFAULT_MAX_BACKLOG",
    "DEFAULT_QUIET",
    "Backlog",
    "run_proxy",
]

#: Bytes read per chunk.
CHUNK = 65536
#: Seconds the agent has to exit after its stdin closed (then SIGTERM, then SIGKILL).
DEFAULT_GRACE = DEFAULT_EOF_GRACE
#: Bytes forwarded but not yet checked, past which forwarding waits for the checks.
DEFAULT_MAX_BACKLOG = 16 * 1024 * 1024
#: Seconds without traffic before the backlog is checked (forwarding goes first).
DEFAULT_QUIET = 0.0005
#: Chunks forwarded without blocking before the forwarder lets other tasks run.
_FAIR = 16


class Backlog:
    """What was forwarded and is still to be checked, in the order it crossed.

    The forwarders :meth:`push` (cheap: the chunk is split into lines, no
    parsing); :meth:`run` checks one item at a time and yields between
    items; :meth:`drain` checks the rest at the end.
    """

    def __init__(
        self, observer: Observer, max_bytes: int = DEFAULT_MAX_BACKLOG
    ) -> None:
        self.observer = observer
        self.max_bytes = max_bytes
        self.bytes = 0
        self.pushed = 0
        self.quiet = DEFAULT_QUIET
        self._items: deque[tuple[int, Callable[[], object]]] = deque()
        self._wake = trio.Event()
        self._room = trio.Event()

    def push(self, direction: Direction, data: bytes, t: float) -> None:
        """A chunk forwarded at ``t``."""
        observer = self.observer
        for line in observer.split(direction, data):
            self._add(len(line), partial(observer.line, direction, line, t))
        # each line over max_line, once it ended: the verdict every reader
        # gives (acp_core.judge_oversized), one bounded line
        for text in observer.discarded(direction):
            self.call(partial(observer.say, text))

    def call(self, fn: Callable[[], object]) -> None:
        """Anything else to record in order (EOF, events, findings of the proxy)."""
        self._add(0, fn)

    def _add(self, size: int, fn: Callable[[], object]) -> None:
        self._items.append((size, fn))
        self.pushed += 1
        self.bytes += size
        self._wake.set()

    async def room(self) -> None:
        """Wait until the backlog is under its bound again."""
        while self.bytes > self.max_bytes:
            # one event for every waiter (both forwarders may wait at once):
            # a new one only once the last was set
            if self._room.is_set():
                self._room = trio.Event()
            await self._room.wait()

    def _one(self) -> None:
        size, fn = self._items.popleft()
        self.bytes -= size
        fn()
        if self.bytes <= self.max_bytes // 2:
            self._room.set()

    async def run(self) -> None:
        """Check items once the wire has been quiet for ``quiet`` seconds (or
        the backlog is half full), one at a time, yielding to the forwarders
        between them; new traffic sends it back to waiting for quiet."""
        while True:
            half = self.max_bytes // 2
            while self._items:
                if self.bytes <= half:
                    seen = self.pushed
                    await trio.sleep(self.quiet)
                    if self.pushed != seen:
                        continue  # still busy: forwarding first
                seen = self.pushed
                while self._items and (self.pushed == seen or self.bytes > half):
                    self._one()
                    await trio.lowlevel.checkpoint()
            self._wake = trio.Event()
            await self._wake.wait()

    def drain(self) -> None:
        """Check everything left (at the end, no more forwarding)."""
        while self._items:
            self._one()
        self._room.set()


async def _read(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, CHUNK)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(fd)


async def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await trio.lowlevel.wait_writable(fd)


@dataclass(slots=True)
class Pipe:
    """How one direction's forwarding goes: chunks read, and whether it is
    waiting to read (rather than to write or for the checks)."""

    chunks: int = 0
    reading: bool = True


async def _forward(
    src: int,
    dst: int,
    direction: Direction,
    observer: Observer,
    backlog: Backlog,
    *,
    drain: bool,
    pipe: Pipe | None = None,
) -> bool:
    """Copy ``src`` to ``dst`` until EOF on ``src`` (``True``); every chunk is
    written before it is looked at.  When ``dst`` is closed: with ``drain``,
    what ``src`` still sends is read, traced and checked but not delivered
    (so the writer never blocks on a peer that is gone), else ``False``."""
    streak = 0
    delivered = True
    pipe = pipe or Pipe()
    while data := await _read(src):
        pipe.reading = False
        pipe.chunks += 1
        t = observer.now()
        if delivered:
            try:
                await _write_all(dst, data)
            except (BrokenPipeError, ConnectionResetError):
                if not drain:
                    return False
                delivered = False
                backlog.call(
                    partial(observer.event, f"{direction}: peer closed; not delivered")
                )
        backlog.push(direction, data, t)
        if backlog.bytes > backlog.max_bytes:
            await backlog.room()
        streak += 1
        if streak >= _FAIR:  # a flood must not starve the other direction
            streak = 0
            await trio.lowlevel.checkpoint()
        pipe.reading = True
    return True


def _close(fd: int) -> None:
    trio.lowlevel.notify_closing(fd)
    os.close(fd)


async def run_proxy(
    command: Sequence[str],
    *,
    trace: Path | None = None,
    grace_period: float = DEFAULT_GRACE,
    kill_after: float = DEFAULT_KILL_AFTER,
    max_reports: int = DEFAULT_MAX_REPORTS,
    max_backlog: int = DEFAULT_MAX_BACKLOG,
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES,
    max_line: int = DEFAULT_MAX_LINE,
    quiet: float = DEFAULT_QUIET,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    report_fd: int = 2,
) -> int:
    """Run the proxy until the agent closes its stdout (or exits, and nothing
    it left comes through it any more); the agent's exit status (128 +
    signal when it was killed).

    ``trace``: append a JSONL trace there, at most ``max_trace_bytes`` of it
    per run; ``grace_period``: seconds the agent has to exit after its stdin
    closed, then SIGTERM to its group and ``kill_after`` seconds before
    SIGKILL (the proxy's own SIGTERM, SIGHUP or SIGINT: SIGTERM to the group
    at once); ``max_reports``: findings written to ``report_fd`` at most;
    ``max_backlog``: bytes forwarded but not yet checked before forwarding
    waits for the checks; ``max_line``: the longest line checked (a longer
    one is forwarded, discarded from the check while it streams and said in
    one bounded line); ``quiet``: seconds the wire must be still before
    the backlog is checked.
    """
    trace_file = trace.open("ab") if trace is not None else None
    writer = (
        TraceWriter(trace_file, max_trace_bytes) if trace_file is not None else None
    )
    observer = Observer(
        trace=writer, reporter=Reporter(report_fd, max_reports), max_line=max_line
    )
    backlog = Backlog(observer, max_backlog)
    backlog.quiet = quiet
    if writer is not None:
        writer.header(list(command), time.time())
    modes = {fd: fcntl.fcntl(fd, fcntl.F_GETFL) for fd in (stdin_fd, stdout_fd)}
    our_in, our_out = os.dup(stdin_fd), os.dup(stdout_fd)
    os.set_blocking(our_in, False)
    os.set_blocking(our_out, False)
    process = await open_agent(command)
    assert process.stdin is not None and process.stdout is not None
    # trio's pipe streams (FdStream): their descriptors are non-blocking
    agent_in = cast("trio.lowlevel.FdStream", process.stdin)
    agent_out = cast("trio.lowlevel.FdStream", process.stdout).fileno()
    agent_closed = trio.Event()
    from_agent = Pipe()

    def event(text: str) -> None:
        backlog.call(lambda: observer.event(text))

    try:
        async with trio.open_nursery() as nursery:

            async def to_agent() -> None:
                # the agent's stdin closed early: the editor's input is still
                # read (and traced), so the editor never blocks writing it
                await _forward(
                    our_in, agent_in.fileno(), CLIENT, observer, backlog, drain=True
                )
                backlog.call(lambda: observer.eof(CLIENT))
                await agent_in.aclose()
                with trio.move_on_after(grace_period):
                    await process.wait()
                    return  # what it left in its group: watch_agent
                if process.returncode is None:  # said when it is signalled
                    ref = REFS["close-stdin-terminate"]
                    finding = Finding(
                        "eof-ignored",
                        ref,
                        ref.cite(observer.inspector.state.current_version),
                        "SHOULD",
                        CLIENT,
                        observer.inspector.index,
                        observer.now(),
                        f"agent still running {grace_period:g}s after its stdin closed (--grace); SIGTERM to its process group",
                    )
                    backlog.call(lambda: observer.extra(finding))
                await terminate(process, kill_after)

            async def watch_agent() -> None:
                await process.wait()
                event(f"agent exited {process.returncode}")
                # what it left in its group would keep the editor waiting
                if not await wait_gone(process, kill_after):
                    event("ending what the agent left in its process group")
                    await terminate(process, kill_after)
                # a process that left its group may still hold the agent's
                # stdout: once nothing more comes through it, stop reading
                while True:
                    seen = from_agent.chunks
                    with trio.move_on_after(kill_after):
                        await agent_closed.wait()
                        return
                    if from_agent.chunks == seen and from_agent.reading:
                        break
                event(
                    "the agent's stdout is held open by a process outside its group: not waiting for it"
                )
                nursery.cancel_scope.cancel()

            async def on_signal() -> None:
                with trio.open_signal_receiver(
                    signal.SIGTERM, signal.SIGINT, signal.SIGHUP
                ) as signals:
                    async for sig in signals:
                        event(f"signal {sig}: SIGTERM to the agent's process group")
                        await terminate(process, kill_after)
                        return

            nursery.start_soon(backlog.run)
            nursery.start_soon(to_agent)
            nursery.start_soon(on_signal)
            nursery.start_soon(watch_agent)
            if await _forward(
                agent_out,
                our_out,
                AGENT,
                observer,
                backlog,
                drain=False,
                pipe=from_agent,
            ):
                backlog.call(lambda: observer.eof(AGENT))
            else:
                event("the client's end closed")
            agent_closed.set()
            nursery.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            await reap(process, grace_period, kill_after)
        elif not await wait_gone(process, kill_after):
            await terminate(process, kill_after)
        backlog.drain()
        observer.finish()
        code = process.returncode if process.returncode is not None else 1
        _close(our_in)
        _close(our_out)
        for fd, mode in modes.items():
            try:
                fcntl.fcntl(fd, fcntl.F_SETFL, mode)
            except OSError:
                pass
        if trace_file is not None:
            trace_file.close()
    return 128 - code if code < 0 else code
