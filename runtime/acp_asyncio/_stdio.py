"""The agent side of ACP's stdio transport on asyncio.

An agent process reads messages on stdin and writes them on stdout; nothing
else may reach stdout.  :func:`serve_agent_stdio` takes the real stdout for
the protocol and points file descriptor 1 at stderr, so a stray ``print``
logs to stderr instead of corrupting the stream::

    # my_agent.py
    import asyncio, acp_asyncio
    asyncio.run(acp_asyncio.serve_agent_stdio({1: EchoAgent}))

On exit file descriptor 1 is stdout again and stdin and stdout are back in
the blocking mode they had (asyncio's pipe transports set ``O_NONBLOCK``, a
flag shared with every process holding the same pipe or terminal).

Unix only; stdin and stdout must be pipes, sockets or terminals (asyncio
cannot wait on a regular file: ``agent < requests.jsonl`` is refused with
:class:`ValueError`).
"""

from __future__ import annotations

import os
import sys

from acp_core import Limits

from ._sides import AgentSideConnection, Offer
from ._wire import PipeWire

__all__ = ["serve_agent_stdio"]


async def serve_agent_stdio(
    agents: Offer,
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> None:
    """Serve the client on stdin/stdout until it closes stdin.

    ``agents``: an agent class (protocol v1) or ``{version: class}``;
    ``unstable``, ``limits`` (:class:`~acp_core.Limits`), ``max_message_size``:
    as for :func:`~acp_asyncio.serve_agent`.
    """
    if sys.platform == "win32":  # pragma: no cover
        raise RuntimeError("serve_agent_stdio is Unix-only")
    conn: AgentSideConnection[object] = AgentSideConnection(
        agents, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    sys.stdout.flush()
    blocking = (os.get_blocking(0), os.get_blocking(1))
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    saved_stdout = os.dup(1)
    try:
        os.dup2(2, 1)  # fd 1 now logs to stderr; the protocol keeps the real stdout
        wire = await PipeWire.open(
            protocol_in, protocol_out, conn, conn.limits.write_buffer_bytes
        )
        await conn._start(wire)  # pyright: ignore[reportPrivateUsage]
        try:
            await conn.wait_closed()
        finally:
            conn.close()
            await conn.wait_closed()
            await wire.wait_closed()
    finally:
        sys.stdout.flush()
        os.dup2(saved_stdout, 1)
        os.close(saved_stdout)
        os.set_blocking(0, blocking[0])
        os.set_blocking(1, blocking[1])
