"""ASGI servers in processes of their own on 127.0.0.1, for bench/http_bench.py and tests/http.

The caller binds the listening socket (an ephemeral port) and hands its file
descriptor to the server process, so there is no port race and no wait for
readiness: connections queue in the backlog until the server accepts them.
Each server runs in a process group of its own and is stopped by its PID.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "SERVERS",
    "Served",
    "cpu_seconds",
    "listening_socket",
    "rss_kib",
    "serving",
    "stop",
]

#: server kind -> the command serving ASGI app ``APP`` from socket ``FD``
SERVERS: Mapping[str, Sequence[str]] = {
    "hypercorn-trio": ["-m", "hypercorn", "-k", "trio", "--bind", "fd://{fd}", "{app}"],
    "hypercorn-asyncio": [
        "-m",
        "hypercorn",
        "-k",
        "asyncio",
        "--bind",
        "fd://{fd}",
        "--log-level",
        "warning",
        "{app}",
    ],
    "uvicorn": ["-m", "uvicorn", "--fd", "{fd}", "--log-level", "warning", "{app}"],
}


def listening_socket() -> socket.socket:
    """A TCP socket listening on an ephemeral port of 127.0.0.1."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    return sock


class Served(str):
    """The ``/acp`` URL of a running server, with the server's PID (its process group)
    and its process."""

    pid: int
    process: subprocess.Popen[bytes]


def _group_stats(group: int) -> list[tuple[str, list[str]]]:
    """``(pid, fields of /proc/PID/stat after the name)`` of each process of
    process group ``group`` (the server and its workers: hypercorn runs its
    worker in a child process)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a process that ended meanwhile
        if len(fields) > 12 and int(fields[2]) == group:
            found.append((entry, fields))
    if not found:
        raise RuntimeError(f"no process in group {group}")
    return found


def rss_kib(group: int) -> int:
    """The resident memory (KiB) of process group ``group``."""
    total = 0
    for pid, _ in _group_stats(group):
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a process that ended meanwhile
    return total


def cpu_seconds(group: int) -> float:
    """The CPU time (user and system, seconds) process group ``group`` used so far."""
    ticks = sum(int(f[11]) + int(f[12]) for _, f in _group_stats(group))
    return ticks / os.sysconf("SC_CLK_TCK")


@contextmanager
def serving(
    kind: str,
    app: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    sock: socket.socket | None = None,
    options: Sequence[str] = (),
) -> Iterator[Served]:
    """Run ``app`` (module:attribute, imported from ``cwd``) under ``kind``; its ``/acp`` URL.

    ``env`` is added to this process's environment; ``options`` to the
    server's command line (hypercorn's ``--certfile``, ...).
    """
    sock = sock or listening_socket()
    fd = sock.fileno()
    port = sock.getsockname()[1]
    command = [a.format(fd=fd, app=app) for a in SERVERS[kind]]
    argv = [sys.executable, *command[:-1], *options, command[-1]]
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        pass_fds=[fd],
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    sock.close()
    served = Served(f"http://127.0.0.1:{port}/acp")
    served.pid = process.pid
    served.process = process
    try:
        yield served
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL, the server's process group (by its PID)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
