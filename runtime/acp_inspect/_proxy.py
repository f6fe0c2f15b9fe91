"""``python -m acp_inspect proxy``: forward both ways, byte for byte, then check.

An editor starts the proxy in place of the agent.  Each chunk read from one
side is written to the other *first*; only then is it split into lines,
traced and checked, so validation adds no latency to the chunk itself.  The
agent runs in a process group of its own; when the editor closes the
proxy's stdin the agent's stdin is closed and it gets ``grace_period``
seconds to exit, then its group is terminated (as :func:`acp_trio.spawn_agent`
does); when the agent closes its stdout the proxy ends with its exit status.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import trio

from ._inspector import Finding
from ._message import AGENT, CLIENT
from ._observer import DEFAULT_MAX_REPORTS, Observer, Reporter
from ._process import open_agent, reap
from ._spec import REFS
from ._trace import TraceWriter

__all__ = ["CHUNK", "DEFAULT_GRACE", "run_proxy"]

#: Bytes read per chunk.
CHUNK = 65536
#: Seconds the agent has to exit after its stdin closed (then SIGTERM, then SIGKILL).
DEFAULT_GRACE = 2.0


async def run_proxy(
    command: Sequence[str],
    *,
    trace: Path | None = None,
    grace_period: float = DEFAULT_GRACE,
    max_reports: int = DEFAULT_MAX_REPORTS,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    report_fd: int = 2,
) -> int:
    """Run the proxy until the agent closes its stdout; the agent's exit
    status (128 + signal when it was killed)."""
    trace_file = trace.open("ab") if trace is not None else None
    writer = TraceWriter(trace_file) if trace_file is not None else None
    observer = Observer(trace=writer, reporter=Reporter(report_fd, max_reports))
    if writer is not None:
        writer.header(list(command), time.time())
    modes = {fd: fcntl.fcntl(fd, fcntl.F_GETFL) for fd in (stdin_fd, stdout_fd)}
    our_in = trio.lowlevel.FdStream(os.dup(stdin_fd))
    our_out = trio.lowlevel.FdStream(os.dup(stdout_fd))
    process = await open_agent(command)
    assert process.stdin is not None and process.stdout is not None
    agent_in, agent_out = process.stdin, process.stdout
    try:
        async with trio.open_nursery() as nursery:

            async def to_agent() -> None:
                try:
                    while data := await our_in.receive_some(CHUNK):
                        t = observer.now()
                        try:
                            await agent_in.send_all(data)
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            observer.event("agent's stdin closed; input dropped")
                        observer.data(CLIENT, data, t)
                except trio.ClosedResourceError:
                    return
                observer.eof(CLIENT)
                await agent_in.aclose()
                with trio.move_on_after(grace_period):
                    await process.wait()
                    return
                observer.extra(
                    Finding(
                        "eof-ignored",
                        REFS["close-stdin-terminate"],
                        REFS["close-stdin-terminate"].cite(
                            observer.inspector.state.current_version
                        ),
                        "SHOULD",
                        CLIENT,
                        observer.inspector.index,
                        observer.now(),
                        f"agent still running {grace_period:g}s after its stdin closed; terminating its process group",
                    )
                )
                await reap(process, grace_period)

            async def watch_agent() -> None:
                # the agent gone: what it left in its group (a child holding
                # its stdout) would keep the editor waiting; end it
                await process.wait()
                observer.event(f"agent exited {process.returncode}")
                await reap(process, grace_period)

            async def on_signal() -> None:
                with trio.open_signal_receiver(
                    signal.SIGTERM, signal.SIGINT, signal.SIGHUP
                ) as signals:
                    async for sig in signals:
                        observer.event(f"signal {sig}: ending the agent")
                        await reap(process, grace_period)
                        return

            nursery.start_soon(to_agent)
            nursery.start_soon(on_signal)
            nursery.start_soon(watch_agent)
            try:
                while data := await agent_out.receive_some(CHUNK):
                    t = observer.now()
                    await our_out.send_all(data)
                    observer.data(AGENT, bytes(data), t)
                observer.eof(AGENT)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                observer.event("the client's end closed")
            nursery.cancel_scope.cancel()
    finally:
        await reap(process, grace_period)
        observer.finish()
        code = process.returncode if process.returncode is not None else 1
        with trio.CancelScope(shield=True):
            await our_in.aclose()
            await our_out.aclose()
        for fd, mode in modes.items():
            try:
                fcntl.fcntl(fd, fcntl.F_SETFL, mode)
            except OSError:
                pass
        if trace_file is not None:
            trace_file.close()
    return 128 - code if code < 0 else code
