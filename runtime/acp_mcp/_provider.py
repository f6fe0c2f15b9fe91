"""Serving MCP servers over an ACP connection: the provider's end of ``mcp/message``.

A component (a proxy or a client) offers a server of the ``mcp`` package
(``mcp.server.mcpserver.MCPServer`` or the low-level ``mcp.server.Server``)
by putting its declaration in ``session/new``'s ``mcpServers``::

    tools = McpProvider()
    params.mcp_servers.append(tools.offer(server))  # {"type": "acp", ...}

and answers each ``mcp/message`` request its consumer (the agent) sends with
:meth:`McpProvider.answer`.  Each request carries the MCP 2026-07-28 envelope
(protocol version, client capabilities and info in ``params._meta``) and is
served on its own, without an ``initialize`` handshake, by the ``mcp``
package's single-request driver (``mcp.server.runner.serve_one``), as its
stateless HTTP entry serves one POST.  So one ``mcp/message`` is one MCP
request, which the schema 2.4.0 describes (no ``mcp/connect``: the RFD's
connection lifecycle was dropped from the schema).

Failures of the binding are outer ACP errors (the codes of the TypeScript
SDK 2.4.0's binding, :data:`SERVER_UNAVAILABLE`...); an MCP error (an unknown
tool, invalid params) is a successful ACP answer carrying ``{"error": ...}``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
from acp_core import INVALID_PARAMS, RequestError
from acp_schema import v1
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import modern_error_data, serve_one
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.message import MessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)

__all__ = [
    "BACKEND_FAILED",
    "DEFAULT_MAX_ACTIVE",
    "MCP_PROTOCOL_VERSION",
    "RESOURCE_LIMIT_EXCEEDED",
    "SERVER_UNAVAILABLE",
    "McpNotify",
    "McpProvider",
]

#: The MCP revision of the binding (per-request envelope, no handshake), as
#: in the TypeScript SDK 2.4.0.
MCP_PROTOCOL_VERSION: Final = "2026-07-28"
#: Outer ACP error codes of the binding (never inner MCP codes).
RESOURCE_LIMIT_EXCEEDED: Final = -33000
SERVER_UNAVAILABLE: Final = -33001
BACKEND_FAILED: Final = -33002
#: MCP requests one server serves at once; past it, -33000.
DEFAULT_MAX_ACTIVE: Final = 64

#: ``notify(params)``: send one ``mcp/message`` notification to the consumer.
McpNotify = Callable[[v1.MessageMcpNotification], Awaitable[None]]


@dataclass(slots=True)
class _Offered:
    server: Server[Any]
    active: set[str] = field(default_factory=set[str])


@dataclass
class _Exchange:
    """The ``mcp`` package's per-request context (its ``DispatchContext``):
    no requests back to the consumer (MCP 2026-07-28 has none), notifications
    and progress as ``mcp/message`` notifications."""

    transport: TransportContext
    request_id: str
    server_id: str
    send: McpNotify | None
    progress_token: str | int | None = None
    message_metadata: MessageMetadata = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        opts: CallOptions | None = None,
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        opts: CallOptions | None = None,
    ) -> None:
        if self.send is None:
            return
        await self.send(
            v1.MessageMcpNotification(
                server_id=self.server_id,
                request_id=self.request_id,
                method=method,
                params=dict(params) if params is not None else v1.UNSET,
            )
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self.progress_token is None:
            return
        body: dict[str, Any] = {
            "progressToken": self.progress_token,
            "progress": progress,
        }
        if total is not None:
            body["total"] = total
        if message is not None:
            body["message"] = message
        await self.notify("notifications/progress", body)


class McpProvider:
    """The MCP servers one component offers over its ACP connection.

    ``max_active``: MCP requests each server serves at once (past it the
    request is answered with :data:`RESOURCE_LIMIT_EXCEEDED`).  A server's
    lifespan (``MCPServer(lifespan=...)``) is entered for each request: keep
    long-lived state in the component.
    """

    def __init__(self, *, max_active: int = DEFAULT_MAX_ACTIVE) -> None:
        if max_active < 1:
            raise ValueError("max_active must be at least 1")
        self.max_active = max_active
        self._servers: dict[str, _Offered] = {}

    def offer(
        self,
        server: MCPServer | Server[Any],
        *,
        name: str | None = None,
        server_id: str | None = None,
    ) -> v1.McpServerAcp:
        """Serve ``server``; its declaration for ``session/new``'s ``mcpServers``.

        ``server_id`` defaults to a fresh ``NAME:UUID`` (the schema: unique on
        the connection); ``name`` to the server's own.
        """
        # MCPServer keeps its low-level server private (as mcp.Client reads it)
        low: Server[Any] = (
            server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
            if isinstance(server, MCPServer)
            else server
        )
        label = name or low.name
        ident = server_id or f"{label}:{uuid.uuid4()}"
        if ident in self._servers:
            raise ValueError(f"MCP server id {ident!r} is offered already")
        self._servers[ident] = _Offered(low)
        return v1.McpServerAcp(name=label, server_id=ident)

    def owns(self, server_id: str) -> bool:
        """Whether ``server_id`` is one of this provider's servers."""
        return server_id in self._servers

    async def answer(
        self, params: v1.MessageMcpRequest, notify: McpNotify | None = None
    ) -> v1.MessageMcpResponse:
        """Serve one ``mcp/message`` request; ``notify`` carries the server's
        notifications for it (progress, logs) back to the consumer.

        Raises :class:`acp_core.RequestError` for the binding's failures
        (unknown server, a request id already active, too many requests);
        an MCP error is the answer's ``error``.
        """
        offered = self._servers.get(params.server_id)
        if offered is None:
            raise RequestError(
                SERVER_UNAVAILABLE,
                "MCP server registration unavailable",
                {"serverId": params.server_id},
            )
        if params.request_id in offered.active:
            raise RequestError(
                INVALID_PARAMS,
                "Invalid params: duplicate active MCP request id",
                {"serverId": params.server_id, "requestId": params.request_id},
            )
        if len(offered.active) >= self.max_active:
            raise RequestError(
                RESOURCE_LIMIT_EXCEEDED,
                f"MCP-over-ACP active request limit ({self.max_active}) exceeded",
            )
        inner: dict[str, Any] = params.params if isinstance(params.params, dict) else {}
        meta_value: Any = inner.get("_meta")
        meta = (
            cast("dict[str, Any]", meta_value) if isinstance(meta_value, dict) else {}
        )
        version = meta.get(PROTOCOL_VERSION_META_KEY)
        if not isinstance(version, str):
            return _mcp_error(
                INVALID_PARAMS,
                f"Invalid params: missing {PROTOCOL_VERSION_META_KEY} in params._meta",
            )
        token = meta.get("progressToken")
        exchange = _Exchange(
            transport=TransportContext(kind="acp", can_send_request=False),
            request_id=params.request_id,
            server_id=params.server_id,
            send=notify,
            progress_token=token if isinstance(token, (str, int)) else None,
        )
        offered.active.add(params.request_id)
        try:
            connection = Connection.from_envelope(
                version,
                meta.get(CLIENT_INFO_META_KEY),
                meta.get(CLIENT_CAPABILITIES_META_KEY),
            )
            async with offered.server.lifespan(offered.server) as state:
                result = await serve_one(
                    offered.server,
                    exchange,
                    params.method,
                    inner,
                    connection=connection,
                    lifespan_state=state,
                )
        except Exception as exc:
            error = modern_error_data(exc)
            return _mcp_error(error.code, error.message, error.data)
        finally:
            offered.active.discard(params.request_id)
        return v1.MessageMcpResponseResult(result=result)


def _mcp_error(code: int, message: str, data: Any = None) -> v1.MessageMcpResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return v1.MessageMcpResponseError(error=v1.McpError(body))
