"""The client side of ACP's stdio transport: run the agent as a subprocess.

::

    async with acp_trio.spawn_agent(["my-agent", "--acp"], client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        ...
    # here stdin was closed, the agent had `grace_period` seconds to exit,
    # then was terminated (and killed if need be), and always reaped

The agent's stderr is passed through by default; ``capture_stderr=True``
collects it into ``conn.stderr_output`` (the last ``STDERR_KEEP`` bytes)
instead.  ``conn.process`` is the :class:`trio.Process`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Final

import trio

from ._client import AgentT, ClientOffer, ClientSideConnection
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._serve import connect_to_agent

__all__ = ["STDERR_KEEP", "spawn_agent"]

#: Bytes of captured stderr kept (the most recent ones).
STDERR_KEEP: Final = 1024 * 1024


@asynccontextmanager
async def spawn_agent(
    command: Sequence[str | os.PathLike[str]],
    client: ClientOffer[AgentT],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    capture_stderr: bool = False,
    grace_period: float = 2.0,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    start_new_session: bool = False,
    unstable: bool = False,
) -> AsyncIterator[ClientSideConnection[AgentT]]:
    """Start the agent ``command`` and connect to it over its stdin/stdout.

    Typed like :func:`~acp_trio.connect_to_agent`: by the client class.

    ``start_new_session=True`` (POSIX) runs the agent in its own session, so a
    Ctrl-C in the client's terminal reaches the client only: it can then send
    ``session/cancel`` and read the agent's ``cancelled`` answer instead of
    losing the agent to the same SIGINT.

    ``unstable=True`` speaks the schema's unstable surface, as for
    :func:`~acp_trio.connect_to_agent`.
    """
    process = await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if capture_stderr else None,
        cwd=cwd,
        env=env,
        start_new_session=start_new_session,
    )
    try:
        async with trio.open_nursery() as nursery:
            assert process.stdin is not None and process.stdout is not None
            stream = trio.StapledStream(process.stdin, process.stdout)
            try:
                async with connect_to_agent(
                    stream,
                    client,
                    max_message_size=max_message_size,
                    unstable=unstable,
                ) as conn:
                    conn.process = process
                    if process.stderr is not None:
                        nursery.start_soon(_collect, process.stderr, conn.stderr_output)
                    yield conn
            finally:
                with trio.CancelScope(shield=True):
                    await _reap(process, grace_period)
                # stderr ends when the process exits, unless its children hold it
                nursery.cancel_scope.deadline = trio.current_time() + grace_period
    finally:
        if process.returncode is None:
            with trio.CancelScope(shield=True):
                await _reap(process, grace_period)


async def _collect(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    async with stream:
        while data := await stream.receive_some(65536):
            into += data
            if len(into) > 2 * STDERR_KEEP:
                del into[:-STDERR_KEEP]
        if len(into) > STDERR_KEEP:
            del into[:-STDERR_KEEP]


async def _reap(process: trio.Process, grace_period: float) -> None:
    if process.stdin is not None:
        await trio.aclose_forcefully(process.stdin)
    with trio.move_on_after(grace_period):
        await process.wait()
        return
    process.terminate()
    with trio.move_on_after(grace_period):
        await process.wait()
        return
    process.kill()
    await process.wait()
