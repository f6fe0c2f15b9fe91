"""Real servers for the remote-transport tests: hypercorn or uvicorn on 127.0.0.1.

bench/http_servers.py starts them (the listening socket bound here and handed
to the server, no port race; stopped by PID); this module serves the apps of
tests/http.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

# appended: a bench module never shadows a test's
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

import http_servers
from http_servers import Served, listening_socket, rss_kib, stop

HERE = Path(__file__).resolve().parent

__all__ = ["Served", "listening_socket", "rss_kib", "serve_command", "serving", "stop"]


@contextmanager
def serving(
    kind: str,
    app: str = "served_app:app",
    env: Mapping[str, str] | None = None,
    sock: socket.socket | None = None,
    options: Sequence[str] = (),
) -> Iterator[Served]:
    """Run ``app`` (module:attribute in tests/http) under ``kind`` (``options`` on
    its command line); yield its ``/acp`` URL."""
    with http_servers.serving(
        kind, app, cwd=HERE, env=env, sock=sock, options=options
    ) as served:
        yield served


@contextmanager
def serve_command(
    agent: Sequence[str],
    *options: str,
    env: Mapping[str, str] | None = None,
    stderr: int | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python -m acp_http serve OPTIONS -- AGENT`` on a socket of 127.0.0.1
    (``--listen fd://N``); its ``/acp`` URL and its process (stopped at the end;
    ``stderr``: as ``subprocess.Popen``'s)."""
    sock = listening_socket()
    fd = sock.fileno()
    port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "acp_http", "serve", "--listen", f"fd://{fd}"]
    process = subprocess.Popen(
        [*argv, *options, "--", *agent],
        pass_fds=[fd],
        env={**os.environ, **(env or {})},
        stderr=stderr,
        start_new_session=True,
    )
    sock.close()
    try:
        yield f"http://127.0.0.1:{port}/acp", process
    finally:
        stop(process)
