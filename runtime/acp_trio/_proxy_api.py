"""A proxy of a proxy chain on trio: ``serve_proxy``, ``serve_proxy_stdio``.

::

    class Notes(acp_trio.Proxy):
        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            params.prompt.insert(0, acp_trio.text_block("Project notes: ..."))
            return await self.successor.session_prompt(params)

    trio.run(acp_trio.serve_proxy_stdio, Notes())

The rules (what is forwarded, ``proxy/initialize`` vs ``initialize``,
hop-local cancellation) are ``acp_core.ProxyCore``'s; here: reading
(``acp_core.LineBuffer``), one writer lock, a task per handled request
(cancelled by ``$/cancel_request``), notification handlers run in the
reading task (wire order kept: keep them short).
"""

from __future__ import annotations

import logging
from typing import Any

import trio
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

log = logging.getLogger("acp_trio.proxy")


class _Pending:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.result: Any = None
        self.error: RequestError | None = None


class _ProxyConnection:
    def __init__(self, stream: trio.abc.Stream, proxy: Proxy, limits: Limits) -> None:
        self.stream = stream
        self.limits = limits
        self.schema = proxy_schema()
        self.handlers = proxy_handlers(proxy, self.schema)
        self.core = ProxyCore(set(self.handlers), limits.max_concurrent_requests)
        self.lock = trio.StrictFIFOLock()
        self.calls: dict[Any, _Pending] = {}
        self.scopes: dict[Any, trio.CancelScope] = {}
        attach_peers(
            proxy,
            TypedPeer(
                {**self.schema.AGENT_METHODS},
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
            await self.stream.send_all(data)

    async def send(
        self, to: str, method: str, params: bytes | None, request: bool
    ) -> Any:
        if not request:
            await self.write(self.core.notify(to, method, params))
            return None
        ident, line = self.core.call(to, method, params)
        pending = self.calls[ident] = _Pending()
        try:
            await self.write(line)
            await pending.done.wait()
        finally:
            if not pending.done.is_set():
                cancel = self.core.abandon(ident)
                if cancel is not None:
                    with trio.CancelScope(shield=True):
                        await self.write(cancel)
            self.calls.pop(ident, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def run(self) -> None:
        lines = LineBuffer(max_message_size=self.limits.max_message_size)
        async with trio.open_nursery() as nursery:
            while True:
                try:
                    chunk = await self.stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    chunk = b""
                # the lines a chunk brings are written on in one write (a
                # turn's updates cross the hop together), at most one chunk's
                # worth, before any handler runs (wire order kept)
                out: list[bytes] = []
                for line in lines.feed(chunk) if chunk else lines.feed_eof():
                    if isinstance(line, Oversized):
                        verdict = judge_oversized(line, self.limits.max_message_size)
                        log.warning("%s", verdict.log)
                        if verdict.answer is not None:
                            out.append(verdict.answer)
                        continue
                    for action in self.core.receive(line):
                        if isinstance(action, Write):
                            out.append(action.data)
                            continue
                        if out:
                            await self.write(b"".join(out))
                            out.clear()
                        await self.act(action, nursery)
                if out:
                    await self.write(b"".join(out))
                if not chunk:
                    nursery.cancel_scope.cancel()  # the conductor is gone
                    return

    async def act(self, action: Any, nursery: trio.Nursery) -> None:
        if isinstance(action, Write):
            await self.write(action.data)
        elif isinstance(action, Resolve):
            pending = self.calls.get(action.ident)
            if pending is not None:
                pending.result, pending.error = action.result, action.error
                pending.done.set()
        elif isinstance(action, CancelHandler):
            scope = self.scopes.get(action.ident)
            if scope is not None:
                scope.cancel()
        elif isinstance(action, Handle):
            if isinstance(action.ident, (int, str)):
                scope = self.scopes[action.ident] = trio.CancelScope()
                nursery.start_soon(self.handle, action, scope)
            else:
                await self.handle(action, None)

    async def handle(self, action: Handle, scope: trio.CancelScope | None) -> None:
        handler = self.handlers[(action.origin, action.method)]
        core = self.core
        line: bytes | None = None
        try:
            with scope or trio.CancelScope():
                try:
                    params = core.params_of(action, handler, self.schema)
                    line = core.returned(
                        action, await handler.call(params), self.schema
                    )
                except Exception as exc:
                    line = core.failed(action, exc)
            if scope is not None and scope.cancelled_caught:
                line = core.failed(action, None)
            if line is not None:
                await self.write(line)
        finally:
            if scope is not None:
                self.scopes.pop(action.ident, None)


async def serve_proxy(
    stream: trio.abc.Stream, proxy: Proxy, *, limits: Limits | None = None
) -> None:
    """Serve ``proxy`` to its conductor over ``stream`` until the conductor closes it."""
    try:
        await _ProxyConnection(stream, proxy, limits or Limits()).run()
    finally:
        await trio.aclose_forcefully(stream)


async def serve_proxy_stdio(proxy: Proxy, *, limits: Limits | None = None) -> None:
    """Serve ``proxy`` on stdin/stdout (a proxy program a conductor starts)."""
    with protocol_stdio() as fds:
        stream = trio.StapledStream(
            trio.lowlevel.FdStream(fds.output), trio.lowlevel.FdStream(fds.input)
        )
        await serve_proxy(stream, proxy, limits=limits)
