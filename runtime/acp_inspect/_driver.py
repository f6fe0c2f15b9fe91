"""The conformance check's side of the wire: one agent process, raw lines.

:class:`AgentUnderTest` starts the agent (a process group of its own, reaped
as :func:`acp_trio.spawn_agent` does), writes lines exactly as a case builds
them (malformed ones included), reads the agent's lines in a task, records
both directions with their time in a timeline, and feeds every line to an
:class:`~acp_inspect.Inspector`, so the rules run during every case.
Requests from the agent are answered by the case's ``responder``.

Whatever the agent sends, a case keeps a bounded record (:class:`Budget`):
at most ``lines`` timeline rows and ``bytes`` of their text, each row at
most ``line_chars`` characters (a longer line is cut, its size said), at
most ``pending`` messages and ``pending_bytes`` of their lines waiting to be
taken (the oldest notifications go first, then the oldest requests, never
to be answered; responses stay), and lines over ``max_line`` bytes
are not parsed at all.  Once the case is over (:meth:`AgentUnderTest.done`)
nothing is kept for it any more: the lines still read while the agent is
reaped are checked and counted only.  So what is held does not depend on how
far the agent's output runs ahead of the case.
Every line from the agent counts as progress (:attr:`AgentUnderTest.on_line`),
and what was last sent and received is kept to say where a case stopped.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

from ._html import summarize
from ._inspector import Finding, Inspector, LineSplitter
from ._message import AGENT, CLIENT, Direction, Message, as_list, as_obj, parse_line
from ._process import open_agent, reap

__all__ = [
    "STDERR_KEEP",
    "AgentExited",
    "AgentUnderTest",
    "Budget",
    "Entry",
    "LineTooLong",
    "PeerUnderTest",
    "Responder",
]

#: Bytes of the agent's stderr kept per case (the last ones).
STDERR_KEEP = 16 * 1024
#: Messages waiting looked through for a notification to drop before a
#: request is dropped instead (so dropping costs the same however many wait).
DROP_SCAN = 64
#: Characters of the summary kept for a line cut in the timeline.
LABEL_CHARS = 200


@dataclass(frozen=True, slots=True)
class Budget:
    """What one case keeps of the wire, whatever the agent sends."""

    #: timeline rows kept (then counted only)
    lines: int = 2000
    #: characters of row text kept in all (then counted only)
    bytes: int = 2 * 1024 * 1024
    #: characters of one row kept (the rest cut, the line's size said)
    line_chars: int = 2000
    #: messages received and not yet taken by the case (oldest notifications
    #: dropped, then oldest requests)
    pending: int = 1000
    #: bytes of the lines of those messages (oldest notifications dropped past it)
    pending_bytes: int = 8 * 1024 * 1024
    #: longest line parsed (bytes); a longer one is noted, not parsed
    max_line: int = 16 * 1024 * 1024
    #: findings kept per case (then counted per rule)
    findings: int = 200


#: answers a request of the peer: called with the peer under test (its own
#: subclass, so a case's responder takes the class it drives) and the request
Responder = Callable[[Any, Message], Awaitable[None]]
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


@dataclass(slots=True)
class Entry:
    """One row of a case's timeline: a line of the wire, or a note of the check."""

    t: float
    dir: Direction | None  # None: a note
    text: str
    findings: list[Finding] = field(default_factory=list[Finding])
    #: bytes of the line (its text may be cut)
    size: int = 0
    #: the line's summary when ``text`` is cut (read from the whole line)
    label: str = ""


@dataclass(frozen=True, slots=True)
class _Waiting:
    """A message received and not yet taken by the case, with the bytes of
    its line (a batch member: its share)."""

    msg: Message
    size: int


def summary(msg: Message) -> str:
    """``session/new #2``, ``error -32700 (id null)``, ``result #3``."""
    ident = "id null" if msg.id is None else f"#{msg.id}"
    if msg.kind == "response":
        if msg.error is not None:
            return f"error {msg.error.get('code')} ({ident})"
        return f"result ({ident})"
    return f"{msg.method} {ident}" if msg.kind == "request" else f"{msg.method}"


def permission_outcome(msg: Message, kind: str) -> dict[str, Any]:
    """The outcome picking the first option of ``kind`` (``allow_once``,
    ``reject_once``), else ``reject_once``, else cancelled: never an
    ``*_always`` option (the check must not leave a standing permission)."""
    options = [as_obj(o) for o in as_list(msg.params.get("options"))]
    for wanted in (kind, "reject_once"):
        for option in options:
            if option.get("kind") == wanted and isinstance(option.get("optionId"), str):
                return {
                    "outcome": {"outcome": "selected", "optionId": option["optionId"]}
                }
    return {"outcome": {"outcome": "cancelled"}}


async def default_responder(agent: PeerUnderTest, msg: Message) -> None:
    """Permission: allow once (:func:`permission_outcome`); anything else: -32601."""
    if msg.method == "session/request_permission":
        await agent.answer(msg, permission_outcome(msg, "allow_once"))
    else:
        await agent.send(
            {
                "jsonrpc": "2.0",
                "id": msg.id,
                "error": {"code": -32601, "message": "Method not found"},
            }
        )


def _unmatched_error(line: bytes) -> str:
    """``error -32700`` for an error response without an id (not a JSON-RPC
    message, so it answers nothing), else ""."""
    try:
        value = _decode(line)
    except (msgspec.DecodeError, RecursionError):
        return ""
    obj = as_obj(value)
    error = as_obj(obj.get("error"))
    if "id" in obj or not error:
        return ""
    return f"error {error.get('code')}"


class PeerUnderTest:
    """The peer under test (an agent for ``check``, a client for
    ``check-client``) and the record of what crossed the wire: what the check
    writes goes ``OURS``, what it reads comes ``THEIRS``.  A subclass starts
    the peer (:meth:`run`) and sets ``_writer`` and ``_reader``."""

    #: the direction of the lines the check writes, and of those it reads
    OURS: Direction = CLIENT
    THEIRS: Direction = AGENT
    #: what the peer is called in the notes and failure texts
    PEER = "agent"
    #: the note when the peer's side of the wire reaches end of file
    EOF_NOTE = "the agent closed its stdout"

    def __init__(
        self,
        command: Sequence[str],
        *,
        budget: Budget | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.command = list(command)
        self.budget = budget = budget or Budget()
        self.cwd = cwd
        self.env = env
        self.inspector = Inspector(max_findings=budget.findings)
        self.timeline: list[Entry] = []
        self.kept_chars = 0
        #: rows not kept past the budget: lines and their bytes
        self.dropped_lines = 0
        self.dropped_bytes = 0
        #: notifications dropped unread (more than ``budget.pending`` waiting)
        self.dropped_pending = 0
        #: requests dropped unanswered (as many waiting, and no notification)
        self.dropped_requests = 0
        #: called on every chunk read from the agent, and once the agent took a
        #: line sent to it (progress)
        self.on_line: Callable[[bool], object] = lambda from_agent: None
        #: what was sent last (``session/new #2 at 0.01 s``) and received last
        self.last_sent = ""
        self.last_sent_t = 0.0
        self.last_received = ""
        self.lines_received = 0
        #: whether the agent wrote a line over ``budget.max_line`` (not parsed)
        self.too_long = False
        #: responses that answer no request the check is waiting for (no id)
        self.unmatched: list[str] = []
        self.start = time.monotonic()
        #: answers the peer's requests a case does not wait for
        self.responder: Responder = default_responder
        self.stderr: bytearray = bytearray()
        self.exited = trio.Event()
        self._ids = itertools.count(1)
        self._splitter = LineSplitter(budget.max_line)
        self._received: list[_Waiting] = []
        #: bytes of the lines of ``_received`` (their decoded form is about as big)
        self._received_bytes = 0
        self._done = False
        self._arrived = trio.Event()
        self._writer: trio.abc.SendStream | None = None
        self._reader: trio.abc.ReceiveStream | None = None
        self._closed = False
        self._eof = False

    @property
    def returncode(self) -> int | None:
        return None

    @property
    def received_eof(self) -> bool:
        """Whether the peer's side of the wire reached end of file."""
        return self._eof

    def gone(self) -> Exception:
        """The exception a wait raises once the peer is gone."""
        return AgentExited(self.returncode)

    # -- writing ------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self.start

    def note(self, text: str) -> None:
        self.timeline.append(Entry(self.now(), None, text))

    def _entry(self, t: float, direction: Direction, line: bytes) -> Entry | None:
        """A timeline row for ``line`` within the budget (cut to
        ``line_chars``), or ``None`` past it (counted)."""
        b = self.budget
        if len(self.timeline) >= b.lines or self.kept_chars >= b.bytes:
            self.dropped_lines += 1
            self.dropped_bytes += len(line)
            return None
        text = line[: b.line_chars].decode("utf-8", "replace")
        label = ""
        if len(line) > b.line_chars:
            text += f" ... [{len(line)} bytes]"
            label = summarize(line)[:LABEL_CHARS]  # the cut text is no JSON
        self.kept_chars += len(text) + len(label)
        entry = Entry(t, direction, text, size=len(line), label=label)
        self.timeline.append(entry)
        return entry

    def budget_note(self) -> None:
        """Say in the timeline what was not kept (at the end of a case)."""
        if self.dropped_lines:
            self.note(
                f"{self.dropped_lines} more lines ({self.dropped_bytes} bytes) not kept (the case's budget)"
            )
        if self.dropped_pending:
            self.note(f"{self.dropped_pending} notifications dropped unread")
        if self.dropped_requests:
            self.note(
                f"{self.dropped_requests} requests dropped unanswered (over {self.budget.pending} messages waiting)"
            )
        skipped = self._splitter.skipped
        if skipped:
            self.note(
                f"{skipped} lines over {self.budget.max_line} bytes from the {self.PEER} not parsed"
            )

    def new_id(self) -> int:
        return next(self._ids)

    async def send_raw(self, line: bytes, what: str = "") -> None:
        """One line as given (``\\n`` added), recorded and checked; ``what``
        it is, for the failure texts (a request: ``session/new #2``)."""
        assert self._writer is not None
        t = self.now()
        if what or len(line) > 200:
            what = what or f"a line of {len(line)} bytes"
        else:
            what = line.decode("utf-8", "replace")
        self.last_sent, self.last_sent_t = what, t
        entry = self._entry(t, self.OURS, line)
        # checked before it is written: the answer may be read before send_all returns
        findings = self.inspector.feed(self.OURS, t, line)
        if entry is not None:
            entry.findings = findings
        try:
            await self._writer.send_all(line + b"\n")
            self.on_line(False)  # taken: "no answer N s after" counts from here
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            if entry is not None:
                entry.text += f"  [not delivered: the {self.PEER} is gone]"

    async def send(self, obj: Any) -> None:
        fields = as_obj(obj)
        what = ""
        if "method" in fields:
            what = str(fields["method"])
            if "id" in fields:
                what += f" #{fields['id']}"
        await self.send_raw(_encode(obj), what)

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
        responder when ``respond``.  Responses not matched stay for their own
        wait (an agent may answer two requests in either order, in one write);
        other messages not matched are taken."""
        while True:
            kept: list[_Waiting] = []
            try:
                while self._received:
                    waiting = self._received.pop(0)
                    msg = waiting.msg
                    if match(msg):
                        self._received_bytes -= waiting.size
                        return msg
                    if msg.kind == "response":
                        kept.append(waiting)
                        continue
                    self._received_bytes -= waiting.size
                    if respond and msg.kind == "request":
                        await self._respond(msg)
            finally:
                self._received[:0] = kept
            if self.too_long:
                raise LineTooLong(self.budget.max_line, self.PEER)
            if self._eof or self.exited.is_set():
                raise self.gone()
            self._arrived = trio.Event()
            await self._arrived.wait()

    async def _respond(self, msg: Message) -> None:
        """A request from the agent: a permission asked in a turn the check
        cancelled is answered ``cancelled`` (prompt-turn.mdx: the client
        MUST; never approved, whatever the case's responder); the rest go to
        the responder."""
        sid = msg.session_id
        turn = self.inspector.state.turns.get(sid) if sid is not None else None
        if msg.method == "session/request_permission" and turn and turn.cancelled:
            self.note("a permission asked after session/cancel: answered cancelled")
            await self.answer(msg, {"outcome": {"outcome": "cancelled"}})
            return
        await self.responder(self, msg)

    def received(self) -> list[Message]:
        """What arrived and was not taken yet (kept)."""
        return [waiting.msg for waiting in self._received]

    def done(self) -> None:
        """The case is over: what is waiting goes, and nothing more is kept
        (the lines read while the agent is reaped are still checked)."""
        self._done = True
        self._received.clear()
        self._received_bytes = 0

    async def _read_stdout(self) -> None:
        assert self._reader is not None
        async with self._reader as out:
            while data := await out.receive_some(65536):
                self.on_line(True)  # progress, a long line's pieces included
                t = self.now()
                skipped = self._splitter.skipped
                for line in self._splitter.feed(bytes(data)):
                    self._line(t, line)
                for verdict in self._splitter.take_discarded():
                    self.note(f"from the {self.PEER}: {verdict.log}: not parsed")
                if self._splitter.skipped != skipped:
                    self.too_long = True
                    self.last_received = f"a line over {self.budget.max_line} bytes (--max-line) at {t:.2f} s"
                    self._arrived.set()
        for rest in self._splitter.rest():
            self._line(self.now(), rest)
        for verdict in self._splitter.take_discarded():
            self.note(f"from the {self.PEER}: {verdict.log}: not parsed")
        self.note(self.EOF_NOTE)
        self._eof = True
        self._arrived.set()

    def _line(self, t: float, line: bytes) -> None:
        self.lines_received += 1
        findings = self.inspector.feed(self.THEIRS, t, line)
        entry = self._entry(t, self.THEIRS, line)
        if entry is not None:
            entry.findings = findings
        items = parse_line(self.THEIRS, 0, t, line)
        # a batch's members share its line
        size = len(line) // len(items)
        what: list[str] = []
        for item in items:
            if isinstance(item, Message):
                # the case reads params and result: the raw bytes would keep the line
                item.raw = None
                what.append(summary(item))
                if item.kind == "response" and item.id is None:
                    code = "a result" if item.error is None else item.error.get("code")
                    self.unmatched.append(f"{code} at {t:.2f} s")
                    del self.unmatched[:-5]
                self._take(item, size)
            else:
                what.append(_unmatched_error(line) or "a line that is not JSON-RPC")
                if what[-1].startswith("error"):
                    self.unmatched.append(f"{what[-1][6:]} at {t:.2f} s")
                    del self.unmatched[:-5]
                    # the answer to a line without an id, as far as the check
                    # can tell: a case waiting for that has it (no timeout)
                    error = as_obj(as_obj(_decode(line)).get("error"))
                    absent = Message(AGENT, 0, t, "response", None, None, {})
                    absent.error, absent.id_absent = error, True
                    self._take(absent, size)
        if len(items) > 1:
            shown = ", ".join(what[:3]) + (", ..." if len(what) > 3 else "")
            self.last_received = f"a batch of {len(items)} ({shown}) at {t:.2f} s"
        else:
            self.last_received = f"{''.join(what) or 'an empty line'} at {t:.2f} s"
        self._arrived.set()

    def _take(self, msg: Message, size: int) -> None:
        """Keep ``msg`` for the case; past ``budget.pending`` messages or
        ``budget.pending_bytes`` waiting, the oldest notification among the
        first ``DROP_SCAN`` waiting goes, else the oldest request (never to
        be answered: counted); responses are never dropped (the case's own
        calls bound them), nor the newest message (a case waiting for one
        big update still sees it).  Nothing is kept once the case is
        :meth:`done`."""
        if self._done:
            return
        received = self._received
        received.append(_Waiting(msg, size))
        self._received_bytes += size
        b = self.budget
        while len(received) > b.pending or self._received_bytes > b.pending_bytes:
            last = len(received) - 1
            victim = next(
                (
                    i
                    for i in range(min(last, DROP_SCAN))
                    if received[i].msg.kind == "notification"
                ),
                None,
            )
            if victim is None:  # a flood of requests: past the responses, the oldest
                victim = next(
                    (i for i in range(last) if received[i].msg.kind == "request"), None
                )
            if victim is None:
                return  # responses and the newest message only
            old = received.pop(victim)
            self._received_bytes -= old.size
            if old.msg.kind == "notification":
                self.dropped_pending += 1
            else:
                self.dropped_requests += 1

    def where(self) -> str:
        """Where the exchange stood: the last line sent and received."""
        sent = (
            f"{self.last_sent} sent at {self.last_sent_t:.2f} s"
            if self.last_sent
            else "nothing sent"
        )
        got = (
            f"last from the {self.PEER}: {self.last_received}"
            if self.last_received
            else f"the {self.PEER} wrote nothing"
        )
        odd = (
            f"; it answered {', '.join(self.unmatched)} without an id"
            if self.unmatched
            else ""
        )
        return f"{sent}; {got}{odd}"


class AgentUnderTest(PeerUnderTest):
    """A running agent (``check``): a process whose stdin and stdout are the wire."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        budget: Budget | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(command, budget=budget, cwd=cwd, env=env)
        self._process: trio.Process | None = None

    async def run(self, nursery: trio.Nursery) -> None:
        """Start the agent and its reading tasks in ``nursery``."""
        self._process = await open_agent(
            self.command, stderr=subprocess.PIPE, cwd=self.cwd, env=self.env
        )
        self._writer = self._process.stdin
        self._reader = self._process.stdout
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

    def getenv(self, name: str) -> str | None:
        """A variable of the agent's environment."""
        return (self.env if self.env is not None else os.environ).get(name)

    @property
    def returncode(self) -> int | None:
        return None if self._process is None else self._process.returncode

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
        super().__init__(
            "the agent closed its stdout before answering"
            if code is None
            else f"the agent exited ({code}) before answering"
        )
        self.code = code


class LineTooLong(Exception):
    """The agent wrote a line longer than the check parses."""

    def __init__(self, max_line: int, peer: str = "agent") -> None:
        super().__init__(
            f"the {peer} wrote a line over {max_line} bytes (--max-line): not parsed, so what it answered is not known"
        )
