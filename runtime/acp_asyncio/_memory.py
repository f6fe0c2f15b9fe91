"""An agent and a client in one process, joined by the in-memory seam.

:func:`memory_stream_pair` gives two :class:`MemoryEnd` records, each an
:class:`asyncio.StreamReader` / :class:`asyncio.StreamWriter` pair that
:func:`~acp_asyncio.serve_agent`, :func:`~acp_asyncio.connect_to_agent` and
:func:`~acp_asyncio.connect_to_client` take.  The bytes stay in the process
(``acp_core``'s :class:`BytePipe`, one per direction) with a pipe's bounds:
``capacity`` bytes each way, then what the writer queues counts against its
write buffer (``StreamWriter.drain`` waits, as on a socket); no socket, no
thread.  :func:`connect_to_client_in_memory` serves an agent on one end
of a seam without the streams (the connection reads and writes the pipes).

:func:`connect_in_memory` does the whole join::

    async with acp_asyncio.connect_in_memory(MyAgent, MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, NamedTuple, overload

from acp_core import (
    DEFAULT_SEAM_CAPACITY,
    AgentT,
    ClientT,
    Limits,
    Offer,
    SeamEnd,
    seam_ends,
)

from ._sides import (
    AgentOffer,
    AgentSideConnection,
    ClientFactory,
    ClientOffer,
    ClientSideConnection,
)
from ._wire import READ_CHUNK, SeamWire

__all__ = [
    "MemoryEnd",
    "connect_in_memory",
    "connect_to_agent_in_memory",
    "connect_to_client_in_memory",
    "memory_stream_pair",
    "open_memory_stream",
]

#: Bytes a writer queues past the pipe before ``drain()`` waits (asyncio's default).
_HIGH_WATER: int = 64 * 1024


class MemoryEnd(NamedTuple):
    """One end of the seam as asyncio streams: ``serve_agent(*end, ...)``."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter


class _SeamTransport(asyncio.Transport):
    """A transport over one :class:`SeamEnd` (asyncio's public ``Transport`` API).

    Writes go into the peer's pipe as far as it has room; the rest waits
    here, counted by :meth:`get_write_buffer_size` (the protocol is paused
    past the high-water mark).  Reads are handed to the protocol one chunk
    per loop callback while reading is on.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        end: SeamEnd,
        protocol: asyncio.Protocol,
    ) -> None:
        super().__init__()
        self._loop = loop
        self._end = end
        self._protocol = protocol
        self._pending = bytearray()
        self._high = _HIGH_WATER
        self._low = _HIGH_WATER // 4
        self._writing_paused = False
        self._reading = True
        self._read_scheduled = False
        self._flush_scheduled = False
        self._closing = False
        self._eof_written = False
        self._lost = False
        end.incoming.on_readable = self._schedule_read
        end.outgoing.on_writable = self._schedule_flush
        self._schedule_read()

    # -- writing -------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing or self._eof_written or self._lost:
            return
        self._pending += data
        self._flush()
        if not self._writing_paused and len(self._pending) > self._high:
            self._writing_paused = True
            self._protocol.pause_writing()

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled and not self._lost:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        self._flush_scheduled = False
        self._flush()

    def _flush(self) -> None:
        pipe = self._end.outgoing
        pending = self._pending
        if pending and not self._lost:
            try:
                taken = pipe.write(pending)
            except (BrokenPipeError, ValueError) as exc:
                self._lose(exc if isinstance(exc, BrokenPipeError) else None)
                return
            del pending[:taken]
        if self._writing_paused and len(pending) <= self._low:
            self._writing_paused = False
            self._protocol.resume_writing()
        if not pending and (self._closing or self._eof_written):
            pipe.close_write()
            if self._closing:
                self._lose(None)

    def get_write_buffer_size(self) -> int:
        return len(self._pending)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (self._low, self._high)

    def set_write_buffer_limits(
        self, high: int | None = None, low: int | None = None
    ) -> None:
        if high is None:
            high = _HIGH_WATER if low is None else 4 * low
        if low is None:
            low = high // 4
        self._high, self._low = high, low

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        if not self._eof_written:
            self._eof_written = True
            self._flush()

    # -- reading -------------------------------------------------------------

    def _schedule_read(self) -> None:
        if not self._read_scheduled and self._reading and not self._lost:
            self._read_scheduled = True
            self._loop.call_soon(self._read)

    def _read(self) -> None:
        self._read_scheduled = False
        if not self._reading or self._lost:
            return
        data = self._end.incoming.read(READ_CHUNK)
        if data is None:
            return
        if not data:
            self._reading = False
            keep_open = self._protocol.eof_received()
            if not keep_open:
                self.close()
            return
        self._protocol.data_received(data)
        incoming = self._end.incoming
        if incoming.buffered or incoming.write_closed:
            self._schedule_read()  # more, or the end: each in a callback of its own

    def is_reading(self) -> bool:
        return self._reading and not self._lost

    def pause_reading(self) -> None:
        self._reading = False

    def resume_reading(self) -> None:
        if not self._reading and not self._lost and not self._closing:
            self._reading = True
            self._schedule_read()

    # -- the end -------------------------------------------------------------

    def is_closing(self) -> bool:
        return self._closing or self._lost

    def close(self) -> None:
        """Write what is queued, then close both directions."""
        if self._closing or self._lost:
            return
        self._closing = True
        self._reading = False
        self._end.incoming.close_read()
        self._flush()

    def abort(self) -> None:
        self._pending.clear()
        self._lose(None)

    def _lose(self, exc: Exception | None) -> None:
        if self._lost:
            return
        self._lost = True
        self._closing = True
        self._end.close()
        self._pending.clear()
        self._loop.call_soon(self._protocol.connection_lost, exc)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"seam": self._end}.get(name, default)


def open_memory_stream(end: SeamEnd, *, limit: int = READ_CHUNK) -> MemoryEnd:
    """asyncio streams over one end of a seam (call it in the running loop).

    ``limit``: the reader's buffer bound (``asyncio.StreamReader``'s own; it
    stops taking from the pipe past twice this).
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    transport = _SeamTransport(loop, end, protocol)
    protocol.connection_made(transport)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return MemoryEnd(reader, writer)


@asynccontextmanager
async def connect_to_client_in_memory(
    end: SeamEnd,
    agents: AgentOffer[ClientT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AsyncGenerator[AgentSideConnection[ClientT], None]:
    """An agent's connection over one end of a seam, served while the block runs.

    As :func:`~acp_asyncio.connect_to_client` over
    ``open_memory_stream(end)``, without the streams: the connection reads
    and writes the seam itself (no ``StreamReader``, transport or reading
    task; a chunk reaches the engine one loop step sooner).  What a server
    holding an agent per connection takes (``acp_http.InProcessAgent``).
    """
    conn = AgentSideConnection(
        agents, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    async with conn._serving(SeamWire(end, conn)):  # pyright: ignore[reportPrivateUsage]
        yield conn


@asynccontextmanager
async def connect_to_agent_in_memory(
    end: SeamEnd,
    client: ClientOffer[AgentT],
    *,
    limits: Limits | None = None,
    max_message_size: int | None = None,
    unstable: bool = False,
) -> AsyncGenerator[ClientSideConnection[AgentT], None]:
    """A client's connection over one end of a seam, served while the block runs.

    As :func:`~acp_asyncio.connect_to_agent` over ``open_memory_stream(end)``,
    without the streams (see :func:`connect_to_client_in_memory`): what
    :func:`connect_in_memory` and ``acp_http``'s clients take.
    """
    conn = ClientSideConnection(
        client, limits=limits, max_message_size=max_message_size, unstable=unstable
    )
    async with conn._serving(SeamWire(end, conn)):  # pyright: ignore[reportPrivateUsage]
        yield conn


def memory_stream_pair(
    capacity: int = DEFAULT_SEAM_CAPACITY,
) -> tuple[MemoryEnd, MemoryEnd]:
    """Two ends joined in memory, ``capacity`` bytes buffered each way (in the running loop).

    ``await serve_agent(*agent_end, MyAgent)`` on one, ``connect_to_agent(*client_end,
    MyClient)`` on the other.
    """
    ours, theirs = seam_ends(capacity)
    return open_memory_stream(ours), open_memory_stream(theirs)


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

    As :func:`acp_trio.connect_in_memory`: ``agents`` as for
    :func:`~acp_asyncio.serve_agent`, ``client`` as for
    :func:`~acp_asyncio.connect_to_agent`; the keywords apply to both ends.
    Leaving the block closes the client's end; the agent then stops.
    """
    # both ends on the seam itself (SeamWire), the one path of a connection
    # on a seam end: no streams, no reading task
    client_end, agent_end = seam_ends(capacity)
    serving: AbstractAsyncContextManager[AgentSideConnection[Any]] = (
        connect_to_client_in_memory(
            agent_end,
            agents,
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
        )
    )
    async with serving as served:
        try:
            async with connect_to_agent_in_memory(
                client_end,
                client,
                limits=limits,
                max_message_size=max_message_size,
                unstable=unstable,
            ) as conn:
                yield conn
        finally:
            # the agent read the end of its input: it stops within HANDLER_GRACE
            await served.wait_closed()
