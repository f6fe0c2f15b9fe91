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
from typing import Any, Literal

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
CHUNK_DELAY = 0.0  # seconds between streamed chunks (--chunk-delay)

# -- what is remembered of a session (version-neutral, JSON on disk) -------------------


class Message(msgspec.Struct, tag="message"):
    role: Literal["user", "agent"]
    message_id: str
    content: list[Any]  # content blocks as wire JSON (same shape in v1 and v2)


class ToolCallRecord(msgspec.Struct, tag="tool_call"):
    tool_call_id: str
    title: str
    kind: str
    status: str
    content: list[Any] = []  # tool call content as wire JSON
    locations: list[str] = []
    raw_input: Any = None


class PlanRecord(msgspec.Struct, tag="plan"):
    plan_id: str
    entries: list[Any]  # plan entries as wire JSON


class UsageRecord(msgspec.Struct, tag="usage"):
    used: int
    size: int
    cost: float


HistoryItem = Message | ToolCallRecord | PlanRecord | UsageRecord


class Session(msgspec.Struct):
    session_id: str
    cwd: str
    additional_directories: list[str] = []
    mcp_servers: list[Any] = []  # as received, wire JSON
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
    mcp_servers: list[Any] = []


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


STORE = Store(None)  # replaced in main()


def not_found(session_id: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(
        v1.ERROR_CODE_RESOURCE_NOT_FOUND,
        "Resource not found",
        {"sessionId": session_id},
    )


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def prompt_text(blocks: list[Any], V: Any) -> str:
    """The prompt as one line of text (links and embedded resources by name);
    ``V`` is the blocks' module."""
    parts = []
    for block in blocks:
        if isinstance(block, V.TextContent):
            parts.append(block.text)
        elif isinstance(block, V.ResourceLink):
            parts.append(f"[{block.name}]")
        elif isinstance(block, V.EmbeddedResource):
            parts.append(f"[{block.resource.uri}]")
    return " ".join(" ".join(parts).split())


def chunks_of(text: str, size: int = 24) -> list[str]:
    """``text`` in pieces of about ``size`` characters, split after spaces."""
    pieces, current = [], ""
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
    transport = server.get("type", "stdio")
    where = server.get("url")
    if not isinstance(where, str):
        command, args = server.get("command"), server.get("args")
        words = [command, *args] if isinstance(args, list) else [command]
        where = " ".join(str(w) for w in words if w is not None) or "(no address)"
    return f"MCP server {server.get('name', '(unnamed)')} ({transport}): {where}"


def setup_meta(session: Session) -> dict[str, Any]:
    """What the agent recorded of the session setup, echoed in ``_meta``."""
    return {
        "echoAgent": {
            "sessionId": session.session_id,
            "cwd": session.cwd,
            "additionalDirectories": session.additional_directories,
            "mcpServers": session.mcp_servers,
        }
    }


def wire(value: Any) -> Any:
    """A generated Struct as wire JSON (builtins)."""
    return msgspec.json.decode(msgspec.json.encode(value))


# -- the agent, written once for both versions -----------------------------------------


class EchoAgent:
    """What both protocol versions share; subclasses bind the version's types.

    Updates are made with the ``acp_trio`` builders, which follow each
    version's shape (a v2 tool call is a first ``tool_call_update``, a v2
    plan a ``plan_update`` with an id).
    """

    V: Any  # the acp_schema module of the version (v1 or v2)

    def __init__(self, conn: acp_trio.AgentSideConnection[Any]) -> None:
        self.client = conn.client
        self.active: set[str] = set()  # sessions opened on this connection

    # version-specific pieces ---------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        raise NotImplementedError

    async def replay_message(self, session_id: str, message: Message) -> None:
        raise NotImplementedError

    # session setup -------------------------------------------------------------------

    def convert(self, message: dict[str, Any], method: str, part: str) -> Any:
        """``message`` (JSON, or Structs inside it) as the ``params`` or ``result``
        type of ``method`` in this version's tables.

        Where the v2 drafts move a field, both spellings are written: `convert`
        keeps the keys the type declares and drops the rest, so the agent
        serves each draft it is generated for (tested on 2.0.0-alpha.3).
        """
        table = self.V.AGENT_METHODS_UNSTABLE | self.V.CLIENT_METHODS_UNSTABLE
        return self.V.convert(message, getattr(table[method], part))

    async def initialize(self, params: Any) -> Any:
        info = {"name": AGENT_NAME, "title": "Echo agent", "version": AGENT_VERSION}
        response = {
            "protocolVersion": self.V.PROTOCOL_VERSION,
            **self.capabilities(),
            "agentInfo": info,
            "info": info,  # 2.0.0-alpha.3's name for agentInfo
        }
        return self.convert(response, "initialize", "result")

    def prompt_response(self, stop_reason: str) -> Any:
        # 2.0.0-alpha.3 reports the stop reason in a state_update instead
        return self.convert({"stopReason": stop_reason}, "session/prompt", "result")

    def _setup(self, session: Session, params: Any, *, new: bool = False) -> None:
        before = (session.cwd, session.additional_directories, session.mcp_servers)
        session.cwd = params.cwd
        dirs = params.additional_directories
        session.additional_directories = [] if dirs is msgspec.UNSET else list(dirs)
        servers = [] if params.mcp_servers is msgspec.UNSET else params.mcp_servers
        session.mcp_servers = wire(servers)
        for raw, server in zip(session.mcp_servers, servers, strict=True):
            if isinstance(server, self.V.McpServerStdio):  # v1 stdio: no "type" field
                raw.setdefault("type", "stdio")
        self.active.add(session.session_id)
        after = (session.cwd, session.additional_directories, session.mcp_servers)
        if new or after != before:
            STORE.save_setup(session)
        log.info("session %s: %s", session.session_id, describe_setup(session))

    async def session_new(self, params: Any) -> Any:
        session = STORE.new(params.cwd)
        self._setup(session, params, new=True)
        return self.V.NewSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )

    async def session_load(self, params: Any) -> Any:
        session = STORE.get(params.session_id, reread=True)
        if session is None:
            raise not_found(params.session_id)
        self._setup(session, params)
        for item in session.history:
            await self.replay(session.session_id, item)
        return self.V.LoadSessionResponse(meta=setup_meta(session))

    async def session_resume(self, params: Any) -> Any:
        session = STORE.get(params.session_id, reread=True)
        if session is None:
            raise not_found(params.session_id)
        self._setup(session, params)
        return self.V.ResumeSessionResponse(meta=setup_meta(session))

    async def session_close(self, params: Any) -> Any:
        # The runtime already cancelled a running prompt of this session.
        if params.session_id not in self.active:
            raise not_found(params.session_id)
        self.active.discard(params.session_id)
        return self.V.CloseSessionResponse()

    async def session_cancel(self, params: Any) -> None:
        # The runtime cancels the running session/prompt itself (its trio cancel
        # scope) and answers it with stopReason "cancelled"; nothing to do here.
        log.info("session %s: cancel requested", params.session_id)

    # updates -------------------------------------------------------------------------

    async def send(self, session_id: str, update: Any) -> None:
        await self.client.session_update(acp_trio.notification(session_id, update))

    def blocks(self, content: list[Any]) -> list[Any]:
        """Stored content blocks as this version's Structs (unknown ones as text)."""
        out = []
        for raw in content:
            try:
                out.append(self.V.convert(raw, self.V.ContentBlock))
            except msgspec.ValidationError:
                out.append(self.V.TextContent(text=f"[{raw.get('type')} content]"))
        return out

    def tool_call(self, record: ToolCallRecord) -> Any:
        """The tool call as first reported (v1 ``tool_call``, v2 ``tool_call_update``)."""
        unset: Any = msgspec.UNSET
        return acp_trio.tool_call(
            record.tool_call_id,
            record.title,
            kind=record.kind,
            status=record.status,
            content=[self.V.convert(c, self.V.ToolCallContent) for c in record.content]
            or unset,
            locations=record.locations or unset,
            raw_input=unset if record.raw_input is None else record.raw_input,
            version=self.V,
        )

    def plan(self, record: PlanRecord) -> Any:
        entries = [self.V.convert(e, self.V.PlanEntry) for e in record.entries]
        return acp_trio.plan(entries, plan_id=record.plan_id, version=self.V)

    def usage(self, record: UsageRecord) -> Any:
        return acp_trio.usage_update(
            record.used, record.size, cost=record.cost, version=self.V
        )

    async def replay(self, session_id: str, item: HistoryItem) -> None:
        if isinstance(item, Message):
            await self.replay_message(session_id, item)
        elif isinstance(item, ToolCallRecord):
            await self.send(session_id, self.tool_call(item))
        elif isinstance(item, PlanRecord):
            await self.send(session_id, self.plan(item))
        else:
            await self.send(session_id, self.usage(item))

    async def stream_text(self, session: Session, text: str) -> Message:
        """Stream ``text`` as agent_message_chunks of one message; returns its record."""
        message = Message(role="agent", message_id=new_id("msg"), content=[])
        session.history.append(message)
        for piece in chunks_of(text):
            chunk = acp_trio.agent_text(
                piece, message_id=message.message_id, version=self.V
            )
            message.content.append(wire(chunk.content))
            await self.send(session.session_id, chunk)
            await trio.sleep(CHUNK_DELAY)
        return message

    # the prompt turn -----------------------------------------------------------------

    async def session_prompt(self, params: Any) -> Any:
        session = STORE.get(params.session_id)
        if session is None or params.session_id not in self.active:
            raise not_found(params.session_id)
        session.turns += 1
        start, tokens = len(session.history), session.used_tokens
        session.history.append(
            Message(role="user", message_id=new_id("msg"), content=wire(params.prompt))
        )
        text = prompt_text(params.prompt, self.V)
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
            STORE.save_turn(
                session, session.history[start:], session.used_tokens - tokens
            )

    async def echo_turn(
        self, session: Session, text: str, tool_calls: list[ToolCallRecord]
    ) -> Any:
        sid, turn, V = session.session_id, session.turns, self.V
        plan = PlanRecord(plan_id=f"plan_{turn}", entries=[])
        steps = [
            ("Read the prompt", "high"),
            ("Ask permission to run the echo tool", "medium"),
            ("Echo the prompt back", "low"),
        ]

        async def progress(*statuses: str) -> None:
            plan.entries = [
                wire(acp_trio.plan_entry(c, priority=p, status=s, version=V))
                for (c, p), s in zip(steps, statuses, strict=True)
            ]
            await self.send(sid, self.plan(plan))

        session.history.append(plan)
        await progress("in_progress", "pending", "pending")
        reply = f"You said: {text or '(nothing)'}\n{describe_setup(session)}"
        await self.stream_text(session, reply)
        await progress("completed", "in_progress", "pending")

        call = ToolCallRecord(
            tool_call_id=f"call_{turn}",
            title=f"Echo {len(text)} characters",
            kind="other",
            status="pending",
            locations=[session.cwd],
            raw_input={"text": text},
        )
        tool_calls.append(call)
        session.history.append(call)
        await self.send(sid, self.tool_call(call))
        subject = {
            "toolCallId": call.tool_call_id,
            "title": call.title,
            "kind": call.kind,
        }
        request = {
            "sessionId": sid,
            "toolCall": subject,
            # 2.0.0-alpha.3: a title and a subject instead of toolCall
            "title": call.title,
            "subject": {"type": "tool_call", "toolCall": subject},
            "options": [
                {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        }
        answer = await self.client.session_request_permission(
            self.convert(request, "session/request_permission", "params")
        )
        if isinstance(answer.outcome, V.RequestPermissionOutcomeCancelled):
            return self.prompt_response("cancelled")
        if answer.outcome.option_id == "allow":
            call.status = "in_progress"
            await self.send(
                sid,
                acp_trio.tool_call_update(
                    call.tool_call_id, status=call.status, version=V
                ),
            )
            await progress("completed", "completed", "in_progress")
            result = acp_trio.tool_content(text, version=V)
            call.status, call.content = "completed", [wire(result)]
            await self.send(
                sid,
                acp_trio.tool_call_update(
                    call.tool_call_id, status=call.status, content=[result], version=V
                ),
            )
            await progress("completed", "completed", "completed")
            await self.stream_text(session, f"Echoed {len(text)} characters.")
        else:
            result = acp_trio.tool_content("Permission denied", version=V)
            call.status, call.content = "failed", [wire(result)]
            await self.send(
                sid,
                acp_trio.tool_call_update(
                    call.tool_call_id, status=call.status, content=[result], version=V
                ),
            )
            await self.stream_text(session, "Okay, I did not run the echo tool.")

        session.used_tokens += len(text.split()) + len(reply.split()) + 8
        usage = UsageRecord(
            used=session.used_tokens,
            size=CONTEXT_SIZE,
            cost=round(session.used_tokens * PRICE_PER_TOKEN, 6),
        )
        session.history.append(usage)
        await self.send(sid, self.usage(usage))
        return self.prompt_response("end_turn")

    async def wait_turn(
        self, session: Session, tool_calls: list[ToolCallRecord]
    ) -> Any:
        await self.stream_text(session, "Waiting until you cancel this turn.")
        call = ToolCallRecord(
            tool_call_id=f"call_{session.turns}",
            title="Wait for session/cancel",
            kind="other",
            status="in_progress",
        )
        tool_calls.append(call)
        session.history.append(call)
        await self.send(session.session_id, self.tool_call(call))
        await trio.sleep_forever()  # session/cancel cancels this; answered "cancelled"
        raise AssertionError("unreachable")


class EchoAgentV1(EchoAgent):
    V = v1

    def capabilities(self) -> dict[str, Any]:
        V = self.V  # this version's module (stable or unstable)
        return {
            "agentCapabilities": V.AgentCapabilities(
                load_session=True,
                prompt_capabilities=V.PromptCapabilities(embedded_context=True),
                mcp_capabilities=V.McpCapabilities(http=True),
                session_capabilities=V.SessionCapabilities(
                    additional_directories=V.SessionAdditionalDirectoriesCapabilities(),
                    resume=V.SessionResumeCapabilities(),
                    close=V.SessionCloseCapabilities(),
                ),
            )
        }

    async def replay_message(self, session_id: str, message: Message) -> None:
        # v1 has no whole-message update: one chunk per content block.
        chunk = v1.UserMessageChunk if message.role == "user" else v1.AgentMessageChunk
        for block in self.blocks(message.content):
            await self.send(
                session_id, chunk(content=block, message_id=message.message_id)
            )


class EchoAgentV2(EchoAgent):
    V = v2

    def capabilities(self) -> dict[str, Any]:
        # As JSON: the v2 drafts move capabilities (2.0.0-alpha.3 has no
        # session.load, resume or close; it needs none for them), and the
        # keys a draft does not declare are dropped by convert.
        session: dict[str, Any] = {
            "prompt": {"embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "load": {},
            "resume": {},
            "close": {},
            "additionalDirectories": {},
        }
        return {
            "capabilities": self.V.convert(
                {"session": session}, self.V.AgentCapabilities
            )
        }

    async def replay_message(self, session_id: str, message: Message) -> None:
        # v2 replays whole messages: upserts keyed by messageId.
        upsert = (
            acp_trio.user_message if message.role == "user" else acp_trio.agent_message
        )
        await self.send(
            session_id, upsert(message.message_id, self.blocks(message.content))
        )


class UnstableSurface:
    """The unstable surface on top of a version's agent: ``session/fork``."""

    V: Any

    def capabilities(self) -> dict[str, Any]:
        # The version's capabilities, with fork (a capability still in
        # preview, which every generated module has) added.
        caps = super().capabilities()  # type: ignore[misc]
        (agent_caps,) = caps.values()
        session = (
            agent_caps.session_capabilities
            if self.V.PROTOCOL_VERSION == 1
            else agent_caps.session
        )
        session.fork = self.V.SessionForkCapabilities()
        return caps  # type: ignore[no-any-return]

    async def session_fork(self, params: Any) -> Any:
        source = STORE.get(params.session_id, reread=True)
        if source is None:
            raise not_found(params.session_id)
        session = STORE.new(params.cwd)
        session.history = msgspec.convert(
            msgspec.to_builtins(source.history), list[HistoryItem]
        )
        session.used_tokens = source.used_tokens
        self._setup(session, params, new=True)  # type: ignore[attr-defined]
        STORE.save_turn(session, session.history, session.used_tokens)
        log.info("session %s: forked from %s", session.session_id, source.session_id)
        return self.V.ForkSessionResponse(
            session_id=session.session_id, meta=setup_meta(session)
        )


class EchoAgentV1Unstable(UnstableSurface, EchoAgentV1):
    V = v1


class EchoAgentV2Unstable(UnstableSurface, EchoAgentV2):
    V = v2


def main(argv: list[str] | None = None) -> None:
    global STORE, CHUNK_DELAY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    STORE = Store(args.state_dir)
    CHUNK_DELAY = args.chunk_delay
    if args.unstable:
        agents: acp_trio.Offer = {1: EchoAgentV1Unstable, 2: EchoAgentV2Unstable}
    else:
        agents = {1: EchoAgentV1, 2: EchoAgentV2}
    trio.run(
        functools.partial(acp_trio.serve_agent_stdio, agents, unstable=args.unstable)
    )


if __name__ == "__main__":
    main()
