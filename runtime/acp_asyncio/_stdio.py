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

Unix only; stdin and stdout may be pipes, sockets, terminals or files
(``agent < requests.jsonl > replies.jsonl``: read and written directly).
"""

from __future__ import annotations

from acp_core import Limits, Offer
from acp_host import protocol_stdio

from ._sides import AgentSideConnection
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
    as for :func:`~acp_asyncio.serve_agent`.  Stdio is taken and given back by
    ``acp_host.protocol_stdio``.
    """
    conn: AgentSideConnection[object] = AgentSideConnection(
        agents, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    with protocol_stdio() as fds:
        wire = await PipeWire.open(fds.input, fds.output, conn)
        async with conn._serving(wire):  # pyright: ignore[reportPrivateUsage]
            await conn.wait_closed()
