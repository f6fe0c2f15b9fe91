"""The conformance check's side of the wire: one agent process, raw lines.

:class:`AgentUnderTest` starts the agent (a process group of its own, reaped
as :func:`acp_trio.spawn_agent` does), writes lines exactly as a case builds
them (malformed ones included), reads the agent's lines in a task, records
both directions with their time in a timeline, and feeds every line to an
:class:`~acp_inspect.Inspector`, so the rules run during every case.
Requests from the agent are answered by the case's ``responder``.
"""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

from ._inspector import Finding, Inspector, LineSplitter
from ._message import AGENT, CLIENT, Direction, Message, as_list, as_obj, parse_line
from ._process import open_agent, reap

__all__ = ["STDERR_KEEP", "AgentUnderTest", "Entry", "Responder"]

#: Bytes of the agent's stderr kept per case (the last ones).
STDERR_KEEP = 16 * 1024

Responder = Callable[["AgentUnderTest", Message], Awaitable[None]]
_encode = msgspec.json.Encoder().encode


@dataclass(slots=True)
class Entry:
    """One row of a case's timeline: a line of the wire, or a note of the check."""

    t: float
    dir: Direction | None  # None: a note
    text: str
    findings: list[Finding] = field(default_factory=list[Finding])


async def default_responder(agent: AgentUnderTest, msg: Message) -> None:
    """Permission: the first ``allow`` option (else the first); anything else: -32601."""
    if msg.method == "session/request_permission":
        options = [as_obj(o) for o in as_list(msg.params.get("options"))]
        allow = [o for o in options if str(o.get("kind", "")).startswith("allow")]
        chosen = (allow or options or [{"optionId": ""}])[0]
        option_id = chosen.get("optionId", "")
        await agent.answer(
            msg, {"outcome": {"outcome": "selected", "optionId": option_id}}
        )
    else:
        await agent.send(
            {
                "jsonrpc": "2.0",
                "id": msg.id,
                "error": {"code": -32601, "message": "Method not found"},
            }
        )


class AgentUnderTest:
    """A running agent and the record of what crossed its pipes."""

    def __init__(
        self, command: Sequence[str], *, max_line: int = 64 * 1024 * 1024
    ) -> None:
        self.command = list(command)
        self.inspector = Inspector()
        self.timeline: list[Entry] = []
        self.start = time.monotonic()
        self.responder: Responder = default_responder
        self.stderr = bytearray()
        self.exited = trio.Event()
        self._ids = itertools.count(1)
        self._splitter = LineSplitter(max_line)
        self._received: list[Message] = []
        self._arrived = trio.Event()
        self._process: trio.Process | None = None
        self._closed = False
        self._eof = False

    # -- lifecycle ----------------------------------------------------------

    async def run(self, nursery: trio.Nursery) -> None:
        """Start the agent and its reading tasks in ``nursery``."""
        self._process = await open_agent(self.command, stderr=subprocess.PIPE)
        nursery.start_soon(self._read_stdout)
        nursery.start_soon(self._read_stderr)
        nursery.start_soon(self._wait_exit)

    async def close_stdin(self) -> None:
        assert self._process is not None and self._process.stdin is not None
        self.note("closed the agent's stdin")
        self._closed = True
        await self._process.stdin.aclose()

    async def stop(self, grace_period: float) -> None:
        """Close stdin, grace, SIGTERM / SIGKILL to the group; always reaped."""
        if self._process is not None:
            await reap(self._process, grace_period)

    @property
    def returncode(self) -> int | None:
        return None if self._process is None else self._process.returncode

    # -- writing ------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self.start

    def note(self, text: str) -> None:
        self.timeline.append(Entry(self.now(), None, text))

    def new_id(self) -> int:
        return next(self._ids)

    async def send_raw(self, line: bytes) -> None:
        """One line as given (``\\n`` added), recorded and checked."""
        assert self._process is not None and self._process.stdin is not None
        t = self.now()
        entry = Entry(t, CLIENT, line.decode("utf-8", "replace"))
        self.timeline.append(entry)
        try:
            await self._process.stdin.send_all(line + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            entry.text += "  [not delivered: the agent's stdin is closed]"
        entry.findings = self.inspector.feed(CLIENT, t, line)

    async def send(self, obj: Any) -> None:
        await self.send_raw(_encode(obj))

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def answer(self, msg: Message, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": msg.id, "result": result})

    async def request(self, method: str, params: dict[str, Any]) -> int:
        """Send a request; its id."""
        rid = self.new_id()
        await self.send(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        )
        return rid

    async def call(self, method: str, params: dict[str, Any]) -> Message:
        """Send a request and wait for its response (agent requests meanwhile
        go to the responder)."""
        rid = await self.request(method, params)
        return await self.response(rid)

    # -- reading ------------------------------------------------------------

    async def response(self, rid: int | str | None) -> Message:
        return await self.wait_for(lambda m: m.kind == "response" and m.id == rid)

    async def wait_for(
        self, match: Callable[[Message], bool], *, respond: bool = True
    ) -> Message:
        """The first message received from now on (or already received and not
        yet taken) that ``match``es; agent requests not matched go to the
        responder when ``respond``."""
        while True:
            while self._received:
                msg = self._received.pop(0)
                if match(msg):
                    return msg
                if respond and msg.kind == "request":
                    await self.responder(self, msg)
            if self._eof or self.exited.is_set():
                raise AgentExited(self.returncode)
            self._arrived = trio.Event()
            await self._arrived.wait()

    def received(self) -> list[Message]:
        """What arrived and was not taken yet (kept)."""
        return list(self._received)

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async with self._process.stdout as out:
            while data := await out.receive_some(65536):
                t = self.now()
                for line in self._splitter.feed(bytes(data)):
                    self._line(t, line)
        rest = self._splitter.rest()
        if rest is not None:
            self._line(self.now(), rest)
        self.note("the agent closed its stdout")
        self._eof = True
        self._arrived.set()

    def _line(self, t: float, line: bytes) -> None:
        findings = self.inspector.feed(AGENT, t, line)
        self.timeline.append(Entry(t, AGENT, line.decode("utf-8", "replace"), findings))
        for item in parse_line(AGENT, 0, t, line):
            if isinstance(item, Message):
                self._received.append(item)
        self._arrived.set()

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        async with self._process.stderr as err:
            while data := await err.receive_some(65536):
                self.stderr += data
                if len(self.stderr) > 2 * STDERR_KEEP:
                    del self.stderr[:-STDERR_KEEP]

    async def _wait_exit(self) -> None:
        assert self._process is not None
        code = await self._process.wait()
        self.note(f"the agent exited ({code})")
        self.exited.set()
        self._arrived.set()


class AgentExited(Exception):
    """The agent exited while a case waited for a message."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"the agent exited ({code}) before answering")
        self.code = code
