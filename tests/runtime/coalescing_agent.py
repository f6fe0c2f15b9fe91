"""An agent for test_write_coalescing.py: ``python coalescing_agent.py`` (stdio).

``session/prompt`` runs the script named by the prompt's text (see
SCRIPTS).  It records every ``os.write`` / ``os.writev`` on its protocol
output (the bytes of each call), which the test reads back with the
``_writes`` extension method; ``_configure`` sets the writer's hold bounds
(and a clock the test moves, ``fake_clock``); ``_go`` (a notification)
lets the ``wait`` script go on; ``_log`` returns what a script recorded;
``_empty_reads`` counts reads of its input that found the pipe empty.
"""

from __future__ import annotations

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for folder in ("runtime", "generated"):
    sys.path.insert(0, os.path.join(ROOT, folder))

import acp_trio  # noqa: E402
import acp_trio._framing  # noqa: E402
import acp_trio._schedule  # noqa: E402
import trio  # noqa: E402
from acp_schema import v1  # noqa: E402

SESSION = "s1"
CALLS: list[bytes] = []
OUTPUT = [-1]  # the protocol's output descriptor, once known
CLOCK = [1000.0]

_write, _writev = os.write, os.writev


def _recording_write(fd: int, data: Any) -> int:
    if fd != OUTPUT[0]:
        return _write(fd, data)
    n = _write(fd, data)
    CALLS.append(bytes(data)[:n])
    return n


def _recording_writev(fd: int, buffers: Any) -> int:
    if fd != OUTPUT[0]:
        return _writev(fd, buffers)
    n = _writev(fd, buffers)
    CALLS.append(b"".join(bytes(b) for b in buffers)[:n])
    return n


_read = os.read
EMPTY_READS = [0]  # reads of the protocol input that found the pipe empty
INPUT = [-1]


def _counting_read(fd: int, n: int) -> bytes:
    try:
        return _read(fd, n)
    except BlockingIOError:
        if fd == INPUT[0]:
            EMPTY_READS[0] += 1
        raise


os.write = _recording_write  # type: ignore[assignment]
os.writev = _recording_writev  # type: ignore[assignment]
os.read = _counting_read  # type: ignore[assignment]


def update(text: str) -> v1.SessionNotification:
    return v1.SessionNotification(
        session_id=SESSION,
        update=v1.AgentMessageChunk(content=v1.TextContent(text=text)),
    )


class Agent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.conn = conn
        self.client = conn.client
        self.go = trio.Event()
        self.log: list[Any] = []
        OUTPUT[0] = conn._writer._fd_stream.fileno()  # type: ignore[attr-defined]
        INPUT[0] = conn._reader._fd_stream.fileno()  # type: ignore[attr-defined]

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=SESSION)

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        script = params.prompt[0].text  # type: ignore[union-attr]
        await getattr(self, "script_" + script.replace(" ", "_"))()
        return v1.PromptResponse(stop_reason="end_turn")

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_writes":
            return [call.decode() for call in CALLS]
        if method == "_log":
            return self.log
        if method == "_empty_reads":
            return EMPTY_READS[0]
        assert method == "_configure"
        writer = self.conn._writer  # type: ignore[attr-defined]
        writer.hold_bytes = params["hold_bytes"]
        writer.hold_seconds = params["hold_seconds"]
        if params.get("fake_clock"):
            acp_trio._framing._perf_counter = lambda: CLOCK[0]  # type: ignore[attr-defined]
        # The schedule point's time bound (a real pass once a step ran long)
        # would split a burst on a loaded machine: the tests count writes.
        acp_trio._schedule.IO_POLL_INTERVAL = params["io_poll_interval"]
        return None

    async def ext_notification(self, method: str, params: Any) -> None:
        if method == "_go":
            self.go.set()

    # -- scripts -------------------------------------------------------------------

    async def script_warm_up(self) -> None:
        await self.client.session_update(update("warm"))

    async def script_five(self) -> None:
        for k in range(5):
            await self.client.session_update(update(f"u{k}"))

    async def script_wait(self) -> None:
        await self.client.session_update(update("before the wait"))
        await self.go.wait()  # a real schedule point; _go comes once the peer read it
        await self.client.session_update(update("after the wait"))

    async def script_budget(self) -> None:
        writer = self.conn._writer  # type: ignore[attr-defined]
        for k in range(20):
            await self.client.session_update(update(f"{k:03d}" + "x" * 1000))
            self.log.append([writer.queued, sum(len(b) for b in writer._queue)])

    async def script_slow(self) -> None:
        await self.client.session_update(update("a"))
        CLOCK[0] += 1.0  # a second of synchronous work, on the writer's clock
        await self.client.session_update(update("b"))  # a is too old: both leave
        await self.client.session_update(update("c"))

    async def script_big(self) -> None:
        for k in range(3):
            await self.client.session_update(update(f"{k}" + "x" * 12_000))

    async def script_close(self) -> None:
        await self.client.session_update(update("a"))
        await self.client.session_update(update("b"))
        self.conn.close()
        await self.client.session_update(update("never"))  # raises Cancelled

    async def script_cancel(self) -> None:
        await self.client.session_update(update("a"))
        await self.client.session_update(update("b"))
        for running in self.conn.running_requests().values():
            running.cancel("request")
        await self.client.session_update(update("never"))  # raises Cancelled


if __name__ == "__main__":
    budget = os.environ.get("COALESCING_WRITE_BUFFER_BYTES")
    limits = acp_trio.Limits(write_buffer_bytes=int(budget)) if budget else None
    trio.run(lambda: acp_trio.serve_agent_stdio({1: Agent}, limits=limits))
