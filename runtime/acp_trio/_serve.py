"""Running a connection over a stream you already have.

Every connection lives in a nursery: the ``connect_*`` context managers open
one around their body, :func:`serve_agent` runs until the client goes away::

    async with acp_trio.connect_to_agent(stream, client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))

    await acp_trio.serve_agent(stream, {1: MyAgent, 2: MyAgentV2})

Leaving a ``connect_*`` block closes the connection (pending calls fail with
:class:`~acp_trio.ConnectionClosed`, handlers are cancelled); the stream is
closed too.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, overload

import trio
from acp_core._limits import Limits
from acp_core._sides import ClientT, Offer

from ._agent import AgentFactory, AgentOffer, AgentSideConnection
from ._client import AgentT, ClientFactory, ClientOffer, ClientSideConnection
from ._connection import Connection

__all__ = ["connect_to_agent", "connect_to_client", "serve_agent"]


async def serve_agent(
    stream: trio.abc.Stream,
    agents: Offer,
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
    task_status: trio.TaskStatus[AgentSideConnection[Any]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve one client over ``stream`` until it closes the connection.

    ``agents`` is an agent class (protocol v1) or ``{version: class}``; the
    class is built with the connection once ``initialize`` chose the version.

    ``unstable=True`` speaks the schema's unstable surface
    (``acp_schema.vN_unstable``: ``session/fork``, ``nes/*``, ``mcp/*``,
    ``providers/*``, ...); the agent classes then take an
    ``AgentSideConnection[v1_unstable.Client]``.

    ``limits`` bounds what the connection buffers and does for the peer
    (:class:`~acp_trio.Limits`: message size, write buffer, notification
    queue, concurrent requests, batch size, error text; the defaults when
    ``None``); ``max_message_size``, if given, overrides its field of the
    same name.  The same two keywords are taken by
    :func:`connect_to_agent`, :func:`connect_to_client`,
    :func:`~acp_trio.serve_agent_stdio` and :func:`~acp_trio.spawn_agent`.
    """
    conn: AgentSideConnection[Any] = AgentSideConnection(
        stream,
        agents,
        limits=limits,
        max_message_size=max_message_size,
        unstable=unstable,
    )
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(conn.run)
            task_status.started(conn)
    finally:
        await trio.aclose_forcefully(stream)


@overload
def connect_to_agent(
    stream: trio.abc.Stream,
    client: ClientFactory[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
@overload
def connect_to_agent(
    stream: trio.abc.Stream,
    client: Mapping[int, ClientFactory[AgentT]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
# Several versions (factories taking different connection types, which the
# overload above cannot solve): the connection is typed Any.
@overload
def connect_to_agent(  # pyright: ignore[reportOverlappingOverload]
    stream: trio.abc.Stream,
    client: Mapping[int, Callable[[Any], object]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[Any]]: ...
@asynccontextmanager
async def connect_to_agent(
    stream: trio.abc.Stream,
    client: ClientOffer[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AsyncGenerator[ClientSideConnection[AgentT], None]:
    """A :class:`ClientSideConnection` over ``stream``, served while the block runs.

    Typed by the client class: ``client=MyClient`` whose ``__init__`` takes a
    ``ClientSideConnection[v1.Agent]`` yields a connection whose ``agent``
    is a ``v1.Agent``. ``unstable=True`` speaks the unstable surface: take a
    ``ClientSideConnection[v1_unstable.Agent]`` and ``conn.agent.session_fork``
    and the other preview methods are there.  ``limits`` /
    ``max_message_size``: as for :func:`serve_agent`.
    """
    conn = ClientSideConnection(
        stream,
        client,
        limits=limits,
        max_message_size=max_message_size,
        unstable=unstable,
    )
    async with _served(conn, stream):
        yield conn


@overload
def connect_to_client(
    stream: trio.abc.Stream,
    agents: AgentFactory[ClientT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[AgentSideConnection[ClientT]]: ...
@overload
def connect_to_client(
    stream: trio.abc.Stream,
    agents: Mapping[int, AgentFactory[ClientT]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[AgentSideConnection[ClientT]]: ...
# Several versions (factories taking different connection types, which the
# overload above cannot solve): the connection is typed Any.
@overload
def connect_to_client(  # pyright: ignore[reportOverlappingOverload]
    stream: trio.abc.Stream,
    agents: Mapping[int, Callable[[Any], object]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[AgentSideConnection[Any]]: ...
@asynccontextmanager
async def connect_to_client(
    stream: trio.abc.Stream,
    agents: AgentOffer[ClientT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AsyncGenerator[AgentSideConnection[ClientT], None]:
    """An :class:`AgentSideConnection` over ``stream``, served while the block runs.

    Like :func:`serve_agent` (``limits`` too), but the block decides when to stop.
    """
    conn = AgentSideConnection(
        stream,
        agents,
        limits=limits,
        max_message_size=max_message_size,
        unstable=unstable,
    )
    async with _served(conn, stream):
        yield conn


@asynccontextmanager
async def _served(
    conn: Connection, stream: trio.abc.Stream
) -> AsyncGenerator[None, None]:
    """Run ``conn`` in a nursery while the block runs; then close it and ``stream``."""
    async with trio.open_nursery() as nursery:
        await nursery.start(conn.run)
        try:
            yield
        finally:
            conn.close()
            with trio.CancelScope(shield=True):
                # bounded: the writer gets FLUSH_GRACE seconds
                await conn.closed.wait()
                await trio.aclose_forcefully(stream)
