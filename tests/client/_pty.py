"""``acp-client`` in a pseudo-terminal (the ``pty`` module): what a person sees."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
CLIENT = [PYTHON, "-m", "acp_client"]
SCRIPTED = [PYTHON, str(Path(__file__).with_name("scripted_agent.py"))]
ECHO = [PYTHON, "-m", "acp_echo", "--chunk-delay", "0"]
TIMEOUT = 60.0


class Pty:
    """A process on a pseudo-terminal of its own (its controlling terminal)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None):
        environ = {**os.environ, **(env or {}), "TERM": "dumb"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, environ)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.seen = b""  # everything read, CRLF as LF
        self.pos = 0  # where the next expect() looks from
        self.status: int | None = None

    def text(self) -> str:
        return self.seen.decode(errors="replace")

    def read_some(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], left)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the other side closed
            data = b""
        if not data:
            return False
        self.seen += data.replace(b"\r\n", b"\n")
        return True

    def expect(self, text: str, timeout: float = TIMEOUT) -> None:
        """Read until ``text`` appears after the previous match."""
        deadline = time.monotonic() + timeout
        wanted = text.encode()
        while (found := self.seen.find(wanted, self.pos)) < 0:
            if not self.read_some(deadline):
                raise AssertionError(f"{text!r} not seen in:\n{self.text()}")
        self.pos = found + len(wanted)

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = TIMEOUT) -> int:
        """The exit status (``-N`` for a signal); reads the output to the end."""
        deadline = time.monotonic() + timeout
        while self.status is None:
            self.read_some(min(deadline, time.monotonic() + 0.1))
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                raise AssertionError(f"still running:\n{self.text()}")
        while self.read_some(time.monotonic() + 0.2):
            pass
        return self.status

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.status = -9
        os.close(self.fd)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process not yet ended (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
