"""The ``terminal/*`` methods: commands the agent runs, in process groups of their own.

A ``command`` without ``args`` is a shell command line, as agents send them
(``"mkdir -p sub && ls -la"``): it runs through the user's shell (``$SHELL -c``,
else ``/bin/sh -c``), as editors do; with ``args`` the program runs without a
shell.  Bounded: ``MAX_TERMINALS`` at once, ``MAX_TERMINAL_OUTPUT`` bytes of
output kept per terminal.  Every terminal's process group, released or not, is
killed before the client exits (``kill_all``).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from math import inf

import acp_trio
import trio
from acp_host import GROUP_POLL, AwaitExit, ShutdownPlan, group_alive, signal_group

from acp_client.grants import Grants
from acp_client.workspace import Workspace

#: Bytes of output a terminal keeps at most (the agent may ask for fewer).
MAX_TERMINAL_OUTPUT = 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when a terminal is killed.
KILL_GRACE = 2.0
#: Terminals alive at once at most (released ones count until they exit, and
#: one being created counts from its check on: the question and the start
#: are awaited, and concurrent creates must not all pass the check).
MAX_TERMINALS = 16


def user_shell(environ: Mapping[str, str]) -> str:
    """The user's shell: ``$SHELL`` when it is an absolute path, else ``/bin/sh``."""
    shell = environ.get("SHELL", "")
    return shell if os.path.isabs(shell) else "/bin/sh"


def program_of(command: str, args: list[str] | None, shell: str) -> list[str]:
    """The argv a ``terminal/create`` runs: a shell command line without ``args``,
    the program itself with them."""
    if not args:
        return [shell, "-c", command]
    return [command, *args]


@dataclass(eq=False)  # by identity: kept in a set
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
        signal_group(self.process.pid, signum)

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

    def __init__(self, workspace: Workspace, cwd: str, grants: Grants) -> None:
        self.workspace = workspace
        self.cwd = cwd
        self.grants = grants
        self.running: dict[str, Terminal] = {}
        self.released: set[Terminal] = set()  # until they exit: killed at exit too
        self.starting = 0  # creates past the bound's check, not running yet
        self.nursery: trio.Nursery | None = None

    async def create(
        self,
        session_id: str,
        command: str,
        args: list[str] | None,
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        assert self.nursery is not None
        where = self.workspace.inside(cwd) if cwd is not None else self.cwd
        if len(self.running) + len(self.released) + self.starting >= MAX_TERMINALS:
            raise acp_trio.RequestError(
                acp_trio.INVALID_REQUEST,
                f"Invalid request: {MAX_TERMINALS} terminals at once at most",
                {"command": command[:200]},
            )
        self.starting += 1  # reserved: counted from here
        try:
            return await self._start(
                session_id, command, args, env, where, output_byte_limit
            )
        finally:
            self.starting -= 1

    async def _start(
        self,
        session_id: str,
        command: str,
        args: list[str] | None,
        env: dict[str, str],
        where: str,
        output_byte_limit: int | None,
    ) -> str:
        """Ask, then start the terminal's process (its room reserved)."""
        assert self.nursery is not None
        argv = program_of(command, args, user_shell(os.environ))
        if args:
            what = f"run {shlex.join(argv)} (in {where})"
        else:
            what = f"run {command!r} via {argv[0]} -c (in {where})"
        lines = [shlex.join(argv), " ".join(argv)] if args else [command]
        covered = self.grants.command(session_id, lines)
        if covered is not None:
            self.workspace.asker.screen.line(f"{what}: allowed for {covered}")
        elif not await self.workspace.asker.confirm(what):
            raise acp_trio.RequestError(
                acp_trio.INVALID_REQUEST,
                "Permission denied by the user",
                {"command": command[:200]},
            )
        try:
            process = await trio.lowlevel.open_process(
                argv,
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
                f"Invalid params: cannot run {argv[0]!r}: {exc.strerror}",
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
        """SIGTERM to the group, then SIGKILL after ``KILL_GRACE`` seconds:
        ``acp_host.ShutdownPlan`` from its SIGTERM on, as every child the
        runtime starts is ended (the terminal's own task reaps it)."""

        async def await_exit(step: AwaitExit) -> None:
            with trio.move_on_after(inf if step.timeout is None else step.timeout):
                await terminal.exited.wait()
                # polled: no event tells the exit of a process not our child
                while step.group and group_alive(terminal.process.pid):  # noqa: ASYNC110
                    await trio.sleep(GROUP_POLL)

        plan = ShutdownPlan(terminal.process.pid, KILL_GRACE, polite=False)
        await plan.carry_out(terminal.process, await_exit=await_exit)

    async def release(self, session_id: str, terminal_id: str) -> None:
        terminal = self.get(session_id, terminal_id)
        del self.running[terminal_id]
        if not terminal.exited.is_set():
            self.released.add(terminal)
        if self.nursery is not None:
            self.nursery.start_soon(self.end, terminal)

    async def end(self, terminal: Terminal) -> None:
        """A released terminal: killed, then forgotten once it exited."""
        await self.kill(terminal)
        await terminal.exited.wait()
        self.released.discard(terminal)

    def kill_all(self) -> None:
        """SIGKILL to every terminal's group, released or not (at exit: a
        released one may still be in its grace period)."""
        for terminal in [*self.running.values(), *self.released]:
            terminal.signal_group(signal.SIGKILL)
        self.running.clear()
        self.released.clear()
