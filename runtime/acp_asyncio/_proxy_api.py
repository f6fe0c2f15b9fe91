"""A proxy of a proxy chain on asyncio: ``serve_proxy``, ``serve_proxy_stdio``.

The shape of ``acp_trio``'s (the rules are ``acp_core.ProxyCore``'s)::

    class Notes(acp_asyncio.Proxy):
        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            params.prompt.insert(0, acp_asyncio.text_block("Project notes: ..."))
            return await self.successor.session_prompt(params)

    asyncio.run(acp_asyncio.serve_proxy_stdio(Notes()))

Reading through ``acp_core.LineBuffer``, one writer lock (``drain`` after
each line: the transport's bound), a task per handled request (cancelled by
``$/cancel_request``), notification handlers awaited in the reading task
(wire order kept).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from acp_core import (
    FROM_PREDECESSOR,
    FROM_SUCCESSOR,
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    CancelHandler,
    Handle,
    Limits,
    LineBuffer,
    Oversized,
    Proxy,
    ProxyCore,
    RequestError,
    Resolve,
    TypedPeer,
    Write,
    attach_peers,
    judge_oversized,
    proxy_handlers,
    proxy_schema,
)
from acp_host import protocol_stdio

__all__ = ["serve_proxy", "serve_proxy_stdio"]

log = logging.getLogger("acp_asyncio.proxy")


class _ProxyConnection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        proxy: Proxy,
        limits: Limits,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.limits = limits
        self.schema = proxy_schema()
        self.handlers = proxy_handlers(proxy, self.schema)
        self.core = ProxyCore(set(self.handlers))
        self.lock = asyncio.Lock()
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

    async def write(self, data: bytes) -> None:
        async with self.lock:
            self.writer.write(data)
            await self.writer.drain()

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
                if cancel is not None:
                    self.writer.write(cancel)

    async def run(self) -> None:
        lines = LineBuffer(max_message_size=self.limits.max_message_size)
        try:
            while True:
                chunk = await self.reader.read(65536)
                for line in lines.feed(chunk) if chunk else lines.feed_eof():
                    if isinstance(line, Oversized):
                        verdict = judge_oversized(line, self.limits.max_message_size)
                        log.warning("%s", verdict.log)
                        if verdict.answer is not None:
                            await self.write(verdict.answer)
                        continue
                    for action in self.core.receive(line):
                        await self.act(action)
                if not chunk:
                    return
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
        ident = action.ident
        answer_id = ident if isinstance(ident, (int, str)) else None
        request = isinstance(ident, (int, str))
        line: bytes | None = None
        try:
            params = self.schema.decode(
                bytes(action.params) if action.params is not None else b"{}",
                handler.method.params,
            )
            result = await handler.call(params)
            if request:
                line = self.core.answer(answer_id, self.schema.encode(result))
        except RequestError as exc:
            if request:
                line = self.core.answer_error(answer_id, exc)
        except asyncio.CancelledError:
            if request:
                error = RequestError(REQUEST_CANCELLED, "Request cancelled")
                line = self.core.answer_error(answer_id, error)
        except Exception as exc:
            log.exception("the proxy's %s handler failed", action.method)
            if request:
                error = RequestError(
                    INTERNAL_ERROR, f"Internal error: {type(exc).__name__}"
                )
                line = self.core.answer_error(answer_id, error)
        finally:
            if request:
                self.tasks.pop(ident, None)
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
    try:
        await _ProxyConnection(reader, writer, proxy, limits or Limits()).run()
    finally:
        writer.close()


async def serve_proxy_stdio(proxy: Proxy, *, limits: Limits | None = None) -> None:
    """Serve ``proxy`` on stdin/stdout (a proxy program a conductor starts; pipes)."""
    loop = asyncio.get_running_loop()
    with protocol_stdio() as fds:
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fds.input, "rb", 0)
        )
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
            os.fdopen(fds.output, "wb", 0),
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        await serve_proxy(reader, writer, proxy, limits=limits)
