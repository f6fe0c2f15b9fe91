"""``check-client``'s side of the wire: one client process, the agent it starts.

:class:`ClientUnderTest` writes a small executable, ``agent``, into the
case's directory (the relay of :mod:`acp_inspect._relay`), listens on a
Unix socket in a short private directory (``acp_host.socket_directory``), and starts the client with ``{agent}`` in its
command line replaced by the executable's path.  When the client starts its
agent, the relay connects: from then on the check is the agent, and the
wire is recorded and checked exactly as ``check`` does for an agent
(:class:`~acp_inspect._driver.PeerUnderTest`: the same budget, timeline,
inspector), the directions swapped.

The client leads a new session and process group (no controlling
terminal: a client that would ask its user on ``/dev/tty`` finds none); its
stdin gets ``stdin`` (then end of file), its stdout and stderr are kept
together, the last ``STDERR_KEEP`` bytes of them.  A second connection (a
client starting its agent again) is noted and closed.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import trio
from acp_host import group_options

from . import _relay
from ._driver import STDERR_KEEP, AgentExited, Budget, PeerUnderTest
from ._message import AGENT, CLIENT
from ._process import reap

__all__ = ["AGENT_PLACEHOLDER", "ClientGone", "ClientUnderTest", "agent_command"]

#: What stands for the agent's command in the client's command line.
AGENT_PLACEHOLDER = "{agent}"


class ClientGone(AgentExited):
    """The client exited, or closed the agent's stdin, while a case waited."""

    def __init__(self, code: int | None, closed: bool) -> None:
        Exception.__init__(
            self,
            f"the client exited ({code}) before answering"
            if code is not None
            else "the client closed the agent's stdin before answering"
            if closed
            else "the client is gone",
        )
        self.code = code


def agent_command(command: Sequence[str], agent: str) -> list[str]:
    """``command`` with ``{agent}`` replaced by ``agent`` wherever it stands
    (a whole argument, or within one: ``--agent={agent}``)."""
    return [arg.replace(AGENT_PLACEHOLDER, agent) for arg in command]


class ClientUnderTest(PeerUnderTest):
    """A running client and the record of what crossed its agent's pipes."""

    OURS = AGENT
    THEIRS = CLIENT
    PEER = "client"
    EOF_NOTE = "the client closed the agent's stdin"

    def __init__(
        self,
        command: Sequence[str],
        *,
        root: Path,
        socket: Path,
        budget: Budget | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes = b"",
    ) -> None:
        super().__init__(command, budget=budget, cwd=cwd, env=env)
        self.root = root
        #: where the relay connects (kept short: see ``acp_host.socket_directory``)
        self.socket = socket
        self.stdin = stdin
        #: set once the client started its agent (the relay connected)
        self.connected = trio.Event()
        #: the client's exit status, once it exited
        self.exit_code: int | None = None
        self._process: trio.Process | None = None
        self._listener: trio.SocketListener | None = None
        self._stream: trio.SocketStream | None = None

    @property
    def returncode(self) -> int | None:
        return self.exit_code

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def gone(self) -> Exception:
        return ClientGone(self.exit_code, self._eof)

    def agent_script(self) -> str:
        """Write the relay's executable; its path."""
        sock = self.socket
        script = self.root / "agent"
        script.write_text(
            "#!/bin/sh\n"
            f"exec {shlex.quote(sys.executable)} {shlex.quote(_relay.__file__)} {shlex.quote(str(sock))}\n"
        )
        script.chmod(0o755)
        return str(script)

    async def run(self, nursery: trio.Nursery) -> None:
        """Listen for the agent, start the client, and their tasks in ``nursery``."""
        agent = self.agent_script()
        sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
        await sock.bind(str(self.socket))
        sock.listen(2)
        self._listener = trio.SocketListener(sock)
        command = agent_command(self.command, agent)
        self.note(f"the client: {shlex.join(command)}")
        self._process = await trio.lowlevel.open_process(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.cwd,
            env=self.env,
            **group_options(start_new_session=True),
        )
        nursery.start_soon(self._feed_stdin)
        nursery.start_soon(self._read_output)
        nursery.start_soon(self._wait_exit)
        nursery.start_soon(self._accept, nursery)

    async def _feed_stdin(self) -> None:
        assert self._process is not None and self._process.stdin is not None
        with trio.move_on_after(10):  # a client that never reads stdin
            try:
                if self.stdin:
                    await self._process.stdin.send_all(self.stdin)
                await self._process.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    async def _accept(self, nursery: trio.Nursery) -> None:
        assert self._listener is not None
        while True:
            try:
                stream = await self._listener.accept()
            except trio.ClosedResourceError:  # the case is over
                return
            if self._stream is not None:
                self.note("the client started a second agent: refused")
                await stream.aclose()
                continue
            self._stream = stream
            self._writer = self._reader = stream
            self.note("the client started its agent")
            self.connected.set()
            nursery.start_soon(self._read_relay)

    async def _read_relay(self) -> None:
        try:
            await self._read_stdout()
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            # the check closed it (the agent exits, the case is over), or it broke
            self._eof = True
            self._arrived.set()

    async def agent_exits(self) -> None:
        """The agent exits: the relay's connection closed (the relay exits at once)."""
        self.note("the agent exits (its connection closed)")
        self._closed = True
        if self._stream is not None:
            await trio.aclose_forcefully(self._stream)

    def interrupt(self) -> None:
        """SIGINT to the client, as a user's Ctrl-C at its terminal."""
        if self._process is not None and self._process.returncode is None:
            self.note("SIGINT to the client (a user's Ctrl-C)")
            os.kill(self._process.pid, signal.SIGINT)

    async def stop(self, grace_period: float) -> None:
        """The agent's connection closed, then the client: stdin closed,
        grace, SIGTERM / SIGKILL to its group; always reaped."""
        if self._stream is not None:
            await trio.aclose_forcefully(self._stream)
        if self._listener is not None:
            await trio.aclose_forcefully(self._listener)
        if self._process is not None:
            await reap(self._process, grace_period)

    async def _read_output(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async with self._process.stdout as out:
            while data := await out.receive_some(65536):
                self.stderr += data
                if len(self.stderr) > 2 * STDERR_KEEP:
                    del self.stderr[:-STDERR_KEEP]

    async def _wait_exit(self) -> None:
        assert self._process is not None
        code = await self._process.wait()
        self.exit_code = code
        self.note(f"the client exited ({code})")
        self.exited.set()
        self._arrived.set()
