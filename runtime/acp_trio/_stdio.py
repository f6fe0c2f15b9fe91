"""The agent side of ACP's stdio transport.

An agent process reads messages on stdin and writes them on stdout; nothing
else may reach stdout.  :func:`serve_agent_stdio` takes the real stdout for
the protocol and points file descriptor 1 at stderr, so a stray ``print`` or
a chatty C library logs to stderr instead of corrupting the stream::

    # my_agent.py
    import trio, acp_trio
    trio.run(acp_trio.serve_agent_stdio, {1: EchoAgent, 2: EchoAgentV2})

On exit (stdin closed, or an error) file descriptor 1 is stdout again and
stdin and stdout are back in the blocking mode they had before (trio puts
them in non-blocking mode, a flag shared with every process holding the same
pipe, socket or terminal).

Unix only: it uses :class:`trio.lowlevel.FdStream`, which trio does not
offer on Windows (where pipes would need a thread per direction); there it
raises :class:`RuntimeError`.  On Windows serve an agent over a socket with
:func:`~acp_trio.serve_agent`.
"""

from __future__ import annotations

from typing import Any

import trio
from acp_core import Limits, Offer
from acp_host import protocol_stdio

from ._serve import serve_agent
from ._sides import AgentSideConnection

__all__ = ["serve_agent_stdio"]


async def serve_agent_stdio(
    agents: Offer,
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
    task_status: trio.TaskStatus[AgentSideConnection[Any]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the client on stdin/stdout until it closes stdin.

    ``agents``: an agent class (protocol v1) or ``{version: class}``;
    ``unstable``, ``limits`` (:class:`~acp_trio.Limits`), ``max_message_size``:
    as for :func:`~acp_trio.serve_agent`.  Stdio is taken and given back by
    ``acp_host.protocol_stdio``.
    """
    with protocol_stdio() as fds:
        stream = trio.StapledStream(
            trio.lowlevel.FdStream(fds.output), trio.lowlevel.FdStream(fds.input)
        )
        await serve_agent(
            stream,
            agents,
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
            task_status=task_status,
        )
