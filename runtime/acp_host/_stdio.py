"""The agent's stdio taken for the protocol, without an event loop.

An agent process reads messages on stdin and writes them on stdout; nothing
else may reach stdout.  :func:`protocol_stdio` gives the protocol its own
copies of file descriptors 0 and 1 and points fd 1 at stderr, so a stray
``print`` or a chatty C library logs to stderr instead of corrupting the
stream.  On exit fd 1 is stdout again and stdin and stdout are back in the
blocking mode they had: event loops set ``O_NONBLOCK``, a flag shared with
every process holding the same pipe, socket or terminal.  Every adapter's
``serve_agent_stdio`` runs inside it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["StdioFds", "protocol_stdio"]


@dataclass(frozen=True)
class StdioFds:
    """The protocol's own descriptors: ``input`` (a dup of 0), ``output`` (of 1).

    They belong to whoever uses them (an adapter's transport closes them).
    """

    input: int
    output: int


@contextmanager
def protocol_stdio() -> Generator[StdioFds, None, None]:
    """Take stdin/stdout for the protocol while the block runs (Unix only).

    Inside, fd 1 is stderr; on exit it is stdout again and the blocking
    modes of fds 0 and 1 are restored (recorded before any event loop
    touched them: when stdin and stdout are one file description, a
    terminal or a socket, a per-stream restore would leave it non-blocking).
    """
    if sys.platform == "win32":  # pragma: no cover
        raise RuntimeError(
            "serve_agent_stdio is Unix-only; on Windows use serve_agent over a socket"
        )
    sys.stdout.flush()
    blocking = (os.get_blocking(0), os.get_blocking(1))
    fds = StdioFds(os.dup(0), os.dup(1))
    saved_stdout = os.dup(1)
    try:
        os.dup2(2, 1)  # fd 1 now logs to stderr; the protocol keeps the real stdout
        yield fds
    finally:
        sys.stdout.flush()
        os.dup2(saved_stdout, 1)
        os.close(saved_stdout)
        os.set_blocking(0, blocking[0])
        os.set_blocking(1, blocking[1])
