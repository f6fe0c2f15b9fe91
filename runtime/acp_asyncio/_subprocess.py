"""The client side of ACP's stdio transport on asyncio: run the agent as a subprocess.

::

    async with acp_asyncio.spawn_agent(["my-agent", "--acp"], client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    # stdin closed, `grace_period` for the agent to exit, then its whole process
    # group SIGTERMed (and SIGKILLed if need be); the agent is always reaped

The same process-group rules as :func:`acp_trio.spawn_agent`: the agent leads
a process group of its own (POSIX), so everything it started ends with it.
The pipes are the connection's own (``os.pipe``, read and written by
asyncio's pipe transports); ``conn.process`` is the
:class:`asyncio.subprocess.Process` (its ``stdin``/``stdout`` are ``None``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, overload

from acp_core import Limits
from acp_core._sides import AgentT
from acp_host import (
    GROUP_POLL,
    STDERR_KEEP,
    AwaitExit,
    ShutdownPlan,
    StderrTail,
    group_alive,
    group_options,
)

from ._sides import ClientFactory, ClientOffer, ClientSideConnection
from ._wire import PipeWire

__all__ = ["GROUP_POLL", "STDERR_KEEP", "group_alive", "spawn_agent"]


class _Collect(asyncio.Protocol):
    """The agent's stderr into a :class:`acp_host.StderrTail`."""

    def __init__(self, into: bytearray) -> None:
        self.tail = StderrTail(into)
        self.done = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.tail.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.tail.close()
        if not self.done.done():
            self.done.set_result(None)


@overload
def spawn_agent(
    command: Sequence[str | os.PathLike[str]],
    client: ClientFactory[AgentT],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    capture_stderr: bool = False,
    grace_period: float = 2.0,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    start_new_session: bool = False,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
@overload
def spawn_agent(
    command: Sequence[str | os.PathLike[str]],
    client: Mapping[int, ClientFactory[AgentT]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    capture_stderr: bool = False,
    grace_period: float = 2.0,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    start_new_session: bool = False,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
@overload
def spawn_agent(  # pyright: ignore[reportOverlappingOverload]
    command: Sequence[str | os.PathLike[str]],
    client: Mapping[int, Callable[[Any], object]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    capture_stderr: bool = False,
    grace_period: float = 2.0,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    start_new_session: bool = False,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[Any]]: ...
@asynccontextmanager
async def spawn_agent(
    command: Sequence[str | os.PathLike[str]],
    client: ClientOffer[AgentT],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    capture_stderr: bool = False,
    grace_period: float = 2.0,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    start_new_session: bool = False,
    unstable: bool = False,
) -> AsyncGenerator[ClientSideConnection[AgentT], None]:
    """Start the agent ``command`` and connect to it over its stdin/stdout.

    Typed like :func:`~acp_asyncio.connect_to_agent`: by the client class.
    On leaving the block: the connection is closed (stdin with it), the
    agent has ``grace_period`` seconds to exit, then its process group gets
    SIGTERM, ``grace_period`` more seconds, and SIGKILL; it is always
    reaped.  ``start_new_session=True`` also detaches it from the
    controlling terminal (Python 3.10 always does: it has no
    ``process_group``).  ``capture_stderr=True`` keeps the agent's stderr
    in ``conn.stderr_output`` (the last ``STDERR_KEEP`` bytes) instead of
    passing it through.  ``limits``, ``max_message_size``, ``unstable``: as
    for :func:`~acp_asyncio.serve_agent`.
    """
    conn = ClientSideConnection(
        client, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    group = group_options(start_new_session)
    # the connection's own pipes, read and written by asyncio's pipe transports
    agent_out, from_agent = os.pipe()
    agent_in, to_agent = os.pipe()
    err_r, err_w = os.pipe() if capture_stderr else (-1, -1)
    ours = [agent_out, to_agent, err_r]  # closed here unless a transport took them
    try:
        process = await asyncio.create_subprocess_exec(
            *[os.fspath(c) for c in command],
            stdin=agent_in,
            stdout=from_agent,
            stderr=err_w if capture_stderr else None,
            cwd=cwd,
            env=env,
            **group,
        )
    except BaseException:
        _close(ours)
        raise
    finally:
        _close([agent_in, from_agent, err_w])
    pgid = process.pid if group else None
    collector = _Collect(conn.stderr_output)
    try:
        if capture_stderr:
            ours.remove(err_r)
            await asyncio.get_running_loop().connect_read_pipe(
                lambda: collector, os.fdopen(err_r, "rb", buffering=0)
            )
        ours.clear()  # PipeWire.open takes them
        wire = await PipeWire.open(agent_out, to_agent, conn)
        conn.process = process
        async with conn._serving(wire):  # pyright: ignore[reportPrivateUsage]
            yield conn
    finally:  # the connection closed the agent's stdin: CloseInput is done
        _close(ours)
        await asyncio.shield(_reap(process, pgid, grace_period))
        if capture_stderr:
            # stderr ends when the group is gone, unless a process that
            # left the group holds it
            await asyncio.wait({collector.done}, timeout=grace_period)


def _close(fds: list[int]) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


async def _reap(
    process: asyncio.subprocess.Process, pgid: int | None, grace_period: float
) -> None:
    """Carry out :class:`acp_host.ShutdownPlan` with asyncio's waits."""

    async def gone(group: bool) -> None:
        await process.wait()
        # polled: no event tells the exit of a process not our child
        while group and pgid is not None and group_alive(pgid):  # noqa: ASYNC110
            await asyncio.sleep(GROUP_POLL)

    async def await_exit(step: AwaitExit) -> None:
        try:
            await asyncio.wait_for(gone(step.group), step.timeout)
        except asyncio.TimeoutError:
            pass

    await ShutdownPlan(pgid, grace_period).carry_out(process, await_exit=await_exit)
