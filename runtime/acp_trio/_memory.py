"""An agent and a client in one process, joined by the in-memory seam.

:func:`memory_stream_pair` gives two :class:`MemoryStream` ends, each a
:class:`trio.abc.Stream` that :func:`~acp_trio.serve_agent`,
:func:`~acp_trio.connect_to_agent` and :func:`~acp_trio.connect_to_client`
take.  The bytes stay in the process (``acp_core``'s :class:`BytePipe`, one
per direction), with a pipe's bounds: ``capacity`` bytes each way, then the
writer waits for its reader; no socket, no thread.

:func:`connect_in_memory` does the whole join: the agent served in the
background, the client's connection yielded::

    async with acp_trio.connect_in_memory(MyAgent, MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, overload

import trio
from acp_core import (
    DEFAULT_SEAM_CAPACITY,
    AgentT,
    Limits,
    Offer,
    SeamEnd,
    seam_ends,
)

from ._serve import connect_to_agent, serve_agent
from ._sides import ClientFactory, ClientOffer, ClientSideConnection

__all__ = ["MemoryStream", "connect_in_memory", "memory_stream_pair"]


class _Waiter:
    """Tasks parked on one condition of a pipe (its waker unparks them)."""

    __slots__ = ("lot",)

    def __init__(self) -> None:
        self.lot = trio.lowlevel.ParkingLot()

    def wake(self) -> None:
        self.lot.unpark_all()


class MemoryStream(trio.abc.Stream):
    """One end of the in-memory seam as a trio stream (see the module).

    ``send_all`` waits while the peer's pipe is full (a checkpoint either
    way); ``receive_some`` waits for bytes or the peer's end;
    ``send_eof`` closes this end's writing half; ``aclose`` both halves
    (the peer's further writes raise :class:`trio.BrokenResourceError`).
    """

    def __init__(self, end: SeamEnd) -> None:
        self.end = end
        self._readable = _Waiter()
        self._writable = _Waiter()
        end.incoming.on_readable = self._readable.wake
        end.outgoing.on_writable = self._writable.wake
        self._sending = False
        self._receiving = False
        self._closed = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._sending:
            raise trio.BusyResourceError("another task is sending on this stream")
        self._sending = True
        try:
            await trio.lowlevel.checkpoint_if_cancelled()
            pipe = self.end.outgoing
            view = memoryview(data)
            parked = False
            while True:
                if self._closed:
                    raise trio.ClosedResourceError("this end of the seam is closed")
                try:
                    view = view[pipe.write(view) :]
                except BrokenPipeError as exc:
                    raise trio.BrokenResourceError("the peer closed its end") from exc
                except ValueError as exc:
                    raise trio.ClosedResourceError("sending half closed") from exc
                if not view:
                    break
                await self._writable.lot.park()
                parked = True
            if not parked:  # a park was this call's schedule point already
                await trio.lowlevel.cancel_shielded_checkpoint()
        finally:
            self._sending = False

    async def wait_send_all_might_not_block(self) -> None:
        pipe = self.end.outgoing
        while not pipe.room and not pipe.read_closed and not self._closed:
            await self._writable.lot.park()
        await trio.lowlevel.checkpoint()

    async def send_eof(self) -> None:
        await trio.lowlevel.checkpoint()
        self.end.outgoing.close_write()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._receiving:
            raise trio.BusyResourceError("another task is receiving on this stream")
        self._receiving = True
        try:
            await trio.lowlevel.checkpoint_if_cancelled()
            pipe = self.end.incoming
            parked = False
            while True:
                if self._closed:
                    raise trio.ClosedResourceError("this end of the seam is closed")
                data = pipe.read(max_bytes)
                if data is not None:
                    break
                await self._readable.lot.park()
                parked = True
            if not parked:  # a park was this call's schedule point already
                await trio.lowlevel.cancel_shielded_checkpoint()
            return data
        finally:
            self._receiving = False

    async def aclose(self) -> None:
        self.close()
        await trio.lowlevel.checkpoint()

    def close(self) -> None:
        """Close both halves now (no waiting)."""
        if not self._closed:
            self._closed = True
            self.end.close()
            # tasks of ours parked on the pipes see the close
            self._readable.wake()
            self._writable.wake()


def memory_stream_pair(
    capacity: int = DEFAULT_SEAM_CAPACITY,
) -> tuple[MemoryStream, MemoryStream]:
    """Two trio streams joined in memory, ``capacity`` bytes buffered each way.

    Give one to :func:`~acp_trio.serve_agent` (or
    :func:`~acp_trio.connect_to_client`) and the other to
    :func:`~acp_trio.connect_to_agent`.
    """
    ours, theirs = seam_ends(capacity)
    return MemoryStream(ours), MemoryStream(theirs)


# generated by tools/gen_overloads.py (edit there): connect_in_memory
@overload
def connect_in_memory(
    agents: Offer,
    client: ClientFactory[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
    capacity: int = DEFAULT_SEAM_CAPACITY,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
@overload
def connect_in_memory(
    agents: Offer,
    client: Mapping[int, ClientFactory[AgentT]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
    capacity: int = DEFAULT_SEAM_CAPACITY,
) -> AbstractAsyncContextManager[ClientSideConnection[AgentT]]: ...
# Several versions (factories taking different connection types, which the
# overload above cannot solve): the connection is typed Any.
@overload
def connect_in_memory(  # pyright: ignore[reportOverlappingOverload]
    agents: Offer,
    client: Mapping[int, Callable[[Any], object]],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
    capacity: int = DEFAULT_SEAM_CAPACITY,
) -> AbstractAsyncContextManager[ClientSideConnection[Any]]: ...
@asynccontextmanager
async def connect_in_memory(
    agents: Offer,
    client: ClientOffer[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
    capacity: int = DEFAULT_SEAM_CAPACITY,
) -> AsyncGenerator[ClientSideConnection[AgentT], None]:
    """The client's connection to ``agents`` served in this process, over the seam.

    ``agents`` is what :func:`~acp_trio.serve_agent` takes, ``client`` what
    :func:`~acp_trio.connect_to_agent` takes; ``limits``,
    ``max_message_size`` and ``unstable`` apply to both ends; ``capacity``:
    bytes buffered each way before a writer waits.  Leaving the block closes
    the client's end; the agent sees the end of its input and stops.
    """
    agent_end, client_end = memory_stream_pair(capacity)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(
                serve_agent,
                agent_end,
                agents,
                limits=limits,
                max_message_size=max_message_size,
                unstable=unstable,
            )
        )
        async with connect_to_agent(
            client_end,
            client,
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
        ) as conn:
            yield conn
