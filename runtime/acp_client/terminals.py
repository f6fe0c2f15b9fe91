"""The ``terminal/*`` methods: commands the agent runs, in process groups of their own."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import uuid
from dataclasses import dataclass, field

import acp_trio
import trio

from acp_client.workspace import Workspace

#: Bytes of output a terminal keeps at most (the agent may ask for fewer).
MAX_TERMINAL_OUTPUT = 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when a terminal is killed.
KILL_GRACE = 2.0


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
