"""The conductor on trio: the client's stream and each component's, joined by the router.

One reading task per hop frames its bytes (``acp_core.LineBuffer``, bounded
by ``max_message_size``) and gives each line to the :class:`~._routing.Router`;
the lines it routes go to the target hop's :class:`_Outbox`, which one
writing task per hop empties in order.  So each hop holds at most
``write_buffer_bytes`` of lines waiting to be written (a reader waits past
that: the chain slows to its slowest reader, as a pipe would), plus a line
being read.

The chain ends (:class:`ChainEnded`) when:

- the client closes its input: every component is ended (``ShutdownPlan``);
- a component closes its output or exits: every request the client still
  waits for is answered with an error naming it, then every component ends;
- a component reads nothing for ``stall_timeout`` seconds while its outbox is
  full, or the chain does not answer the client's ``initialize`` within
  ``initialize_timeout``: the same, with that reason.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio
from acp_core import Limits, LineBuffer, Oversized
from acp_trio import memory_stream_pair

from ._components import Component
from ._mcp_bridge import McpBridge
from ._routing import BRIDGE, CLIENT, ChainFailure, Router, Send

__all__ = [
    "DEFAULT_INITIALIZE_TIMEOUT",
    "DEFAULT_STALL_TIMEOUT",
    "ChainEnded",
    "LineObserver",
    "run_chain",
]

log = logging.getLogger("acp_conductor")

#: Seconds a component may leave its input unread while the conductor holds
#: ``write_buffer_bytes`` for it, before the chain ends.
DEFAULT_STALL_TIMEOUT = 30.0
#: Seconds the chain has to answer the client's ``initialize``.
DEFAULT_INITIALIZE_TIMEOUT = 60.0
#: Seconds the client has to take the errors owed to it when the chain fails.
FLUSH_GRACE = 1.0
_READ = 65536

#: ``observer(hop name, "in" | "out", line)``: called for each line read from
#: a hop (``"in"``) and written to one (``"out"``), e.g. a trace of the chain.
LineObserver = Callable[[str, str, bytes], None]


@dataclass(frozen=True)
class ChainEnded:
    """How a chain ended: ``failure`` is ``None`` when the client closed it."""

    failure: str | None


class _Stalled(Exception):
    pass


class _Outbox:
    """Lines waiting for one hop, at most ``budget`` bytes (one line always fits)."""

    def __init__(self, budget: int) -> None:
        self._items: deque[bytes] = deque()
        self._bytes = 0
        self._budget = budget
        self._writer = trio.lowlevel.ParkingLot()
        self._space = trio.lowlevel.ParkingLot()
        self._empty = trio.lowlevel.ParkingLot()
        self.writing = 0

    @property
    def full(self) -> bool:
        return bool(self._items) and self._bytes + self.writing >= self._budget

    def put_nowait(self, data: bytes) -> None:
        """Queue ``data`` (the caller saw the box not :attr:`full`)."""
        self._items.append(data)
        self._bytes += len(data)
        self._writer.unpark_all()

    async def put(self, data: bytes) -> None:
        while self.full:
            await self._space.park()
        self.put_nowait(data)

    async def take(self) -> bytes:
        """Everything queued, joined (one write); counted until :meth:`done`."""
        while not self._items:
            await self._writer.park()
        data = b"".join(self._items)
        self._items.clear()
        self.writing, self._bytes = self._bytes, 0
        return data

    def done(self) -> None:
        self.writing = 0
        self._space.unpark_all()
        if not self._items:
            self._empty.unpark_all()

    async def drained(self) -> None:
        while self._items or self.writing:
            await self._empty.park()


class _Chain:
    def __init__(
        self,
        router: Router,
        streams: dict[int, trio.abc.Stream],
        limits: Limits,
        stall_timeout: float,
        observer: LineObserver | None,
    ) -> None:
        self.router = router
        self.streams = streams
        self.limits = limits
        self.stall_timeout = stall_timeout
        self.observer = observer
        self.outboxes = {hop: _Outbox(limits.write_buffer_bytes) for hop in streams}
        self.ended: ChainEnded | None = None
        self.done = trio.Event()

    def end(self, failure: str | None) -> None:
        if self.ended is None:
            self.ended = ChainEnded(failure)
            if failure is not None:
                log.warning("the chain ends: %s", failure)
            self.done.set()

    async def send(self, sends: list[Send]) -> None:
        for send in sends:
            box = self.outboxes[send.hop]
            if not box.full:  # the common case: no wait, no timer
                box.put_nowait(send.data)
                continue
            if send.hop == CLIENT or math.isinf(self.stall_timeout):
                await box.put(send.data)
                continue
            with trio.move_on_after(self.stall_timeout) as scope:
                await box.put(send.data)
            if scope.cancelled_caught:
                raise _Stalled(
                    f"{self.router.name(send.hop)} read nothing for {self.stall_timeout:g} s "
                    f"with {self.limits.write_buffer_bytes} bytes waiting for it"
                )

    async def read(self, hop: int) -> None:
        stream = self.streams[hop]
        name = self.router.name(hop)
        lines = LineBuffer(max_message_size=self.limits.max_message_size)
        observer = self.observer
        try:
            while True:
                try:
                    chunk = await stream.receive_some(_READ)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    chunk = b""
                got = lines.feed(chunk) if chunk else lines.feed_eof()
                for line in got:
                    if observer is not None:
                        observer(
                            name,
                            "in",
                            line.head if isinstance(line, Oversized) else line,
                        )
                    await self.send(self.router.receive(hop, line))
                if not chunk:
                    break
        except _Stalled as exc:
            self.end(str(exc))
            return
        self.end(None if hop == CLIENT else f"{name} closed its output (exited?)")

    async def write(self, hop: int) -> None:
        stream = self.streams[hop]
        box = self.outboxes[hop]
        name = self.router.name(hop)
        observer = self.observer
        try:
            while True:
                data = await box.take()
                if observer is not None:
                    for line in data.splitlines():
                        observer(name, "out", line)
                await stream.send_all(data)
                box.done()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            box.done()
            self.end(None if hop == CLIENT else f"{name} closed its input (exited?)")

    async def watch_initialize(self, within: float) -> None:
        await trio.sleep(within)
        if not self.router.client_initialized and self.router.client_initialize_sent:
            self.end(f"the chain did not answer initialize within {within:g} s")


async def run_chain(
    client: trio.abc.Stream,
    components: Sequence[Component],
    *,
    has_agent: bool = True,
    limits: Limits | None = None,
    stall_timeout: float = DEFAULT_STALL_TIMEOUT,
    initialize_timeout: float = DEFAULT_INITIALIZE_TIMEOUT,
    observer: LineObserver | None = None,
    mcp_bridge: bool = True,
) -> ChainEnded:
    """Run ``components`` as one agent for ``client`` until the chain ends.

    ``components`` in chain order from the client's side; the last is the
    agent unless ``has_agent=False`` (proxy mode: the conductor is itself a
    proxy and expects ``proxy/initialize``).  ``limits`` bound every hop
    (the client's and each component's); ``stall_timeout`` and
    ``initialize_timeout`` are described in the module.  ``mcp_bridge``: an
    agent that does not advertise ``mcpCapabilities.acp`` reaches ``"type":
    "acp"`` MCP servers through stdio relays (:mod:`._mcp_bridge`), and the
    chain advertises ``mcpCapabilities.acp`` for it.  Every component is
    ended before this returns.
    """
    limits = limits or Limits()
    bridge = McpBridge(limits) if mcp_bridge and has_agent else None
    router = Router(
        [c.name for c in components],
        has_agent=has_agent,
        limits=limits,
        bridge_command=bridge.command if bridge is not None else None,
    )
    streams: dict[int, trio.abc.Stream] = {CLIENT: client}
    bridge_end: trio.abc.Stream | None = None
    if bridge is not None:
        streams[BRIDGE], bridge_end = memory_stream_pair()
    release = trio.Event()

    async def hold(
        hop: int, component: Component, task_status: trio.TaskStatus[None]
    ) -> None:
        async with component.open() as stream:
            streams[hop] = stream
            task_status.started()
            await release.wait()

    async with trio.open_nursery() as holders:
        try:
            for hop, component in enumerate(components):
                await holders.start(hold, hop, component)
            chain = _Chain(router, streams, limits, stall_timeout, observer)
            async with trio.open_nursery() as nursery:
                for hop in streams:
                    nursery.start_soon(chain.read, hop)
                    nursery.start_soon(chain.write, hop)
                if bridge is not None and bridge_end is not None:
                    nursery.start_soon(bridge.run, bridge_end)
                if math.isfinite(initialize_timeout):
                    nursery.start_soon(chain.watch_initialize, initialize_timeout)
                await chain.done.wait()
                assert chain.ended is not None
                failure = chain.ended.failure
                if failure is not None:
                    await _owed_to_client(
                        chain, router.fail_chain(ChainFailure(failure))
                    )
                nursery.cancel_scope.cancel()
            await trio.aclose_forcefully(client)
            return chain.ended
        finally:
            release.set()  # every component ends, all at once
            if bridge is not None:
                bridge.close()


async def _owed_to_client(chain: _Chain, sends: list[Send]) -> None:
    """The errors owed to the client, written within ``FLUSH_GRACE``."""
    with trio.move_on_after(FLUSH_GRACE):
        for send in sends:
            await chain.outboxes[send.hop].put(send.data)
        await chain.outboxes[CLIENT].drained()
