"""An ACP agent that echoes its prompts: ``python examples/echo_agent.py [--state-dir DIR] [--unstable]``.

A stdio agent any ACP client can launch (``examples/client.py``, the
official SDK's ``spawn_agent_process``, an editor).  It speaks protocol v1 and v2 and exercises most of
what a real agent sends:

* ``session/new``, ``session/load`` (replays the history: v2 as
  ``user_message`` / ``agent_message`` upserts with a ``messageId``, v1 as
  chunks), ``session/resume``, ``session/close``, ``additionalDirectories``,
  stdio and http MCP servers (recorded, echoed in the responses' ``_meta``
  and in the reply text; no server is started);
* a prompt streams a plan, ``agent_message_chunk``s with a ``messageId``, a
  tool call that asks ``session/request_permission``, its updates, a
  ``usage_update``, and ends with ``end_turn``;
* a prompt containing the word "wait" starts a tool call and runs until the
  client sends ``session/cancel``; the runtime then answers ``cancelled``.

Sessions live in memory (load and resume work within the process) and, with
``--state-dir DIR``, in ``DIR/<sessionId>.jsonl`` so they survive a restart
(append-only: one line per setup change and per turn; see ``Store``).
With ``--unstable`` it speaks the schema's unstable surface (the same
classes, the ``*_UNSTABLE`` method tables) and also serves ``session/fork``
(a new session with a copy of the history).
Logs go to stderr; stdout carries the protocol only.

Written against the generated types (mypy --strict, pyright strict): one
class per protocol version serves it, ``EchoAgentV1(v1.Agent)`` and
``EchoAgentV2(v2.Agent)`` (subclassing the generated Protocol has the type
checker check each handler; a method left out is answered -32601; a
handler's name is the method's wire name with ``/`` as ``_``,
``session/new`` -> ``session_new``), over ``EchoCore``, which keeps the
sessions and the turn's script whatever the version.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import logging
import os
import re
import stat
import sys
import uuid
from pathlib import Path
from typing import Literal, TypeAlias, TypeVar

import acp_trio
import msgspec
import trio
from acp_schema import v1, v2

log = logging.getLogger("echo_agent")

AGENT_NAME = "acp-msgspec-echo-agent"
AGENT_VERSION = "0.1.0"
CONTEXT_SIZE = 200_000
PRICE_PER_TOKEN = 0.000003  # USD
WAIT = re.compile(r"\bwait\b", re.IGNORECASE)
SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
Json: TypeAlias = dict[str, object]  # a JSON object
T = TypeVar("T")


def optional(value: T | msgspec.UnsetType | None) -> T | None:
    """An optional field's value, ``None`` when absent or null."""
    return None if isinstance(value, msgspec.UnsetType) else value


# -- what is remembered of a session (version-neutral, JSON on disk) -------------------


class Message(msgspec.Struct, tag="message"):
    role: Literal["user", "agent"]
    message_id: str
    content: list[Json]  # content blocks as wire JSON (same shape in v1 and v2)


class ToolCallRecord(msgspec.Struct, tag="tool_call"):
    tool_call_id: str
    title: str
    status: Literal["pending", "in_progress", "completed", "failed"] = "pending"
    output: str | None = None  # the tool's text result
    locations: list[str] = []
    raw_input: Json | None = None


class PlanItem(msgspec.Struct):
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


class PlanRecord(msgspec.Struct, tag="plan"):
    plan_id: str
    entries: list[PlanItem]


class UsageRecord(msgspec.Struct, tag="usage"):
    used: int
    size: int
    cost: float


HistoryItem = Message | ToolCallRecord | PlanRecord | UsageRecord


class Session(msgspec.Struct):
    session_id: str
    cwd: str
    additional_directories: list[str] = []
    mcp_servers: list[object] = []  # as received, wire JSON
    history: list[HistoryItem] = []
    turns: int = 0
    used_tokens: int = 0


# -- on disk: one append-only JSON Lines file per session -------------------------------
#
# ``DIR/<sessionId>.jsonl``: a ``setup`` record first (it names the session), then
# one record per change: a ``setup`` when the cwd, directories or MCP servers change,
# a ``turn`` with the items one prompt turn added.  Saving a turn appends one line
# (its cost is the turn's, not the history's); appends hold an exclusive ``flock``
# so agents sharing the directory interleave whole turns and lose none.


class SetupRecord(msgspec.Struct, tag="setup"):
    session_id: str
    cwd: str
    additional_directories: list[str] = []
    mcp_servers: list[object] = []


class TurnRecord(msgspec.Struct, tag="turn"):
    items: list[HistoryItem]
    tokens: int = 0  # tokens this turn used


StateRecord = SetupRecord | TurnRecord
MAX_STATE_FILE = 64 * 1024 * 1024  # bytes; a bigger session file is not read
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # no symlink, no FIFO wait
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(StateRecord)


class Store:
    """Sessions by id: in memory, and in ``directory`` when given.

    Saving is best effort: a failed write (disk full, permissions) is logged
    and the session goes on in memory; what was appended is then cut back, so
    no partial line or temporary file is left.  A file is read only if it is
    a regular file (not a FIFO, device or symlink) whose first record names
    the session its file name says.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.sessions: dict[str, Session] = {}
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def new(self, cwd: str) -> Session:
        session = Session(session_id=f"sess_{uuid.uuid4().hex[:16]}", cwd=cwd)
        self.sessions[session.session_id] = session
        return session

    def get(self, session_id: str, *, reread: bool = False) -> Session | None:
        """The session, from memory; from disk when not in memory or ``reread``
        (another agent sharing the directory may have added turns)."""
        session = self.sessions.get(session_id)
        if (session is None or reread) and self.directory is not None:
            stored = self._read(session_id)
            if stored is not None:
                session = self.sessions[session_id] = stored
        return session

    def _path(self, session_id: str) -> Path | None:
        if self.directory is None or not SESSION_ID.match(session_id):
            return None
        return self.directory / f"{session_id}.jsonl"

    def _read(self, session_id: str) -> Session | None:
        path = self._path(session_id)
        if path is None:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | _FILE_FLAGS)
        except OSError:  # absent, a symlink, unreadable
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STATE_FILE:
                log.warning("%s: not a regular file of a session, skipped", path)
                return None
            fcntl.flock(fd, fcntl.LOCK_SH)  # no half-written turn
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(MAX_STATE_FILE + 1)
        finally:
            os.close(fd)
        session: Session | None = None
        for number, line in enumerate(data.splitlines(), 1):
            try:
                record = _DECODER.decode(line)
            except msgspec.DecodeError:  # e.g. cut short by a crash: skip it
                log.warning("%s:%d: unreadable record, skipped", path, number)
                continue
            if isinstance(record, SetupRecord):
                if record.session_id != session_id:
                    log.warning(
                        "%s: names session %r, refused", path, record.session_id
                    )
                    return None
                if session is None:
                    session = Session(session_id=session_id, cwd=record.cwd)
                session.cwd = record.cwd
                session.additional_directories = record.additional_directories
                session.mcp_servers = record.mcp_servers
            elif session is not None:
                session.history.extend(record.items)
                session.turns += 1
                session.used_tokens += record.tokens
        return session

    def save_setup(self, session: Session) -> None:
        self._append(session, [])

    def save_turn(
        self, session: Session, items: list[HistoryItem], tokens: int
    ) -> None:
        self._append(session, [TurnRecord(items=items, tokens=tokens)])

    def _setup_record(self, session: Session) -> SetupRecord:
        return SetupRecord(
            session_id=session.session_id,
            cwd=session.cwd,
            additional_directories=session.additional_directories,
            mcp_servers=session.mcp_servers,
        )

    def _append(self, session: Session, records: list[StateRecord]) -> None:
        """Append ``records`` (a ``setup`` first when the file is new or
        ``records`` is empty) as whole lines; on failure, log and cut back."""
        path = self._path(session.session_id)
        if path is None:
            return
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FILE_FLAGS, 0o600
            )
        except OSError as exc:
            log.warning("session %s not saved: %s", session.session_id, exc)
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                log.warning("%s: not a regular file, session not saved", path)
                return
            fcntl.flock(fd, fcntl.LOCK_EX)  # one writer at a time: whole lines
            size = os.fstat(fd).st_size
            if size == 0 or not records:
                records = [self._setup_record(session), *records]
            data = b"".join(_ENCODER.encode(r) + b"\n" for r in records)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            except OSError as exc:
                log.warning("session %s not saved: %s", session.session_id, exc)
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)  # no partial line left behind
        finally:
            os.close(fd)


class Settings:
    """What the command line sets (``main``)."""

    store = Store(None)  # sessions (--state-dir)
    chunk_delay = 0.0  # seconds between streamed chunks (--chunk-delay)


SETTINGS = Settings()


def not_found(session_id: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(
        v1.ERROR_CODE_RESOURCE_NOT_FOUND,
        "Resource not found",
        {"sessionId": session_id},
    )


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def to_json(value: object) -> list[Json]:
    """Generated Structs (a list of them) as wire JSON objects."""
    return msgspec.convert(msgspec.to_builtins(value), list[Json])


def prompt_text(blocks: list[Json]) -> str:
    """The prompt (as wire JSON) as one line of text: links and embedded
    resources by name; read from JSON, it is the same in every version."""
    parts: list[str] = []
    for block in blocks:
        kind, text = block.get("type"), block.get("text")
        resource = block.get("resource")
        if kind == "text" and isinstance(text, str):
            parts.append(text)
        elif kind == "resource_link":
            parts.append(f"[{block.get('name')}]")
        elif kind == "resource" and isinstance(resource, dict):
            parts.append(f"[{resource.get('uri')}]")  # pyright: ignore[reportUnknownMemberType]
    return " ".join(" ".join(parts).split())


def chunks_of(text: str, size: int = 24) -> list[str]:
    """``text`` in pieces of about ``size`` characters, split after spaces."""
    pieces: list[str] = []
    current = ""
    for word in re.findall(r"\S+\s*", text):
        current += word
        if len(current) >= size:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def describe_setup(session: Session) -> str:
    lines = [f"Working in {session.cwd}"]
    if session.additional_directories:
        lines[0] += " (also " + ", ".join(session.additional_directories) + ")"
    for server in session.mcp_servers:
        lines.append(describe_server(server))
    return "\n".join(lines)


def describe_server(server: object) -> str:
    """One MCP server entry as a line; any JSON (a custom ``_`` transport, an
    entry edited on disk) is described, never an error."""
    if not isinstance(server, dict):
        return f"MCP server (unreadable entry {str(server)[:40]!r})"
    entry = msgspec.convert(server, Json)
    transport, where = entry.get("type", "stdio"), entry.get("url")
    if not isinstance(where, str):
        command, args = entry.get("command"), entry.get("args")
        words: list[object] = [command]
        if isinstance(args, list):
            words.extend(msgspec.convert(args, list[object]))
        where = " ".join(str(w) for w in words if w is not None) or "(no address)"
    return f"MCP server {entry.get('name', '(unnamed)')} ({transport}): {where}"


def setup_meta(session: Session) -> Json:
    """What the agent recorded of the session setup, echoed in ``_meta``."""
    return {
        "echoAgent": {
            "sessionId": session.session_id,
            "cwd": session.cwd,
            "additionalDirectories": session.additional_directories,
            "mcpServers": session.mcp_servers,
        }
    }


PLAN_STEPS: list[tuple[str, Literal["high", "medium", "low"]]] = [
    ("Read the prompt", "high"),
    ("Ask permission to run the echo tool", "medium"),
    ("Echo the prompt back", "low"),
]


# -- the agent: what both versions share ---------------------------------------------


class EchoCore:
    """Sessions and the turn's script, whatever the protocol version.

    The version classes below (``EchoAgentV1``, ``EchoAgentV2``) serve the
    protocol: each handler, typed with its version's generated types, turns
    the request into a call here, and each ``send_*`` method here is
    implemented there with the version's types (through the ``acp_trio``
    builders, which follow each version's shape: a v2 tool call is a first
    ``tool_call_update``, a v2 plan a ``plan_update`` with an id).
    """

    #: Serve the unstable surface too (``session/fork``): ``--unstable``.
    unstable = False

    def __init__(self) -> None:
        self.active: set[str] = set()  # sessions opened on this connection

    # what each version sends -------------------------------------------------------

    async def send_text(self, session_id: str, text: str, message_id: str) -> None:
        raise NotImplementedError

    async def send_message(self, session_id: str, message: Message) -> None:
        """A whole message of the history (``session/load``)."""
        raise NotImplementedError

    async def send_plan(self, session_id: str, plan: PlanRecord) -> None:
        raise NotImplementedError

    async def send_tool_call(self, session_id: str, call: ToolCallRecord) -> None:
        """The tool call as first reported (its state so far)."""
        raise NotImplementedError

    async def send_tool_status(self, session_id: str, call: ToolCallRecord) -> None:
        """A ``tool_call_update``: the status, and the output once there is one."""
        raise NotImplementedError

    async def send_usage(self, session_id: str, usage: UsageRecord) -> None:
        raise NotImplementedError

    async def ask_permission(self, session_id: str, call: ToolCallRecord) -> str | None:
        """The option the user picked (``None``: the turn was cancelled)."""
        raise NotImplementedError

    # sessions ----------------------------------------------------------------------

    def setup(
        self,
        session: Session,
        cwd: str,
        directories: list[str],
        servers: list[Json],
        *,
        new: bool = False,
    ) -> None:
        """Record the session's setup (saved when it changed) and open it here."""
        before = (session.cwd, session.additional_directories, session.mcp_servers)
        session.cwd = cwd
        session.additional_directories = directories
        session.mcp_servers = list[object](servers)
        self.active.add(session.session_id)
        after = (session.cwd, session.additional_directories, session.mcp_servers)
        if new or after != before:
            SETTINGS.store.save_setup(session)
        log.info("session %s: %s", session.session_id, describe_setup(session))

    def stored(self, session_id: str) -> Session:
        """A session by id, read again from disk (another agent may have added
        turns), or -32002."""
        session = SETTINGS.store.get(session_id, reread=True)
        if session is None:
            raise not_found(session_id)
        return session

    def copy_of(self, session_id: str) -> Session:
        """A new session with a copy of ``session_id``'s history."""
        source = self.stored(session_id)
        session = SETTINGS.store.new(source.cwd)
        session.history = msgspec.convert(
            msgspec.to_builtins(source.history), list[HistoryItem]
        )
        session.used_tokens = source.used_tokens
        log.info("session %s: forked from %s", session.session_id, source.session_id)
        return session

    def forget(self, session_id: str) -> None:
        # The runtime already cancelled a running prompt of this session.
        if session_id not in self.active:
            raise not_found(session_id)
        self.active.discard(session_id)

    async def replay(self, session: Session) -> None:
        """The history, as updates (``session/load``)."""
        sid = session.session_id
        for item in session.history:
            if isinstance(item, Message):
                await self.send_message(sid, item)
            elif isinstance(item, ToolCallRecord):
                await self.send_tool_call(sid, item)
            elif isinstance(item, PlanRecord):
                await self.send_plan(sid, item)
            else:
                await self.send_usage(sid, item)

    # the prompt turn ---------------------------------------------------------------

    async def run_turn(self, session_id: str, blocks: list[Json]) -> str:
        """Run one turn; its stop reason (a cancellation is the runtime's)."""
        session = SETTINGS.store.get(session_id)
        if session is None or session_id not in self.active:
            raise not_found(session_id)
        session.turns += 1
        start, tokens = len(session.history), session.used_tokens
        session.history.append(
            Message(role="user", message_id=new_id("msg"), content=blocks)
        )
        text = prompt_text(blocks)
        tool_calls: list[ToolCallRecord] = []
        try:
            if WAIT.search(text):
                return await self.wait_turn(session, tool_calls)
            return await self.echo_turn(session, text, tool_calls)
        finally:
            # Runs on cancellation too (no await here): a tool call left running
            # is remembered as failed.
            for record in tool_calls:
                if record.status not in ("completed", "failed"):
                    record.status = "failed"
            # the turn's items only: saving costs the turn, not the history
            SETTINGS.store.save_turn(
                session, session.history[start:], session.used_tokens - tokens
            )

    async def stream_text(self, session: Session, text: str) -> None:
        """Stream ``text`` as chunks of one agent message, and record it."""
        message = Message(role="agent", message_id=new_id("msg"), content=[])
        session.history.append(message)
        for piece in chunks_of(text):
            message.content.append({"type": "text", "text": piece})
            await self.send_text(session.session_id, piece, message.message_id)
            await trio.sleep(SETTINGS.chunk_delay)

    async def echo_turn(
        self, session: Session, text: str, tool_calls: list[ToolCallRecord]
    ) -> str:
        sid, turn = session.session_id, session.turns
        plan = PlanRecord(plan_id=f"plan_{turn}", entries=[])

        async def progress(
            *statuses: Literal["pending", "in_progress", "completed"],
        ) -> None:
            plan.entries = [
                PlanItem(content=content, priority=priority, status=status)
                for (content, priority), status in zip(
                    PLAN_STEPS, statuses, strict=True
                )
            ]
            await self.send_plan(sid, plan)

        session.history.append(plan)
        await progress("in_progress", "pending", "pending")
        reply = f"You said: {text or '(nothing)'}\n{describe_setup(session)}"
        await self.stream_text(session, reply)
        await progress("completed", "in_progress", "pending")

        call = ToolCallRecord(
            tool_call_id=f"call_{turn}",
            title=f"Echo {len(text)} characters",
            locations=[session.cwd],
            raw_input={"text": text},
        )
        tool_calls.append(call)
        session.history.append(call)
        await self.send_tool_call(sid, call)
        choice = await self.ask_permission(sid, call)
        if choice is None:
            return "cancelled"
        if choice == "allow":
            call.status = "in_progress"
            await self.send_tool_status(sid, call)
            await progress("completed", "completed", "in_progress")
            call.status, call.output = "completed", text
            await self.send_tool_status(sid, call)
            await progress("completed", "completed", "completed")
            await self.stream_text(session, f"Echoed {len(text)} characters.")
        else:
            call.status, call.output = "failed", "Permission denied"
            await self.send_tool_status(sid, call)
            await self.stream_text(session, "Okay, I did not run the echo tool.")

        session.used_tokens += len(text.split()) + len(reply.split()) + 8
        usage = UsageRecord(
            used=session.used_tokens,
            size=CONTEXT_SIZE,
            cost=round(session.used_tokens * PRICE_PER_TOKEN, 6),
        )
        session.history.append(usage)
        await self.send_usage(sid, usage)
        return "end_turn"

    async def wait_turn(
        self, session: Session, tool_calls: list[ToolCallRecord]
    ) -> str:
        await self.stream_text(session, "Waiting until you cancel this turn.")
        call = ToolCallRecord(
            tool_call_id=f"call_{session.turns}",
            title="Wait for session/cancel",
            status="in_progress",
        )
        tool_calls.append(call)
        session.history.append(call)
        await self.send_tool_call(session.session_id, call)
        await trio.sleep_forever()  # session/cancel cancels this; answered "cancelled"
        raise AssertionError("unreachable")


PERMISSION_OPTIONS: list[Json] = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


# -- protocol v1 -------------------------------------------------------------------------


class EchoAgentV1(EchoCore, v1.Agent):
    """The echo agent over protocol v1: typed handlers of ``v1.Agent``."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        super().__init__()
        self.client = conn.client

    async def send(self, session_id: str, update: v1.SessionUpdate) -> None:
        await self.client.session_update(acp_trio.notification(session_id, update))

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        fork = v1.SessionForkCapabilities() if self.unstable else msgspec.UNSET
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(
                load_session=True,
                prompt_capabilities=v1.PromptCapabilities(embedded_context=True),
                mcp_capabilities=v1.McpCapabilities(http=True),
                session_capabilities=v1.SessionCapabilities(
                    additional_directories=v1.SessionAdditionalDirectoriesCapabilities(),
                    resume=v1.SessionResumeCapabilities(),
                    close=v1.SessionCloseCapabilities(),
                    fork=fork,
                ),
            ),
            agent_info=v1.Implementation(
                name=AGENT_NAME, title="Echo agent", version=AGENT_VERSION
            ),
        )

    def open(
        self,
        session: Session,
        params: v1.NewSessionRequest
        | v1.LoadSessionRequest
        | v1.ResumeSessionRequest
        | v1.ForkSessionRequest,
        *,
        new: bool = False,
    ) -> None:
        servers = to_json(optional(params.mcp_servers) or [])
        for raw in servers:  # v1's stdio server has no "type" field
            raw.setdefault("type", "stdio")
        directories = list(optional(params.additional_directories) or [])
        self.setup(session, params.cwd, directories, servers, new=new)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session = SETTINGS.store.new(params.cwd)
        self.open(session, params, new=True)
        return v1.NewSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_load(
        self, params: v1.LoadSessionRequest
    ) -> v1.LoadSessionResponse:
        session = self.stored(params.session_id)
        self.open(session, params)
        await self.replay(session)
        return v1.LoadSessionResponse(meta=setup_meta(session))

    async def session_resume(
        self, params: v1.ResumeSessionRequest
    ) -> v1.ResumeSessionResponse:
        session = self.stored(params.session_id)
        self.open(session, params)
        return v1.ResumeSessionResponse(meta=setup_meta(session))

    async def session_fork(
        self, params: v1.ForkSessionRequest
    ) -> v1.ForkSessionResponse:
        if not self.unstable:
            raise acp_trio.RequestError(acp_trio.METHOD_NOT_FOUND, "Method not found")
        session = self.copy_of(params.session_id)
        self.open(session, params, new=True)
        SETTINGS.store.save_turn(session, session.history, session.used_tokens)
        return v1.ForkSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_close(
        self, params: v1.CloseSessionRequest
    ) -> v1.CloseSessionResponse:
        self.forget(params.session_id)
        return v1.CloseSessionResponse()

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        # The runtime cancels the running session/prompt itself (its trio cancel
        # scope) and answers it with stopReason "cancelled"; nothing to do here.
        log.info("session %s: cancel requested", params.session_id)

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        stop_reason = await self.run_turn(params.session_id, to_json(params.prompt))
        return v1.PromptResponse(stop_reason=stop_reason_v1(stop_reason))

    # updates ---------------------------------------------------------------------

    async def send_text(self, session_id: str, text: str, message_id: str) -> None:
        await self.send(session_id, acp_trio.agent_text(text, message_id=message_id))

    async def send_message(self, session_id: str, message: Message) -> None:
        # v1 has no whole-message update: one chunk per content block.
        for raw in message.content:
            block = content_block_v1(raw)
            if message.role == "user":
                update: v1.SessionUpdate = v1.UserMessageChunk(
                    content=block, message_id=message.message_id
                )
            else:
                update = v1.AgentMessageChunk(
                    content=block, message_id=message.message_id
                )
            await self.send(session_id, update)

    async def send_plan(self, session_id: str, plan: PlanRecord) -> None:
        entries = [
            acp_trio.plan_entry(e.content, priority=e.priority, status=e.status)
            for e in plan.entries
        ]
        await self.send(session_id, acp_trio.plan(entries))

    async def send_tool_call(self, session_id: str, call: ToolCallRecord) -> None:
        output = [acp_trio.tool_content(call.output)] if call.output is not None else []
        await self.send(
            session_id,
            acp_trio.tool_call(
                call.tool_call_id,
                call.title,
                kind="other",
                status=call.status,
                content=output or msgspec.UNSET,
                locations=call.locations or msgspec.UNSET,
                raw_input=msgspec.UNSET if call.raw_input is None else call.raw_input,
            ),
        )

    async def send_tool_status(self, session_id: str, call: ToolCallRecord) -> None:
        output = [acp_trio.tool_content(call.output)] if call.output is not None else []
        await self.send(
            session_id,
            acp_trio.tool_call_update(
                call.tool_call_id, status=call.status, content=output or msgspec.UNSET
            ),
        )

    async def send_usage(self, session_id: str, usage: UsageRecord) -> None:
        await self.send(
            session_id, acp_trio.usage_update(usage.used, usage.size, cost=usage.cost)
        )

    async def ask_permission(self, session_id: str, call: ToolCallRecord) -> str | None:
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id=session_id,
                tool_call=v1.ToolCallUpdate(
                    tool_call_id=call.tool_call_id, title=call.title, kind="other"
                ),
                options=msgspec.convert(PERMISSION_OPTIONS, list[v1.PermissionOption]),
            )
        )
        outcome = answer.outcome
        if isinstance(outcome, v1.SelectedPermissionOutcome):
            return outcome.option_id
        return None


def content_block_v1(raw: Json) -> v1.ContentBlock:
    """A stored content block in v1 (one v1 cannot read, as text)."""
    try:
        block: v1.ContentBlock = v1.convert(raw, v1.ContentBlock)
    except msgspec.ValidationError:
        block = v1.TextContent(text=f"[{raw.get('type')} content]")
    return block


def stop_reason_v1(stop_reason: str) -> v1.StopReason:
    return "cancelled" if stop_reason == "cancelled" else "end_turn"


# -- protocol v2 -------------------------------------------------------------------------
#
# v2 is a draft: the messages a later draft moves (initialize, capabilities, the
# permission request, the prompt's answer) are written as JSON with both
# spellings and converted by the version's types, which keep the keys they
# declare; so this class also serves a tree bumped to 2.0.0-alpha.3.


class EchoAgentV2(EchoCore, v2.Agent):
    """The echo agent over protocol v2: typed handlers of ``v2.Agent``."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        super().__init__()
        self.client = conn.client

    async def send(self, session_id: str, update: v2.SessionUpdate) -> None:
        await self.client.session_update(acp_trio.notification(session_id, update))

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        session: Json = {
            "prompt": {"embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "load": {},
            "resume": {},
            "close": {},
            "additionalDirectories": {},
        }
        if self.unstable:
            session["fork"] = {}
        info = {"name": AGENT_NAME, "title": "Echo agent", "version": AGENT_VERSION}
        response: v2.InitializeResponse = v2.convert(
            {
                "protocolVersion": 2,
                "capabilities": {"session": session},
                "agentInfo": info,
                "info": info,  # 2.0.0-alpha.3's name for agentInfo
            },
            v2.AGENT_METHODS["initialize"].result,
        )
        return response

    def open(
        self,
        session: Session,
        params: v2.NewSessionRequest
        | v2.LoadSessionRequest
        | v2.ResumeSessionRequest
        | v2.ForkSessionRequest,
        *,
        new: bool = False,
    ) -> None:
        servers = to_json(optional(params.mcp_servers) or [])
        directories = list(optional(params.additional_directories) or [])
        self.setup(session, params.cwd, directories, servers, new=new)

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        session = SETTINGS.store.new(params.cwd)
        self.open(session, params, new=True)
        return v2.NewSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_load(
        self, params: v2.LoadSessionRequest
    ) -> v2.LoadSessionResponse:
        session = self.stored(params.session_id)
        self.open(session, params)
        await self.replay(session)
        return v2.LoadSessionResponse(meta=setup_meta(session))

    async def session_resume(
        self, params: v2.ResumeSessionRequest
    ) -> v2.ResumeSessionResponse:
        session = self.stored(params.session_id)
        self.open(session, params)
        return v2.ResumeSessionResponse(meta=setup_meta(session))

    async def session_fork(
        self, params: v2.ForkSessionRequest
    ) -> v2.ForkSessionResponse:
        if not self.unstable:
            raise acp_trio.RequestError(acp_trio.METHOD_NOT_FOUND, "Method not found")
        session = self.copy_of(params.session_id)
        self.open(session, params, new=True)
        SETTINGS.store.save_turn(session, session.history, session.used_tokens)
        return v2.ForkSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_close(
        self, params: v2.CloseSessionRequest
    ) -> v2.CloseSessionResponse:
        self.forget(params.session_id)
        return v2.CloseSessionResponse()

    async def session_cancel(self, params: v2.CancelNotification) -> None:
        log.info("session %s: cancel requested", params.session_id)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        stop_reason = await self.run_turn(params.session_id, to_json(params.prompt))
        # 2.0.0-alpha.3 reports the stop reason in a state update instead
        response: v2.PromptResponse = v2.convert(
            {"stopReason": stop_reason}, v2.AGENT_METHODS["session/prompt"].result
        )
        return response

    # updates ---------------------------------------------------------------------

    async def send_text(self, session_id: str, text: str, message_id: str) -> None:
        update = acp_trio.agent_text(text, message_id=message_id, version=v2)
        await self.send(session_id, update)

    async def send_message(self, session_id: str, message: Message) -> None:
        # v2 replays whole messages: upserts keyed by messageId.
        blocks = [content_block_v2(raw) for raw in message.content]
        if message.role == "user":
            update: v2.SessionUpdate = acp_trio.user_message(message.message_id, blocks)
        else:
            update = acp_trio.agent_message(message.message_id, blocks)
        await self.send(session_id, update)

    async def send_plan(self, session_id: str, plan: PlanRecord) -> None:
        entries = [
            acp_trio.plan_entry(
                e.content, priority=e.priority, status=e.status, version=v2
            )
            for e in plan.entries
        ]
        await self.send(
            session_id, acp_trio.plan(entries, plan_id=plan.plan_id, version=v2)
        )

    async def send_tool_call(self, session_id: str, call: ToolCallRecord) -> None:
        output = (
            [acp_trio.tool_content(call.output, version=v2)]
            if call.output is not None
            else []
        )
        await self.send(
            session_id,
            acp_trio.tool_call(
                call.tool_call_id,
                call.title,
                kind="other",
                status=call.status,
                content=output or msgspec.UNSET,
                locations=call.locations or msgspec.UNSET,
                raw_input=msgspec.UNSET if call.raw_input is None else call.raw_input,
                version=v2,
            ),
        )

    async def send_tool_status(self, session_id: str, call: ToolCallRecord) -> None:
        output = (
            [acp_trio.tool_content(call.output, version=v2)]
            if call.output is not None
            else []
        )
        await self.send(
            session_id,
            acp_trio.tool_call_update(
                call.tool_call_id,
                status=call.status,
                content=output or msgspec.UNSET,
                version=v2,
            ),
        )

    async def send_usage(self, session_id: str, usage: UsageRecord) -> None:
        update = acp_trio.usage_update(
            usage.used, usage.size, cost=usage.cost, version=v2
        )
        await self.send(session_id, update)

    async def ask_permission(self, session_id: str, call: ToolCallRecord) -> str | None:
        subject = {
            "toolCallId": call.tool_call_id,
            "title": call.title,
            "kind": "other",
        }
        request: v2.RequestPermissionRequest = v2.convert(
            {
                "sessionId": session_id,
                "toolCall": subject,
                # 2.0.0-alpha.3: a title and a subject instead of toolCall
                "title": call.title,
                "subject": {"type": "tool_call", "toolCall": subject},
                "options": PERMISSION_OPTIONS,
            },
            v2.CLIENT_METHODS["session/request_permission"].params,
        )
        answer = await self.client.session_request_permission(request)
        outcome = answer.outcome
        if isinstance(outcome, v2.SelectedPermissionOutcome):
            return outcome.option_id
        return None


def content_block_v2(raw: Json) -> v2.ContentBlock:
    """A stored content block in v2 (one v2 cannot read, as text)."""
    try:
        block: v2.ContentBlock = v2.convert(raw, v2.ContentBlock)
    except msgspec.ValidationError:
        block = v2.TextContent(text=f"[{raw.get('type')} content]")
    return block


class EchoAgentV1Unstable(EchoAgentV1):
    unstable = True


class EchoAgentV2Unstable(EchoAgentV2):
    unstable = True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--state-dir", type=Path, help="keep sessions in DIR (survive a restart)"
    )
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=0.02,
        help="seconds between streamed chunks (default 0.02)",
    )
    parser.add_argument(
        "--unstable",
        action="store_true",
        help="speak the schema's unstable surface (session/fork, ...)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("ECHO_AGENT_LOG", "WARNING"),
        stream=sys.stderr,
        format="echo_agent: %(message)s",
    )
    SETTINGS.store = Store(args.state_dir)
    SETTINGS.chunk_delay = args.chunk_delay
    if args.unstable:
        agents: acp_trio.Offer = {1: EchoAgentV1Unstable, 2: EchoAgentV2Unstable}
    else:
        agents = {1: EchoAgentV1, 2: EchoAgentV2}
    trio.run(
        functools.partial(acp_trio.serve_agent_stdio, agents, unstable=args.unstable)
    )


if __name__ == "__main__":
    main()
