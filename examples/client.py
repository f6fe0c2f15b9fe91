"""A command-line ACP client for real agents: ``python examples/client.py [options] -- AGENT_CMD ...``.

Spawns the agent, initializes, opens a session in the current directory (or
loads one with ``--load SESSION_ID``), sends the prompt (``--prompt TEXT``, or
standard input) and prints the live transcript as it streams: messages, the
plan, tool calls with their status, usage::

    python examples/client.py --yes --prompt "hello" -- python examples/echo_agent.py
    python examples/client.py --auth openai-api-key --prompt "fix the tests" -- npx codex-acp

What it serves the agent (protocol v1; the v2 draft has neither):

* ``fs/read_text_file`` and ``fs/write_text_file``, confined to the session's
  directories (the cwd and each ``--add-dir``, symlinks resolved); a write
  asks first.
* ``terminal/*``: the command runs in a process group of its own, its output
  kept up to a bound (``outputByteLimit``, at most ``MAX_TERMINAL_OUTPUT``);
  creating one asks first.  Releasing a terminal, or leaving, kills its group.
* ``session/request_permission``: the options are shown with their kind and
  asked on the terminal.

``--yes`` answers every question "allow once": never an "always" option.
Without ``--yes`` and without a terminal to ask on, nothing is allowed.

Authentication: when the agent answers -32000 (authentication required), the
client lists the agent's ``authMethods``; ``--auth ID`` runs one: an ``agent``
method is an ``authenticate`` call (the agent may read environment variables
this client passed on: set them before running it), an ``env_var`` method
checks its variables are set first, a ``terminal`` method runs the agent
command with the method's arguments on this terminal, then starts over.

Every request but the prompt turn must be answered within ``--timeout``
seconds; the turn runs until the agent ends it, or Ctrl-C sends
``session/cancel`` (a second Ctrl-C quits at once).  The agent's stderr is
kept, and its last lines shown if it fails.  Errors are one line on stderr.

Exit status: 0 when the turn ended, 130 after Ctrl-C, 2 for a bad option, 1
for any other error.

Written against the generated types: a class per protocol version serves the
agent (``ClientV1(v1.Client)``, ``ClientV2(v2.Client)``: subclassing the
generated Protocol has the type checker check each handler; a handler's name
is the method's wire name with ``/`` as ``_``, ``fs/read_text_file`` ->
``fs_read_text_file``), and ``AgentV1`` / ``AgentV2`` call the agent.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, NoReturn, Protocol, TypeAlias, TypeVar, cast

import acp_trio
import msgspec
import trio
from acp_schema import v1, v2
from msgspec import UnsetType

CLIENT_NAME = "acp-msgspec-example-client"
CLIENT_VERSION = "0.2.0"
#: Bytes of a file ``fs/read_text_file`` reads at most.
MAX_READ = 16 * 1024 * 1024
#: Bytes of output a terminal keeps at most (the agent may ask for fewer).
MAX_TERMINAL_OUTPUT = 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when a terminal is killed.
KILL_GRACE = 2.0
#: Lines of the agent's stderr shown when it fails.
STDERR_LINES = 8
STATUS_MARK = {"pending": " ", "in_progress": "~", "completed": "x"}
ROLES = {"user": "you", "agent": "agent", "thought": "thought"}

if TYPE_CHECKING:  # types of the schema as generated now (v2 is a draft:
    # the code below reads what a later draft moves, so a bump leaves it running)
    Notification: TypeAlias = v1.SessionNotification | v2.SessionNotification
    Option: TypeAlias = v1.PermissionOption | v2.PermissionOption
    Init: TypeAlias = v1.InitializeResponse | v2.InitializeResponse
T = TypeVar("T")


class Failure(Exception):
    """An error shown as one line (plus ``details``), exit status ``status``."""

    def __init__(self, message: str, details: Sequence[str] = (), status: int = 1):
        super().__init__(message)
        self.details = list(details)
        self.status = status


# -- text from the agent, made safe for a terminal ----------------------------------

# Control characters but newline and tab (C0, DEL, C1: ESC starts clear-screen,
# OSC title/clipboard and hidden-text sequences, 0x9b/0x9d are their 8-bit
# forms), the bidi overrides that reorder what a line shows, and lone
# surrogates (undecodable JSON escapes, which no terminal encoding takes).
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)


def visible(text: str) -> str:
    """``text`` safe for a terminal: control and escape sequences shown, not run.

    Each unsafe character is written as its escape (``\\x1b``, ``\\u202e``);
    newlines and tabs stay, a CR of a CRLF pair is dropped.
    """
    text = text.replace("\r\n", "\n")
    return UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def tag_of(value: object) -> str:
    """The wire tag of a union variant (``sessionUpdate``, ``type``...)."""
    tag: object = getattr(value, "tag", None)  # a variant kept raw
    if not isinstance(tag, str):
        config: object = getattr(type(value), "__struct_config__", None)
        tag = getattr(config, "tag", None)
    return tag if isinstance(tag, str) else type(value).__name__


def text_of(block: object) -> str:
    """A content block or tool call content as display text."""
    if isinstance(block, v1.TextContent | v2.TextContent):
        return block.text
    if isinstance(block, v1.Content | v2.Content):
        return text_of(block.content)
    if isinstance(block, v1.ResourceLink | v2.ResourceLink):
        return f"[link {block.name}: {block.uri}]"
    if isinstance(block, v1.EmbeddedResource | v2.EmbeddedResource):
        return f"[resource {block.resource.uri}]"
    if isinstance(block, v1.Diff | v2.Diff):
        return f"[diff {block.path}]"
    if isinstance(block, v1.Terminal):
        return f"[terminal {block.terminal_id}]"
    if isinstance(block, v1.ImageContent | v2.ImageContent):
        return "[image]"
    if isinstance(block, v1.AudioContent | v2.AudioContent):
        return "[audio]"
    return f"[{tag_of(block)}]"  # a variant this client does not show


def present(value: object) -> bool:
    return value is not None and not isinstance(value, UnsetType)


def optional(value: T | UnsetType | None) -> T | None:
    """An optional field's value, ``None`` when absent or null."""
    return None if isinstance(value, UnsetType) else value


# -- the screen ----------------------------------------------------------------------


@dataclass
class Shown:
    """What was last printed of a tool call (to print only changes)."""

    title: str | None
    status: str
    content: list[str]


class Screen:
    """Prints a session as it streams, from its :class:`acp_trio.SessionTranscript`.

    Every ``session/update`` is applied to the transcript and then shown; text
    chunks continue the current line.  A tool call is printed again only when
    its title, status or content changed, and the user's prompt echoed back
    by the agent during the turn is not printed a second time.
    """

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.transcript = acp_trio.SessionTranscript()
        self.open_line: acp_trio.TranscriptMessage | None = None
        self.held = 0  # newlines at the end of the streamed text, not yet shown
        self.shown_plan: list[tuple[str, str]] = []
        self.shown_tools: dict[str, Shown] = {}
        self.echo: str | None = None  # the prompt of the running turn
        self.echoed = ""  # user text received during the turn so far
        self.broken = False

    def write(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.out.write(visible(text))  # everything shown may come from the agent
            self.out.flush()
        except BrokenPipeError:  # e.g. piped into `head`: keep the session going
            self.broken = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())

    def line(self, text: str) -> None:
        self.end_stream()
        self.write(text + "\n")

    def end_stream(self) -> None:
        if self.open_line is not None:
            self.write("\n")
            self.open_line = None
            self.held = 0

    def update(self, params: Notification) -> None:
        update: object = params.update
        touched = self.transcript.apply(params)
        kind = tag_of(update)  # by wire tag: class names differ between drafts
        if isinstance(touched, acp_trio.TranscriptMessage):
            self.message(touched, update)
        elif isinstance(touched, acp_trio.ToolCallState):
            self.tool(touched)
        elif kind in ("plan", "plan_update", "plan_removed"):
            self.plan([(e.content, e.status) for e in self.transcript.plan])
        elif kind == "usage_update" and self.transcript.usage is not None:
            usage = self.transcript.usage
            share = f" ({100 * usage.used / usage.size:.1f}%)" if usage.size else ""
            cost = ""
            if usage.cost is not None and not isinstance(usage.cost, UnsetType):
                cost = f", cost {usage.cost.amount:.6f} {usage.cost.currency}"
            self.line(f"usage: {usage.used}/{usage.size} tokens{share}{cost}")
        elif kind == "available_commands_update":
            names = ", ".join("/" + c.name for c in self.transcript.available_commands)
            self.line(f"commands: {names}")
        elif kind == "current_mode_update":
            self.line(f"mode: {self.transcript.current_mode_id}")
        elif kind == "session_info_update":
            if self.transcript.session_info.title is not None:
                self.line(f"title: {self.transcript.session_info.title}")
        elif kind != "config_option_update":  # (config options: nothing to show)
            self.line(f"({kind} update)")

    def message(
        self,
        message: acp_trio.TranscriptMessage,
        update: object,
    ) -> None:
        role = ROLES[message.role]
        indent = "\n" + " " * (len(role) + 2)
        content: object = getattr(update, "content", None)
        chunk = tag_of(update).endswith("_chunk")
        if message.role == "user" and self.is_echo(message, update, chunk):
            return
        if chunk and content is not None:  # continues the message being streamed
            if self.open_line is not message:
                self.end_stream()
                self.write(f"{role}: ")
                self.open_line = message
            # trailing newlines wait for more text: the line ends cleanly
            text = "\n" * self.held + text_of(content)
            shown = text.rstrip("\n")
            self.held = len(text) - len(shown)
            self.write(shown.replace("\n", indent))
        elif present(content):  # a v2 upsert; without content: _meta only
            text = "".join(text_of(b) for b in message.content).rstrip("\n")
            self.line(f"{role}: " + text.replace("\n", indent))

    def is_echo(
        self,
        message: acp_trio.TranscriptMessage,
        update: object,
        chunk: bool,
    ) -> bool:
        """Whether a user message update repeats the prompt this client
        printed: some agents echo the prompt back during the turn."""
        if self.echo is None:
            return False
        content: object = getattr(update, "content", None)
        if chunk and content is not None:
            seen = self.echoed + text_of(content)
        else:
            seen = message.text
        if self.echo.startswith(seen) or self.echo.strip() == seen.strip():
            self.echoed = seen
            return True
        self.echo = None  # not an echo after all: show the message from here
        return False

    def user_prompt(self, text: str, version: int) -> None:
        """The user's own prompt joins the transcript (not every agent echoes it)."""
        if version == 2:  # v2 messages need an id: this one is local to the client
            self.transcript.apply(
                acp_trio.user_message(f"local_{uuid.uuid4().hex}", text)
            )
        else:
            self.transcript.apply(acp_trio.user_text(text))
        self.line(f"you: {text}")
        self.echo, self.echoed = text, ""

    def end_turn(self) -> None:
        self.echo = None

    def tool(self, state: acp_trio.ToolCallState) -> None:
        content = [text_of(c).rstrip("\n") for c in state.content]
        before = self.shown_tools.get(state.tool_call_id)
        self.shown_tools[state.tool_call_id] = Shown(state.title, state.status, content)
        if before is None or (before.title, before.status) != (
            state.title,
            state.status,
        ):
            self.line(
                f"tool {state.tool_call_id}: {state.title or ''} [{state.status}]"
            )
        elif before.content == content:
            return  # nothing visible changed
        new = content
        if before is not None and content[: len(before.content)] == before.content:
            new = content[len(before.content) :]  # appended content only
        for text in new:
            self.line("    " + text.replace("\n", "\n    "))

    def plan(self, entries: list[tuple[str, str]]) -> None:
        """The whole plan the first time, then only the entries that changed."""
        before = self.shown_plan
        self.shown_plan = entries
        changed = [
            i for i, e in enumerate(entries) if i >= len(before) or before[i] != e
        ]
        whole = len(entries) != len(before) or len(changed) == len(entries)
        if whole:
            self.line("plan:")
        for i in range(len(entries)) if whole else changed:
            content, status = entries[i]
            mark = STATUS_MARK.get(status, "?")
            self.line(f"{'  ' if whole else 'plan: '}[{mark}] {content}")

    def cancelled(self) -> None:
        """After sending session/cancel: unfinished tool calls become cancelled."""
        for tool_call_id in self.transcript.mark_cancelled():
            self.tool(self.transcript.tool_calls[tool_call_id])


# -- questions to the user -----------------------------------------------------------


def describe(option: Option) -> str:
    """A permission option with its kind: ``Allow once [allow_once]``."""
    return f"{option.name} [{option.kind}]"


class Asker:
    """Asks the user on the terminal (``/dev/tty``), one question at a time;
    with ``--yes`` answers "allow once" without asking."""

    def __init__(self, screen: Screen, yes: bool) -> None:
        self.screen = screen
        self.yes = yes
        self.lock = trio.Lock()

    async def ask(self, question: str, valid: Callable[[str], bool]) -> str | None:
        """The user's answer on the terminal; ``None`` without a terminal or at EOF."""
        async with self.lock:
            self.screen.end_stream()

            def ask() -> str | None:
                try:
                    tty_in = open("/dev/tty")
                    tty = open("/dev/tty", "w")  # a tty is not seekable: no "r+"
                except OSError:  # no controlling terminal
                    return None
                with tty_in, tty:
                    while True:
                        tty.write(visible(question))
                        tty.flush()
                        answer = tty_in.readline()
                        if not answer:
                            return None
                        if valid(answer.strip()):
                            return answer.strip()

            return await trio.to_thread.run_sync(ask, abandon_on_cancel=True)

    async def choose(self, title: str, options: Sequence[Option]) -> Option | None:
        """The option picked for a permission request (``None``: cancelled)."""
        if self.yes:  # allow once, never "always": --yes grants this one call
            once = [o for o in options if o.kind == "allow_once"]
            reject = [o for o in options if o.kind == "reject_once"]
            if not once and not reject:
                self.screen.line(
                    f"permission: {title}: no allow-once option, cancelled"
                )
                return None
            option = (once or reject)[0]
            self.screen.line(f"permission: {title}: {describe(option)} (--yes)")
            return option
        choices = "  ".join(f"[{i}] {describe(o)}" for i, o in enumerate(options, 1))

        def valid(answer: str) -> bool:
            return answer.isdigit() and 1 <= int(answer) <= len(options)

        answer = await self.ask(f"permission: {title}? {choices} > ", valid)
        if answer is None:
            rejects = [o for o in options if o.kind == "reject_once"]
            if not rejects:
                self.screen.line(f"permission: {title}: no terminal to ask, cancelled")
                return None
            self.screen.line(f"permission: {title}: no terminal to ask, rejected")
            return rejects[0]
        option = options[int(answer) - 1]
        self.screen.line(f"permission: {title}: {describe(option)}")
        return option

    async def confirm(self, what: str) -> bool:
        """Whether the user allows ``what`` (a file write, a command) once."""
        if self.yes:
            self.screen.line(f"allow: {what} (--yes)")
            return True
        answer = await self.ask(
            f"allow: {what}? [y/N] > ", lambda a: a.lower() in ("y", "n", "")
        )
        allowed = answer is not None and answer.lower() == "y"
        if answer is None:
            self.screen.line(f"allow: {what}: no terminal to ask, refused")
        elif not allowed:
            self.screen.line(f"allow: {what}: refused")
        return allowed


# -- the session's directories, as the agent may read and write them --------------------


def refused(message: str, path: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(acp_trio.INVALID_PARAMS, message, {"path": path})


class Workspace:
    """The directories of the session (its cwd and ``--add-dir``s): files the
    agent reads or writes, and terminal cwds, must resolve inside one.

    Symlinks are resolved before the check, so a link inside pointing outside
    is outside.  Reads take regular files only (no FIFO, device) up to
    ``MAX_READ`` bytes; writes ask the user first.
    """

    def __init__(self, roots: Sequence[str], asker: Asker) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.asker = asker

    def inside(self, path: str) -> str:
        """``path`` resolved, if inside a root; else refused (-32602)."""
        if not os.path.isabs(path):
            raise refused("Invalid params: the path must be absolute", path)
        real = os.path.realpath(path)
        for root in self.roots:
            if os.path.commonpath([real, root]) == root:
                return real
        raise refused("Invalid params: outside the session's directories", path)

    async def read(self, path: str, line: int | None, limit: int | None) -> str:
        real = self.inside(path)
        data = await trio.to_thread.run_sync(read_regular, real, path)
        text = data.decode("utf-8", errors="replace")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    async def write(self, path: str, content: str) -> None:
        real = self.inside(path)
        data = content.encode()
        if not await self.asker.confirm(f"write {path} ({len(data)} bytes)"):
            raise acp_trio.RequestError(
                acp_trio.INVALID_REQUEST,
                "Permission denied by the user",
                {"path": path},
            )
        await trio.to_thread.run_sync(write_regular, real, path, data)


def read_regular(real: str, path: str) -> bytes:
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise acp_trio.RequestError(
            v1.ERROR_CODE_RESOURCE_NOT_FOUND, "Resource not found", {"path": path}
        ) from None
    except OSError as exc:
        raise refused(f"Invalid params: {exc.strerror}", path) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refused("Invalid params: not a regular file", path)
        if info.st_size > MAX_READ:
            raise refused(f"Invalid params: larger than {MAX_READ} bytes", path)
        return f.read(MAX_READ)


def write_regular(real: str, path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(real), exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(real, flags | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise refused(f"Invalid params: {exc.strerror}", path) from None
    with os.fdopen(fd, "wb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refused("Invalid params: not a regular file", path)
        f.write(data)


# -- terminals ----------------------------------------------------------------------


@dataclass
class Terminal:
    """One command the agent started: its process group and bounded output."""

    terminal_id: str
    session_id: str
    process: trio.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exited: trio.Event = field(default_factory=trio.Event)

    def keep(self, data: bytes | bytearray) -> None:
        """Append output, dropping the oldest bytes beyond ``limit`` (at a
        character boundary, as the protocol asks)."""
        self.output += data
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            while cut < len(self.output) and self.output[cut] & 0xC0 == 0x80:
                cut += 1  # not inside a UTF-8 character
            del self.output[:cut]
            self.truncated = True

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    @property
    def exit_code(self) -> int | None:
        code = self.process.returncode
        return code if code is not None and code >= 0 else None

    @property
    def signal_name(self) -> str | None:
        code = self.process.returncode
        if code is None or code >= 0:
            return None
        try:
            return signal.Signals(-code).name
        except ValueError:
            return str(-code)


class Terminals:
    """The ``terminal/*`` methods: commands in process groups of their own,
    inside the workspace, each behind a question to the user."""

    def __init__(self, workspace: Workspace, cwd: str) -> None:
        self.workspace = workspace
        self.cwd = cwd
        self.running: dict[str, Terminal] = {}
        self.nursery: trio.Nursery | None = None

    async def create(
        self,
        session_id: str,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        assert self.nursery is not None
        where = self.workspace.inside(cwd) if cwd is not None else self.cwd
        shown = shlex.join([command, *args])
        if not await self.workspace.asker.confirm(f"run {shown} (in {where})"):
            raise acp_trio.RequestError(
                acp_trio.INVALID_REQUEST,
                "Permission denied by the user",
                {"command": command[:200]},
            )
        try:
            process = await trio.lowlevel.open_process(
                [command, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=where,
                env={**os.environ, **env},
                start_new_session=True,  # its own group: killed whole
            )
        except OSError as exc:
            raise acp_trio.RequestError(
                acp_trio.INVALID_PARAMS,
                f"Invalid params: cannot run {command!r}: {exc.strerror}",
            ) from None
        limit = min(output_byte_limit or MAX_TERMINAL_OUTPUT, MAX_TERMINAL_OUTPUT)
        terminal = Terminal(f"term_{uuid.uuid4().hex[:12]}", session_id, process, limit)
        self.running[terminal.terminal_id] = terminal
        self.nursery.start_soon(self.collect, terminal)
        return terminal.terminal_id

    async def collect(self, terminal: Terminal) -> None:
        stdout = terminal.process.stdout
        assert stdout is not None
        async with stdout:
            while data := await stdout.receive_some(65536):
                terminal.keep(data)
        await terminal.process.wait()
        terminal.exited.set()

    def get(self, session_id: str, terminal_id: str) -> Terminal:
        terminal = self.running.get(terminal_id)
        if terminal is None or terminal.session_id != session_id:
            raise acp_trio.RequestError(
                acp_trio.INVALID_PARAMS,
                "Invalid params: no such terminal",
                {"terminalId": terminal_id[:200]},
            )
        return terminal

    async def kill(self, terminal: Terminal) -> None:
        """SIGTERM to the group, then SIGKILL after ``KILL_GRACE`` seconds."""
        terminal.signal_group(signal.SIGTERM)
        with trio.move_on_after(KILL_GRACE):
            await terminal.exited.wait()
        terminal.signal_group(signal.SIGKILL)

    async def release(self, session_id: str, terminal_id: str) -> None:
        terminal = self.get(session_id, terminal_id)
        del self.running[terminal_id]
        if self.nursery is not None:
            self.nursery.start_soon(self.kill, terminal)

    def kill_all(self) -> None:
        for terminal in self.running.values():
            terminal.signal_group(signal.SIGKILL)
        self.running.clear()


# -- the client objects the runtime serves (one class per protocol version) -----------


class ClientV1(v1.Client):
    """Serves a v1 agent: updates, permissions, files and terminals."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent], app: App):
        self.app = app

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.app.screen.update(params)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        title = self.app.tool_title(
            params.tool_call.tool_call_id, params.tool_call.title
        )
        option = await self.app.asker.choose(title, params.options)
        if option is None:
            return v1.RequestPermissionResponse(
                outcome=v1.RequestPermissionOutcomeCancelled()
            )
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=option.option_id)
        )

    async def fs_read_text_file(
        self, params: v1.ReadTextFileRequest
    ) -> v1.ReadTextFileResponse:
        content = await self.app.workspace.read(
            params.path, optional(params.line), optional(params.limit)
        )
        return v1.ReadTextFileResponse(content=content)

    async def fs_write_text_file(
        self, params: v1.WriteTextFileRequest
    ) -> v1.WriteTextFileResponse:
        await self.app.workspace.write(params.path, params.content)
        return v1.WriteTextFileResponse()

    async def terminal_create(
        self, params: v1.CreateTerminalRequest
    ) -> v1.CreateTerminalResponse:
        env = optional(params.env) or []
        terminal_id = await self.app.terminals.create(
            params.session_id,
            params.command,
            list(optional(params.args) or []),
            {e.name: e.value for e in env},
            optional(params.cwd),
            optional(params.output_byte_limit),
        )
        return v1.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, params: v1.TerminalOutputRequest
    ) -> v1.TerminalOutputResponse:
        terminal = self.app.terminals.get(params.session_id, params.terminal_id)
        status = None
        if terminal.exited.is_set():
            status = v1.TerminalExitStatus(
                exit_code=terminal.exit_code, signal=terminal.signal_name
            )
        return v1.TerminalOutputResponse(
            output=terminal.output.decode("utf-8", errors="replace"),
            truncated=terminal.truncated,
            exit_status=status,
        )

    async def terminal_wait_for_exit(
        self, params: v1.WaitForTerminalExitRequest
    ) -> v1.WaitForTerminalExitResponse:
        terminal = self.app.terminals.get(params.session_id, params.terminal_id)
        await terminal.exited.wait()
        return v1.WaitForTerminalExitResponse(
            exit_code=terminal.exit_code, signal=terminal.signal_name
        )

    async def terminal_kill(
        self, params: v1.KillTerminalRequest
    ) -> v1.KillTerminalResponse:
        terminal = self.app.terminals.get(params.session_id, params.terminal_id)
        await self.app.terminals.kill(terminal)
        return v1.KillTerminalResponse()

    async def terminal_release(
        self, params: v1.ReleaseTerminalRequest
    ) -> v1.ReleaseTerminalResponse:
        await self.app.terminals.release(params.session_id, params.terminal_id)
        return v1.ReleaseTerminalResponse()


class ClientV2(v2.Client):
    """Serves a v2 agent: updates and permissions (v2 has no fs or terminal)."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent], app: App):
        self.app = app

    async def session_update(self, params: v2.SessionNotification) -> None:
        self.app.screen.update(params)

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        # 2.0.0-alpha.3 moves the tool call under ``subject`` and adds a title
        call: object = getattr(params, "tool_call", None) or getattr(
            getattr(params, "subject", None), "tool_call", None
        )
        tool_call_id: object = getattr(call, "tool_call_id", None)
        given: object = getattr(params, "title", None) or getattr(call, "title", None)
        title = self.app.tool_title(
            tool_call_id if isinstance(tool_call_id, str) else "?",
            given if isinstance(given, str) else None,
        )
        option = await self.app.asker.choose(title, params.options)
        if option is None:
            return v2.RequestPermissionResponse(
                outcome=v2.RequestPermissionOutcomeCancelled()
            )
        return v2.RequestPermissionResponse(
            outcome=v2.SelectedPermissionOutcome(option_id=option.option_id)
        )


# -- calling the agent (one class per protocol version) -------------------------------


@dataclass(frozen=True)
class McpSpec:
    """An ``--mcp NAME=COMMAND|URL`` value."""

    name: str
    url: str | None = None
    command: str = ""
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setup:
    """What a session is opened with."""

    cwd: str
    additional_directories: list[str]
    mcp: list[McpSpec]


class AgentCalls(Protocol):
    """The calls the app makes, whatever the protocol version."""

    async def new_session(self, setup: Setup) -> str: ...
    async def load_session(self, session_id: str, setup: Setup) -> None: ...
    async def authenticate(self, method_id: str) -> None: ...
    async def prompt(self, session_id: str, text: str) -> str: ...
    async def cancel(self, session_id: str) -> None: ...


def command_path(command: str) -> str:
    return shutil.which(command) or os.path.abspath(command)


class AgentV1:
    def __init__(self, agent: v1.Agent) -> None:
        self.agent = agent

    def servers(self, setup: Setup) -> list[v1.McpServer]:
        servers: list[v1.McpServer] = []
        for spec in setup.mcp:
            if spec.url is not None:
                servers.append(
                    v1.McpServerHttp(name=spec.name, url=spec.url, headers=[])
                )
            else:
                servers.append(
                    v1.McpServerStdio(
                        name=spec.name,
                        command=command_path(spec.command),
                        args=list(spec.args),
                        env=[],
                    )
                )
        return servers

    async def new_session(self, setup: Setup) -> str:
        new = await self.agent.session_new(
            v1.NewSessionRequest(
                cwd=setup.cwd,
                mcp_servers=self.servers(setup),
                additional_directories=setup.additional_directories or msgspec.UNSET,
            )
        )
        return new.session_id

    async def load_session(self, session_id: str, setup: Setup) -> None:
        await self.agent.session_load(
            v1.LoadSessionRequest(
                session_id=session_id,
                cwd=setup.cwd,
                mcp_servers=self.servers(setup),
                additional_directories=setup.additional_directories or msgspec.UNSET,
            )
        )

    async def authenticate(self, method_id: str) -> None:
        await self.agent.authenticate(v1.AuthenticateRequest(method_id=method_id))

    async def prompt(self, session_id: str, text: str) -> str:
        result = await self.agent.session_prompt(
            v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])
        )
        return result.stop_reason

    async def cancel(self, session_id: str) -> None:
        await self.agent.session_cancel(v1.CancelNotification(session_id=session_id))


class AgentV2:
    def __init__(self, agent: v2.Agent) -> None:
        self.agent = agent

    def servers(self, setup: Setup) -> list[v2.McpServer]:
        servers: list[v2.McpServer] = []
        for spec in setup.mcp:
            if spec.url is not None:
                servers.append(
                    v2.McpServerHttp(name=spec.name, url=spec.url, headers=[])
                )
            else:
                servers.append(
                    v2.McpServerStdio(
                        name=spec.name,
                        command=command_path(spec.command),
                        args=list(spec.args),
                        env=[],
                    )
                )
        return servers

    async def new_session(self, setup: Setup) -> str:
        new = await self.agent.session_new(
            v2.NewSessionRequest(
                cwd=setup.cwd,
                mcp_servers=self.servers(setup),
                additional_directories=setup.additional_directories or msgspec.UNSET,
            )
        )
        return new.session_id

    async def load_session(self, session_id: str, setup: Setup) -> None:
        if not hasattr(v2, "LoadSessionRequest"):  # gone in 2.0.0-alpha.3
            raise Failure("--load: this draft of protocol v2 has no session/load")
        await self.agent.session_load(
            v2.LoadSessionRequest(
                session_id=session_id,
                cwd=setup.cwd,
                mcp_servers=self.servers(setup),
                additional_directories=setup.additional_directories or msgspec.UNSET,
            )
        )

    async def authenticate(self, method_id: str) -> None:
        if not hasattr(v2, "AuthenticateRequest"):  # auth/login in 2.0.0-alpha.3
            raise Failure("--auth: this draft of protocol v2 has no authenticate")
        await self.agent.authenticate(v2.AuthenticateRequest(method_id=method_id))

    async def prompt(self, session_id: str, text: str) -> str:
        result = await self.agent.session_prompt(
            v2.PromptRequest(session_id=session_id, prompt=[v2.TextContent(text=text)])
        )
        # 2.0.0-alpha.3 reports the stop reason in a state update instead
        stop_reason: object = getattr(result, "stop_reason", None)
        return stop_reason if isinstance(stop_reason, str) else "(not in the answer)"

    async def cancel(self, session_id: str) -> None:
        # by the method table: 2.0.0-alpha.3 renames CancelNotification
        cancel = v2.AGENT_METHODS["session/cancel"].params
        await self.agent.session_cancel(cancel(session_id=session_id))


# -- authentication ------------------------------------------------------------------


@dataclass
class AuthChoice:
    """An advertised authentication method, whatever its version's shape."""

    id: str
    name: str
    kind: str  # agent, terminal, env_var, or a type this client cannot run
    description: str | None = None
    args: list[str] = field(default_factory=list[str])
    env: dict[str, str] = field(default_factory=dict[str, str])
    variables: list[tuple[str, bool]] = field(
        default_factory=list[tuple[str, bool]]
    )  # (name, optional)

    def line(self) -> str:
        about = f": {self.description}" if self.description else ""
        needs = ", ".join(n for n, _ in self.variables)
        needs = f" (needs {needs})" if needs else ""
        return f"  --auth {self.id}  {self.name} [{self.kind}]{needs}{about}"


def auth_choices(init: Init) -> list[AuthChoice]:
    methods: list[v1.AuthMethod | v2.AuthMethod] = []
    if not isinstance(init.auth_methods, UnsetType):
        methods.extend(init.auth_methods)
    choices: list[AuthChoice] = []
    for m in methods:
        if isinstance(
            m, v1.AuthMethodOther | v2.AuthMethodOther
        ):  # a type unknown here
            name = m.get("name")
            choice = AuthChoice(
                str(m.get("id")), name if isinstance(name, str) else "?", m.tag
            )
            if m.tag == "env_var":  # v1 has no such type; v2's shape, read raw
                choice.variables = env_vars_of(m.get("vars"))
            choices.append(choice)
            continue
        choice = AuthChoice(m.id, m.name, "agent", optional(m.description))
        if isinstance(m, v1.AuthMethodTerminal | v2.AuthMethodTerminal):
            choice.kind = "terminal"
            choice.args = list(optional(m.args) or [])
            choice.env = dict(optional(m.env) or {})
        elif isinstance(m, v2.AuthMethodEnvVar):
            choice.kind = "env_var"
            choice.variables = [(v.name, v.optional is True) for v in m.vars]
        choices.append(choice)
    return choices


def env_vars_of(raw: object) -> list[tuple[str, bool]]:
    """(name, optional) of each well-formed entry of an ``env_var`` method's
    ``vars``, as a v1 agent sends them (codex-acp: ``[{"name": "CODEX_API_KEY"}]``)."""
    found: list[tuple[str, bool]] = []
    entries: list[object] = raw if isinstance(raw, list) else []  # pyright: ignore[reportUnknownVariableType]
    for entry in entries:
        if isinstance(entry, dict):
            fields = cast("dict[str, object]", entry)
            name = fields.get("name")
            if isinstance(name, str):
                found.append((name, fields.get("optional") is True))
    return found


# -- the application ------------------------------------------------------------------


@dataclass
class Options:
    command: list[str]
    prompt: str
    protocol: int | None = None
    yes: bool = False
    load: str | None = None
    add_dir: list[str] = field(default_factory=list[str])
    mcp: list[McpSpec] = field(default_factory=list[McpSpec])
    auth: str | None = None
    timeout: float = 60.0


class NeedsLogin(Exception):
    """The chosen method is a terminal login: run it, then connect again."""

    def __init__(self, choice: AuthChoice) -> None:
        super().__init__(choice.id)
        self.choice = choice


class App:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.screen = Screen()
        self.asker = Asker(self.screen, options.yes)
        self.cwd = os.getcwd()
        self.setup = Setup(self.cwd, options.add_dir, options.mcp)
        self.workspace = Workspace([self.cwd, *options.add_dir], self.asker)
        self.terminals = Terminals(self.workspace, self.cwd)
        self.conn: acp_trio.ClientSideConnection[object] | None = None
        self.step = "starting the agent"
        self.logged_in = False

    def tool_title(self, tool_call_id: str, title: str | UnsetType | None) -> str:
        if isinstance(title, str):
            return title
        known = self.screen.transcript.tool_calls.get(tool_call_id)
        return (known.title if known is not None else None) or tool_call_id

    def offer(
        self,
    ) -> dict[int, Callable[[acp_trio.ClientSideConnection[object]], object]]:
        versions = [self.options.protocol] if self.options.protocol else [1, 2]
        classes = {1: ClientV1, 2: ClientV2}
        return {n: functools.partial(classes[n], app=self) for n in versions}

    @contextlib.contextmanager
    def request(self, what: str) -> Generator[None]:
        """A request that must be answered within ``--timeout`` seconds."""
        self.step = what
        try:
            with trio.fail_after(self.options.timeout):
                yield
        except trio.TooSlowError:
            raise Failure(
                f"{what}: no answer within {self.options.timeout:g} s (--timeout)"
            ) from None

    async def run(self) -> int:
        """Connect, set up the session and run the turn; one more time after
        a terminal login."""
        command = self.options.command
        if shutil.which(command[0]) is None:
            raise Failure(f"{command[0]}: command not found")
        while True:
            outcome = await self.connected(command)
            if isinstance(outcome, int):
                return outcome
            if self.logged_in:
                raise Failure("still not authenticated after the login")
            await self.terminal_login(outcome)
            self.logged_in = True

    async def connected(self, command: list[str]) -> int | AuthChoice:
        """The exit status, or the terminal login to run before starting over."""
        self.conn = None
        try:
            async with acp_trio.spawn_agent(
                command, client=self.offer(), capture_stderr=True
            ) as conn:
                self.conn = conn
                async with trio.open_nursery() as nursery:  # the terminals' tasks
                    self.terminals.nursery = nursery
                    try:
                        return await self.session(conn)
                    except NeedsLogin as login:
                        return login.choice
                    finally:
                        self.terminals.kill_all()
                        nursery.cancel_scope.cancel()
        except OSError as exc:
            if self.conn is not None:
                raise
            # the agent could not be started (what the session raises comes
            # wrapped in the runtime's exception groups)
            raise Failure(f"{command[0]}: {exc.strerror or exc}") from None
        raise AssertionError("unreachable")

    async def initialize(self, conn: acp_trio.ClientSideConnection[object]) -> Init:
        """One ``initialize`` carrying each offered version's fields, so a v1
        agent reads the fs and terminal support a {1, 2} offer advertises."""
        tty = sys.stdin.isatty()  # a terminal login needs one
        requests: list[v1.InitializeRequest | v2.InitializeRequest] = []
        if 1 in self.offer():
            requests.append(
                v1.InitializeRequest(
                    protocol_version=1,
                    client_capabilities=v1.ClientCapabilities(
                        fs=v1.FileSystemCapabilities(
                            read_text_file=True, write_text_file=True
                        ),
                        terminal=True,
                        auth=v1.AuthCapabilities(terminal=tty),
                    ),
                    client_info=v1.Implementation(
                        name=CLIENT_NAME, version=CLIENT_VERSION
                    ),
                )
            )
        if 2 in self.offer():
            # As JSON, converted: a later draft renames clientInfo to info
            # (convert keeps the spelling the version declares).
            info = {"name": CLIENT_NAME, "version": CLIENT_VERSION}
            auth: dict[str, object] = {"terminal": {}} if tty else {}
            requests.append(
                v2.convert(
                    {
                        "protocolVersion": 2,
                        "capabilities": {"auth": auth},
                        "clientInfo": info,
                        "info": info,
                    },
                    v2.InitializeRequest,
                )
            )
        with self.request("initialize"):
            response: Init = await conn.initialize(*requests)
        return response

    async def session(self, conn: acp_trio.ClientSideConnection[object]) -> int:
        init = await self.initialize(conn)
        agent: AgentCalls = (
            AgentV2(conn.agent_v2)
            if conn.protocol_version == 2
            else AgentV1(conn.agent_v1)
        )
        info: object = getattr(init, "agent_info", None) or getattr(init, "info", None)
        name = "(unnamed)"
        if isinstance(info, v1.Implementation | v2.Implementation):
            name = f"{info.name} {info.version}"
        self.screen.line(f"agent: {name}, protocol v{conn.protocol_version}")
        if self.options.auth is not None and not self.logged_in:
            await self.authenticate(agent, init)
        try:
            session_id = await self.open_session(agent)
        except acp_trio.RequestError as exc:
            if exc.code != v1.ERROR_CODE_AUTHENTICATION_REQUIRED or self.logged_in:
                raise
            await self.authenticate(agent, init)  # lists the methods without --auth
            session_id = await self.open_session(agent)
        if not self.options.prompt:
            return 0
        self.screen.user_prompt(self.options.prompt, conn.protocol_version or 1)
        return await self.prompt_turn(agent, session_id)

    async def open_session(self, agent: AgentCalls) -> str:
        try:
            return await self.open_session_with(agent, self.setup)
        except acp_trio.CapabilityError as exc:
            if (
                not self.setup.additional_directories
                or "additionalDirectories" not in str(exc)
            ):
                raise
        # The agent cannot be told of them; its files there are served all the same.
        self.screen.line("note: the agent takes no additional directories (--add-dir)")
        self.setup = Setup(self.setup.cwd, [], self.setup.mcp)
        return await self.open_session_with(agent, self.setup)

    async def open_session_with(self, agent: AgentCalls, setup: Setup) -> str:
        if self.options.load:
            session_id = self.options.load
            self.screen.line(f"session: {session_id} (loading)")
            with self.request("session/load"):
                await agent.load_session(session_id, setup)
            self.screen.line(f"session: {session_id} (loaded)")
            return session_id
        with self.request("session/new"):
            session_id = await agent.new_session(setup)
        self.screen.line(f"session: {session_id}")
        return session_id

    async def authenticate(self, agent: AgentCalls, init: Init) -> None:
        """Run the ``--auth`` method; without one, list the agent's methods."""
        choices = auth_choices(init)
        wanted = self.options.auth
        if wanted is None:
            raise Failure(
                "the agent requires authentication: run again with --auth ID",
                ["the agent's methods:", *(c.line() for c in choices)]
                if choices
                else ["the agent lists no authentication method"],
            )
        choice = next((c for c in choices if c.id == wanted), None)
        if choice is None:
            offered = ", ".join(c.id for c in choices) or "none"
            raise Failure(
                f"--auth {wanted}: not a method of the agent (it offers: {offered})"
            )
        if choice.kind == "terminal":
            raise NeedsLogin(choice)
        if choice.kind not in ("agent", "env_var"):
            raise Failure(
                f"--auth {wanted}: a {choice.kind!r} method, which this client cannot run"
            )
        missing = [
            n for n, opt in choice.variables if not opt and not os.environ.get(n)
        ]
        if missing:
            raise Failure(
                f"--auth {wanted} needs {', '.join(missing)} set in the environment"
            )
        self.screen.line(f"auth: {choice.name}")
        with self.request("authenticate"):
            await agent.authenticate(choice.id)

    async def terminal_login(self, choice: AuthChoice) -> None:
        """The agent command with the method's arguments, on this terminal."""
        self.screen.line(f"auth: {choice.name}: running the agent's login")
        done = await trio.run_process(
            [*self.options.command, *choice.args],
            env={**os.environ, **choice.env},
            check=False,
        )
        if done.returncode != 0:
            raise Failure(
                f"--auth {choice.id}: the login exited with status {done.returncode}"
            )

    async def prompt_turn(self, agent: AgentCalls, session_id: str) -> int:
        interrupted = False
        self.step = "session/prompt"
        async with trio.open_nursery() as nursery:

            async def on_ctrl_c(task_status: trio.TaskStatus[None]) -> None:
                nonlocal interrupted
                with trio.open_signal_receiver(signal.SIGINT) as signals:
                    task_status.started()
                    async for _ in signals:
                        if interrupted:  # the second Ctrl-C: give up waiting
                            raise KeyboardInterrupt
                        interrupted = True
                        self.screen.line("^C: cancelling (Ctrl-C again to quit)")
                        await agent.cancel(session_id)
                        self.screen.cancelled()

            await nursery.start(on_ctrl_c)  # Ctrl-C now cancels the turn
            stop_reason = await agent.prompt(session_id, self.options.prompt)
            nursery.cancel_scope.cancel()
        self.screen.end_turn()
        if stop_reason == "cancelled":
            self.screen.cancelled()
        self.screen.line(f"stop reason: {stop_reason}")
        return 130 if interrupted else 0

    def explain(self, exc: BaseException) -> Failure | None:
        """A known error as a one-line :class:`Failure` (None: a bug, re-raised)."""
        if isinstance(exc, Failure):
            return exc
        if isinstance(exc, acp_trio.ConnectionClosed):
            return self.agent_gone()
        if isinstance(exc, acp_trio.ProtocolVersionError):
            asked = self.options.protocol
            return Failure(
                f"the agent refused protocol v{asked}" if asked else str(exc),
                [str(exc)] if asked else (),
            )
        if isinstance(exc, acp_trio.RequestError):
            return Failure(f"{self.step} failed: {exc}", self.stderr_tail())
        if isinstance(exc, acp_trio.CapabilityError):
            return Failure(f"{self.step}: {exc}")
        return None

    def agent_gone(self) -> Failure:
        process = self.conn.process if self.conn is not None else None
        code = process.returncode if process is not None else None
        if code is None:
            what = "the agent closed the connection"
        elif code < 0:
            what = f"the agent was killed by {signal.Signals(-code).name}"
        else:
            what = f"the agent exited with status {code}"
        return Failure(f"{what} ({self.step})", self.stderr_tail())

    def stderr_tail(self) -> list[str]:
        if self.conn is None or not self.conn.stderr_output:
            return []
        text = self.conn.stderr_output.decode("utf-8", errors="replace")
        lines = text.rstrip("\n").splitlines()[-STDERR_LINES:]
        return ["agent stderr:", *(f"  | {line}" for line in lines)]


# -- command line -------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, no usage block: ``client.py: error: ... (see --help)``."""
        self.exit(2, f"client.py: error: {message} (see --help)\n")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a positive number of seconds"
        )
    return value


def directory(text: str) -> str:
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory")
    return os.path.abspath(text)


def mcp_server(text: str) -> McpSpec:
    name, sep, where = text.partition("=")
    if not sep or not name.strip() or not where.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=COMMAND or NAME=URL")
    if where.startswith(("http://", "https://")):
        return McpSpec(name=name, url=where)
    try:
        command, *args = shlex.split(where)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return McpSpec(name=name, command=command, args=tuple(args))


def parse(argv: list[str]) -> Options:
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    else:
        command = []
    parser = Parser(
        prog="client.py",
        usage="%(prog)s [options] -- AGENT_CMD ...",
        description=(__doc__ or "").splitlines()[0],
    )
    parser.add_argument(
        "--protocol", type=int, choices=(1, 2), help="speak only v1 or v2"
    )
    parser.add_argument(
        "--yes", action="store_true", help="allow once whatever is asked (never always)"
    )
    parser.add_argument("--load", metavar="SESSION_ID", help="load (replay) a session")
    parser.add_argument("--prompt", metavar="TEXT", help="the prompt (default: stdin)")
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        type=directory,
        metavar="DIR",
        help="an additional workspace directory (repeatable)",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        type=mcp_server,
        metavar="NAME=COMMAND|URL",
        help="an MCP server for the session: a command (stdio) or an http(s) URL",
    )
    parser.add_argument("--auth", metavar="ID", help="authenticate with this method")
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="longest wait for each answer but the prompt turn's (default 60)",
    )
    args = parser.parse_args(argv)
    if not command:
        parser.error("the agent command is missing: ... -- AGENT_CMD ...")
    return Options(
        command=command,
        prompt="" if args.prompt is None else args.prompt,
        protocol=args.protocol,
        yes=args.yes,
        load=args.load,
        add_dir=args.add_dir,
        mcp=args.mcp,
        auth=args.auth,
        timeout=args.timeout,
    )


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups."""
    inner: object = getattr(exc, "exceptions", None)  # an exception group's
    if isinstance(inner, tuple):
        for child in inner:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(child, BaseException):
                yield from leaves(child)
    else:
        yield exc


def fail(failure: Failure) -> int:
    print(visible(f"client.py: {failure}"), file=sys.stderr)
    for line in failure.details:
        print(visible(line), file=sys.stderr)
    return failure.status


def main(argv: list[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    if not options.prompt and not sys.stdin.isatty():
        options.prompt = sys.stdin.read()
    elif not options.prompt and not options.load:
        print("type the prompt, then Ctrl-D:", file=sys.stderr)
        options.prompt = sys.stdin.read()
    options.prompt = options.prompt.strip()
    if not options.prompt and not options.load:
        return fail(Failure("empty prompt", status=2))
    app = App(options)
    try:
        return trio.run(app.run)
    except BaseException as group:  # trio's nurseries raise exception groups
        errors = list(leaves(group))
        if any(isinstance(e, KeyboardInterrupt) for e in errors):
            app.screen.line("interrupted")
            return 130
        explained = [app.explain(e) for e in errors]
        known = [f for f in explained if f is not None]
        if len(known) < len(explained):
            raise  # a bug: the traceback is what helps
        app.screen.end_stream()
        return fail(known[0])


if __name__ == "__main__":
    sys.exit(main())
