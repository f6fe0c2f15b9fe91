"""A proxy of a proxy chain on asyncio: ``serve_proxy``, ``serve_proxy_stdio``.

The shape of ``acp_trio``'s (the rules are ``acp_core.ProxyCore``'s)::

    class Notes(acp_asyncio.Proxy):
        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            params.prompt.insert(0, acp_asyncio.text_block("Project notes: ..."))
            return await self.successor.session_prompt(params)

    asyncio.run(acp_asyncio.serve_proxy_stdio(Notes()))

Read and written through the wires every asyncio connection uses
(``acp_asyncio._wire``: stdio of any kind, a reader/writer pair), framed by
``acp_core.LineBuffer``; a task per handled request (cancelled by
``$/cancel_request``), notification handlers awaited in the reading task
(wire order kept).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from acp_core import (
    FROM_PREDECESSOR,
    FROM_SUCCESSOR,
    CancelHandler,
    Handle,
    Limits,
    LineBuffer,
    Oversized,
    Proxy,
    ProxyCore,
    Resolve,
    TypedPeer,
    Write,
    attach_peers,
    judge_oversized,
    proxy_handlers,
    proxy_schema,
)
from acp_host import protocol_stdio

from ._wire import PipeWire, StreamWire, Wire

__all__ = ["serve_proxy", "serve_proxy_stdio"]

log = logging.getLogger("acp_asyncio.proxy")


class _ProxyConnection:
    """A proxy's end of its conductor connection: the callbacks of one wire
    (:mod:`acp_asyncio._wire`, as every asyncio connection reads and writes).

    The wire hands input over in chunks; its lines wait in ``inbox`` for the
    task of :meth:`run`, which takes them in order.  Past
    ``notification_queue_bytes`` of waiting lines the wire stops reading, so
    a proxy slower than its conductor holds a bounded amount.
    """

    def __init__(self, proxy: Proxy, limits: Limits) -> None:
        self.limits = limits
        self.schema = proxy_schema()
        self.handlers = proxy_handlers(proxy, self.schema)
        self.core = ProxyCore(set(self.handlers), limits.max_concurrent_requests)
        self.wire: Wire | None = None
        self.lines = LineBuffer(max_message_size=limits.max_message_size)
        self.inbox: deque[bytes | Oversized] = deque()
        self.inbox_bytes = 0
        self.paused = False
        self.ended = False
        self.arrived = asyncio.Event()
        self.calls: dict[Any, asyncio.Future[Any]] = {}
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        self.running: set[asyncio.Task[None]] = set()
        attach_peers(
            proxy,
            TypedPeer(
                self.schema.AGENT_METHODS,
                self.schema,
                lambda m, p, r: self.send(FROM_SUCCESSOR, m, p, r),
                lambda m, p, r: self.send(FROM_SUCCESSOR, m, p, r),
            ),
            TypedPeer(
                self.schema.CLIENT_METHODS,
                self.schema,
                lambda m, p, r: self.send(FROM_PREDECESSOR, m, p, r),
                lambda m, p, r: self.send(FROM_PREDECESSOR, m, p, r),
            ),
        )

    # -- the wire's callbacks ------------------------------------------------------------

    def on_data(self, data: bytes) -> None:
        self._put(self.lines.feed(data))
        if self.inbox_bytes > self.limits.notification_queue_bytes and not self.paused:
            self.paused = True
            assert self.wire is not None
            self.wire.pause_reading()

    def on_eof(self) -> None:
        self._put(self.lines.feed_eof())
        self.ended = True
        self.arrived.set()

    def on_broken(self) -> None:
        log.debug("the conductor stopped reading; closing")
        self.ended = True
        self.inbox.clear()
        self.arrived.set()

    def _put(self, lines: list[bytes | Oversized]) -> None:
        for line in lines:
            self.inbox.append(line)
            self.inbox_bytes += len(line) if isinstance(line, bytes) else 0
        if self.inbox:
            self.arrived.set()

    # -- writing -------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        wire = self.wire
        assert wire is not None
        wire.write(data)
        await wire.wait_for_space()

    async def send(
        self, to: str, method: str, params: bytes | None, request: bool
    ) -> Any:
        if not request:
            await self.write(self.core.notify(to, method, params))
            return None
        ident, line = self.core.call(to, method, params)
        future = self.calls[ident] = asyncio.get_running_loop().create_future()
        try:
            await self.write(line)
            return await future
        finally:
            self.calls.pop(ident, None)
            if not future.done():
                cancel = self.core.abandon(ident)
                if cancel is not None and self.wire is not None:
                    self.wire.write(cancel)

    # -- reading -------------------------------------------------------------------------

    async def run(self, wire: Wire) -> None:
        self.wire = wire
        # the lines waiting together are written on in one write (a turn's
        # updates cross the hop together), before any handler runs (wire
        # order kept); at most what the inbox held
        out: list[bytes] = []
        try:
            while True:
                if not self.inbox and out:
                    await self.write(b"".join(out))
                    out.clear()
                while not self.inbox:
                    if self.ended:
                        return
                    self.arrived.clear()
                    await self.arrived.wait()
                line = self.inbox.popleft()
                if isinstance(line, Oversized):
                    verdict = judge_oversized(line, self.limits.max_message_size)
                    log.warning("%s", verdict.log)
                    if verdict.answer is not None:
                        out.append(verdict.answer)
                    continue
                self.inbox_bytes -= len(line)
                if (
                    self.paused
                    and self.inbox_bytes <= self.limits.notification_queue_bytes
                ):
                    self.paused = False
                    wire.resume_reading()
                for action in self.core.receive(line):
                    if isinstance(action, Write):
                        out.append(action.data)
                        continue
                    if out:
                        await self.write(b"".join(out))
                        out.clear()
                    await self.act(action)
        finally:  # the conductor is gone: so are the handlers
            for task in list(self.running):
                task.cancel()
            for future in self.calls.values():
                future.cancel()

    async def act(self, action: Any) -> None:
        if isinstance(action, Write):
            await self.write(action.data)
        elif isinstance(action, Resolve):
            future = self.calls.get(action.ident)
            if future is not None and not future.done():
                if action.error is not None:
                    future.set_exception(action.error)
                else:
                    future.set_result(action.result)
        elif isinstance(action, CancelHandler):
            task = self.tasks.get(action.ident)
            if task is not None:
                task.cancel()
        elif isinstance(action, Handle):
            if isinstance(action.ident, (int, str)):
                task = asyncio.create_task(self.handle(action))
                self.tasks[action.ident] = task
                self.running.add(task)
                task.add_done_callback(self.running.discard)
            else:
                await self.handle(action)

    async def handle(self, action: Handle) -> None:
        handler = self.handlers[(action.origin, action.method)]
        core = self.core
        try:
            result = await handler.call(core.params_of(action, handler, self.schema))
            line = core.returned(action, result, self.schema)
        except asyncio.CancelledError:
            line = core.failed(action, None)
        except Exception as exc:
            line = core.failed(action, exc)
        finally:
            if isinstance(action.ident, (int, str)):
                self.tasks.pop(action.ident, None)
        if line is not None:
            await self.write(line)


async def serve_proxy(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    proxy: Proxy,
    *,
    limits: Limits | None = None,
) -> None:
    """Serve ``proxy`` to its conductor over ``reader`` / ``writer`` until it closes."""
    connection = _ProxyConnection(proxy, limits or Limits())
    await _serve(connection, StreamWire(reader, writer, connection))


async def serve_proxy_stdio(proxy: Proxy, *, limits: Limits | None = None) -> None:
    """Serve ``proxy`` on stdin/stdout (a proxy program a conductor starts).

    Stdio is taken and given back by ``acp_host.protocol_stdio`` and read as
    every asyncio connection reads it (pipes, sockets, terminals, files,
    ``/dev/null``).
    """
    connection = _ProxyConnection(proxy, limits or Limits())
    with protocol_stdio() as fds:
        await _serve(connection, await PipeWire.open(fds.input, fds.output, connection))


async def _serve(connection: _ProxyConnection, wire: Wire) -> None:
    try:
        await connection.run(wire)
    finally:
        wire.close()
        await wire.wait_closed()
