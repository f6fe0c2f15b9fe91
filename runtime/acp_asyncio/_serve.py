"""Running a connection over a stream pair you already have.

The ``connect_*`` context managers serve the connection while their block
runs; :func:`serve_agent` runs until the client goes away::

    reader, writer = await asyncio.open_connection("localhost", 8765)
    async with acp_asyncio.connect_to_agent(reader, writer, client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))

    await acp_asyncio.serve_agent(reader, writer, {1: MyAgent, 2: MyAgentV2})

Leaving a ``connect_*`` block closes the connection (pending calls fail with
:class:`~acp_core.ConnectionClosed`, handler tasks are cancelled) and the
writer.  Both ends in one process, over a socket pair (this runs)::

    >>> import asyncio, socket
    >>> import acp_asyncio
    >>> from acp_schema import v1
    >>> class Agent:
    ...     def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
    ...         pass
    ...     async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
    ...         return v1.InitializeResponse(protocol_version=1)
    >>> class Client:
    ...     def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
    ...         pass
    >>> async def main() -> int:
    ...     ours, theirs = socket.socketpair()
    ...     agent_end = await asyncio.open_connection(sock=theirs)
    ...     client_end = await asyncio.open_connection(sock=ours)
    ...     async with acp_asyncio.connect_to_client(*agent_end, Agent):
    ...         async with acp_asyncio.connect_to_agent(*client_end, Client) as conn:
    ...             init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    ...             return init.protocol_version
    >>> asyncio.run(main())
    1
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, overload

from acp_core import Limits
from acp_core._sides import AgentT, ClientT, Offer

from ._sides import (
    AgentFactory,
    AgentOffer,
    AgentSideConnection,
    ClientFactory,
    ClientOffer,
    ClientSideConnection,
)
from ._wire import StreamWire

__all__ = ["connect_to_agent", "connect_to_client", "serve_agent"]


async def serve_agent(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    agents: Offer,
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> None:
    """Serve one client over ``reader`` / ``writer`` until it closes the connection.

    ``agents`` is an agent class (protocol v1) or ``{version: class}``; the
    class is built with the connection once ``initialize`` chose the version.
    ``unstable=True`` speaks the schema's unstable surface; ``limits``
    (:class:`~acp_core.Limits`) bounds what the connection buffers and does
    for the peer, ``max_message_size`` overrides its field of that name.
    """
    conn: AgentSideConnection[Any] = AgentSideConnection(
        agents, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    async with conn._serving(StreamWire(reader, writer, conn)):  # pyright: ignore[reportPrivateUsage]
        await conn.wait_closed()


@overload
def connect_to_agent(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    client: ClientFactory[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
@overload
def connect_to_agent(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    client: Mapping[int, ClientFactory[AgentT]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
@overload
def connect_to_agent(  # pyright: ignore[reportOverlappingOverload]
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    client: Mapping[int, Callable[[Any], object]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[ClientSideConnection[Any]]: ...
@asynccontextmanager
async def connect_to_agent(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    client: ClientOffer[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AsyncGenerator[ClientSideConnection[AgentT], None]:
    """A :class:`ClientSideConnection` over ``reader`` / ``writer``, served while the block runs.

    Typed by the client class: ``client=MyClient`` whose ``__init__`` takes a
    ``ClientSideConnection[v1.Agent]`` yields a connection whose ``agent``
    is a ``v1.Agent``.  ``limits`` / ``max_message_size`` / ``unstable``: as
    for :func:`serve_agent`.
    """
    conn = ClientSideConnection(
        client, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    async with conn._serving(StreamWire(reader, writer, conn)):  # pyright: ignore[reportPrivateUsage]
        yield conn


@overload
def connect_to_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    agents: AgentFactory[ClientT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[AgentSideConnection[ClientT]]: ...
@overload
def connect_to_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    agents: Mapping[int, AgentFactory[ClientT]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[AgentSideConnection[ClientT]]: ...
@overload
def connect_to_client(  # pyright: ignore[reportOverlappingOverload]
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    agents: Mapping[int, Callable[[Any], object]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AbstractAsyncContextManager[AgentSideConnection[Any]]: ...
@asynccontextmanager
async def connect_to_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    agents: AgentOffer[ClientT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AsyncGenerator[AgentSideConnection[ClientT], None]:
    """An :class:`AgentSideConnection` over ``reader`` / ``writer``, served while the block runs.

    Like :func:`serve_agent`, but the block decides when to stop.
    """
    conn = AgentSideConnection(
        agents, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    async with conn._serving(StreamWire(reader, writer, conn)):  # pyright: ignore[reportPrivateUsage]
        yield conn
