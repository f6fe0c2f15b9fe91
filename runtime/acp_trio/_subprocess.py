"""The client side of ACP's stdio transport: run the agent as a subprocess.

::

    async with acp_trio.spawn_agent(["my-agent", "--acp"], client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        ...
    # here stdin was closed, the agent had `grace_period` seconds to exit,
    # then its whole process group was terminated (and killed if need be),
    # and the agent was always reaped

The agent runs in a process group of its own (POSIX), so that everything it
started (an npm wrapper's real agent, MCP servers, tools) ends with it: on
exit the client closes the agent's stdin and gives it ``grace_period``
seconds to exit; then, if the agent or anything left in its group is still
running, the group gets SIGTERM, another ``grace_period``, and SIGKILL.  A
process that left the group (``setsid``, a daemon) is out of reach.

The agent's stderr is passed through by default; ``capture_stderr=True``
collects it into ``conn.stderr_output`` (the last ``STDERR_KEEP`` bytes)
instead.  ``conn.process`` is the :class:`trio.Process`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from math import inf
from typing import Any, overload

import trio
from acp_core._limits import Limits
from acp_core._sides import normalize_offer
from acp_host import (
    GROUP_POLL,
    STDERR_KEEP,
    AwaitExit,
    ShutdownPlan,
    StderrTail,
    group_alive,
    group_options,
)

from ._client import AgentT, ClientFactory, ClientOffer, ClientSideConnection
from ._serve import connect_to_agent

__all__ = ["GROUP_POLL", "STDERR_KEEP", "group_alive", "spawn_agent"]


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
# Several versions (factories taking different connection types, which the
# overload above cannot solve): the connection is typed Any.
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

    Typed like :func:`~acp_trio.connect_to_agent`: by the client class.

    The agent is the leader of a new process group (POSIX): when the block
    ends, its stdin is closed, it has ``grace_period`` seconds to exit, then
    the group gets SIGTERM, ``grace_period`` more seconds, and SIGKILL; the
    agent is always reaped.  So nothing the agent started outlives the client,
    and a pipe held by a grandchild (the agent's stderr, passed through to a
    ``client | cat``) does not keep the client's own output open.  Being
    outside the client's foreground group, the agent no longer receives a
    Ctrl-C typed in the client's terminal: the client can send
    ``session/cancel`` and read the agent's ``cancelled`` answer instead.

    ``start_new_session=True`` (POSIX) makes that group a new session as well:
    the agent is also detached from the client's controlling terminal (no
    ``/dev/tty``, no SIGHUP when the terminal closes).  Either way the group
    is signalled on exit.  (Python 3.10 has no ``process_group``: there the
    agent always gets a new session.)

    ``unstable=True`` speaks the schema's unstable surface, as for
    :func:`~acp_trio.connect_to_agent`; ``limits`` (:class:`~acp_trio.Limits`)
    and ``max_message_size`` bound the connection as for
    :func:`~acp_trio.serve_agent`.
    """
    # an offer no connection can be made of (a version that does not exist or
    # cannot be loaded) fails before an agent was started for nothing
    normalize_offer(client, "client", unstable=unstable)
    group = group_options(start_new_session)
    process = await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if capture_stderr else None,
        cwd=cwd,
        env=env,
        **group,
    )
    # The child is its group's leader: pgid == pid (set before it ran exec).
    pgid = process.pid if group else None
    try:
        async with trio.open_nursery() as nursery:
            assert process.stdin is not None and process.stdout is not None
            stream = trio.StapledStream(process.stdin, process.stdout)
            try:
                async with connect_to_agent(
                    stream,
                    client,
                    limits=limits,
                    max_message_size=max_message_size,
                    unstable=unstable,
                ) as conn:
                    conn.process = process
                    if process.stderr is not None:
                        nursery.start_soon(_collect, process.stderr, conn.stderr_output)
                    yield conn
            finally:
                with trio.CancelScope(shield=True):
                    await _reap(process, pgid, grace_period)
                # stderr ends when the group is gone, unless a process that
                # left the group holds it
                nursery.cancel_scope.deadline = trio.current_time() + grace_period
    finally:
        if process.returncode is None:
            with trio.CancelScope(shield=True):
                await _reap(process, pgid, grace_period)


async def _collect(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    tail = StderrTail(into)
    async with stream:
        while data := await stream.receive_some(65536):
            tail.feed(data)
    tail.close()


async def _reap(process: trio.Process, pgid: int | None, grace_period: float) -> None:
    """Carry out :class:`acp_host.ShutdownPlan` with trio's waits."""

    async def close_input() -> None:
        if process.stdin is not None:
            await trio.aclose_forcefully(process.stdin)

    async def await_exit(step: AwaitExit) -> None:
        with trio.move_on_after(inf if step.timeout is None else step.timeout):
            await process.wait()
            # polled: no event tells the exit of a process not our child
            while step.group and pgid is not None and group_alive(pgid):  # noqa: ASYNC110
                await trio.sleep(GROUP_POLL)

    await ShutdownPlan(pgid, grace_period).carry_out(
        process, await_exit=await_exit, close_input=close_input
    )
