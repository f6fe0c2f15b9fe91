"""What the echo agent remembers of a session: version-neutral records, kept in
memory and, with ``--state-dir DIR``, in ``DIR/<sessionId>.jsonl``."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import stat
import uuid
from pathlib import Path
from typing import Literal, TypeAlias, TypeVar

import msgspec

log = logging.getLogger("echo_agent")
#: The session ids kept on disk (a file name: no path separator, no dot).
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
    mode: str = (
        "ask"  # the session's mode (``session/set_mode``, config option ``mode``)
    )
    model: str = "echo"  # its "model" (config option ``model``: ``shout`` capitalizes)


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
    mode: str = "ask"
    model: str = "echo"


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
                session.mode, session.model = record.mode, record.model
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
            mode=session.mode,
            model=session.model,
        )

    def ids(self) -> list[str]:
        """Every session's id: those in memory (oldest first), then those
        only on disk (by name)."""
        found = list(self.sessions)
        if self.directory is not None:
            known = set(found)
            on_disk = sorted(
                p.stem
                for p in self.directory.glob("*.jsonl")
                if SESSION_ID.match(p.stem) and p.stem not in known
            )
            found.extend(on_disk)
        return found

    def delete(self, session_id: str) -> None:
        """Forget the session, in memory and on disk (absent: nothing to do)."""
        self.sessions.pop(session_id, None)
        path = self._path(session_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

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
