"""acp_http: ACP over Streamable HTTP and WebSocket (the upstream RFD).

A server (an ASGI 3 application for hypercorn or uvicorn) giving each remote
connection its own agent::

    import acp_http
    app = acp_http.asgi_app(acp_http.InProcessAgent({1: MyAgent}))
    # hypercorn mymodule:app --bind 127.0.0.1:8000

and clients giving the same ``ClientSideConnection`` as ``spawn_agent``.
``python -m acp_http serve|connect`` bridges stdio agents and editors.
"""

try:
    import anyio as _anyio  # the extra's dependencies

    del _anyio
except ModuleNotFoundError as exc:  # packaging
    raise ModuleNotFoundError(
        "acp_http needs its extra: pip install 'acp-msgspec[http]'", name=exc.name
    ) from exc

from ._agents import AgentHandle, AgentLauncher, CommandAgent, InProcessAgent
from ._asgi import EXIT_SHARED_FAILURE, AcpHttpApp, Authorize, asgi_app, bearer_token
from ._client import (
    HttpOptions,
    WebSocketOptions,
    connect_http,
    connect_http_asyncio,
    connect_websocket,
    connect_websocket_asyncio,
    http_client,
    http_versions,
)
from ._h2_transport import H2Transport
from ._http_wire import HttpError, HttpVersions, HttpWire
from ._limits import HttpLimits
from ._ws_wire import WebSocketWire

__all__ = [
    "EXIT_SHARED_FAILURE",
    "AcpHttpApp",
    "AgentHandle",
    "AgentLauncher",
    "Authorize",
    "CommandAgent",
    "H2Transport",
    "HttpError",
    "HttpLimits",
    "HttpOptions",
    "HttpVersions",
    "HttpWire",
    "InProcessAgent",
    "WebSocketOptions",
    "WebSocketWire",
    "asgi_app",
    "bearer_token",
    "connect_http",
    "connect_http_asyncio",
    "connect_websocket",
    "connect_websocket_asyncio",
    "http_client",
    "http_versions",
]
