"""Calling an MCP server declared with ``"type": "acp"``: the consumer's end of ``mcp/message``.

An agent given ``{"type": "acp", "name": ..., "serverId": ...}`` in
``session/new`` talks to that server with the ``mcp`` package's client over
the ACP connection it already has::

    transport = AcpTransport(server.server_id, conn.client.mcp_message)
    async with mcp.Client(transport, mode=MCP_PROTOCOL_VERSION) as tools:
        listed = await tools.list_tools()

Each MCP request becomes one ``mcp/message`` request (``requestId`` the MCP
request's id, ``params`` its params with the 2026-07-28 envelope the client
stamps); its answer becomes the MCP response: ``{"result": ...}`` a result,
``{"error": ...}`` an MCP error, an outer ACP error an MCP error with the same
code and message.  MCP notifications from the client (cancellation) have no
carrier in the schema and are dropped.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, cast

import anyio
import msgspec
from acp_core import RequestError
from acp_schema import v1
from anyio.streams.memory import MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
)

__all__ = ["AcpTransport", "McpCall"]

#: ``call(params)``: send one ``mcp/message`` request, its answer (an
#: adapter's typed peer: ``conn.client.mcp_message``).
McpCall = Callable[[v1.MessageMcpRequest], Awaitable[v1.MessageMcpResponse]]


class AcpTransport:
    """An ``mcp.client`` transport reaching server ``server_id`` through ``call``.

    ``max_active``: MCP requests in flight at once (the client waits past it).
    """

    def __init__(self, server_id: str, call: McpCall, *, max_active: int = 64) -> None:
        self.server_id = server_id
        self._call = call
        self._max_active = max_active
        self._cm: AbstractAsyncContextManager[TransportStreams] | None = None

    async def __aenter__(self) -> TransportStreams:
        self._cm = self._connect()
        return await self._cm.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(exc_type, exc_val, exc_tb)

    @asynccontextmanager
    async def _connect(self) -> AsyncGenerator[TransportStreams, None]:
        to_client, client_reads = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](self._max_active)
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](
            self._max_active
        )
        limiter = anyio.CapacityLimiter(self._max_active)

        async def pump() -> None:
            async with from_client, to_client:
                async with anyio.create_task_group() as tasks:
                    async for sent in from_client:
                        message = sent.message
                        if isinstance(message, JSONRPCRequest):
                            tasks.start_soon(
                                self._exchange, message, to_client, limiter
                            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            try:
                yield client_reads, client_writes
            finally:
                tg.cancel_scope.cancel()

    async def _exchange(
        self,
        request: JSONRPCRequest,
        to_client: MemoryObjectSendStream[SessionMessage | Exception],
        limiter: anyio.CapacityLimiter,
    ) -> None:
        async with limiter:
            params = v1.MessageMcpRequest(
                server_id=self.server_id,
                request_id=str(request.id),
                method=request.method,
                params=dict(request.params) if request.params is not None else v1.UNSET,
            )
            reply: JSONRPCResponse | JSONRPCError
            try:
                answer = await self._call(params)
            except RequestError as exc:
                reply = _error(
                    request,
                    exc.code,
                    str(exc.message),
                    None if exc.data is msgspec.UNSET else exc.data,
                )
            else:
                if isinstance(answer, v1.MessageMcpResponseResult):
                    result: Any = answer.result
                    reply = JSONRPCResponse(
                        jsonrpc="2.0",
                        id=request.id,
                        result=cast("dict[str, Any]", result)
                        if isinstance(result, dict)
                        else {},
                    )
                else:
                    body = dict(answer.error)
                    reply = _error(
                        request,
                        int(body.get("code", INTERNAL_ERROR)),
                        str(body.get("message", "")),
                        body.get("data"),
                    )
        try:
            await to_client.send(SessionMessage(reply))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the client is gone


def _error(request: JSONRPCRequest, code: int, message: str, data: Any) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0",
        id=request.id,
        error=ErrorData(code=code, message=message, data=data),
    )
