"""Clients of a remote agent: the same ``ClientSideConnection`` as ``spawn_agent``.

::

    async with acp_http.connect_http("https://host/acp", MyClient, token=T) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))

    async with acp_http.connect_websocket("wss://host/acp", MyClient) as conn:
        ...

Under trio these give an ``acp_trio.ClientSideConnection``; under asyncio,
:func:`connect_http_asyncio` and :func:`connect_websocket_asyncio` give an
``acp_asyncio`` one.  The transport (:class:`~acp_http.HttpWire`,
:class:`~acp_http.WebSocketWire`) runs beside the connection and talks to it
over a socket pair, as a subprocess agent would over its pipes.

Cookies: one ``httpx.Cookies`` jar (``cookies=``, or a fresh one) is kept for
the connection's requests and streams and the WebSocket upgrade; pass the same
jar to the next connection to keep a load balancer's affinity.  A connection
that fails (the server went away, HTTP 401/403/404/410) ends: its pending
calls fail with ``ConnectionClosed`` and ``conn`` ... the wire's ``error``
says why.  Reconnecting is the caller's, as the RFD says: open a new
connection, ``initialize``, then ``session/load`` (or ``session/resume``) the
session id you kept.
"""

from __future__ import annotations

import functools
import socket
import ssl
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import httpx
from acp_core import AgentT, Limits

if TYPE_CHECKING:
    import acp_asyncio
    import acp_trio

from ._http_wire import HttpWire
from ._ws_wire import WebSocketWire

__all__ = [
    "connect_http",
    "connect_http_asyncio",
    "connect_websocket",
    "connect_websocket_asyncio",
    "http_client",
]

#: SSE streams live as long as the connection: no read timeout
_TIMEOUT = httpx.Timeout(30.0, read=None)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The default TLS context, built once (it loads the CA bundle)."""
    return ssl.create_default_context()


def http_client(
    url: str, *, cookies: httpx.Cookies | None = None, http2: bool = True
) -> httpx.AsyncClient:
    """An httpx client for ``url``: HTTP/2 (prior knowledge on ``http://``), a cookie jar."""
    cleartext = url.startswith("http://")
    client = httpx.AsyncClient(
        http1=not (http2 and cleartext),
        http2=http2,
        # no TLS on http://: skip building a context (loading the CA bundle
        # costs more than the rest of a connection); one shared one for https://
        verify=False if cleartext else _tls_context(),
        timeout=_TIMEOUT,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
    )
    if cookies is not None:
        # share the caller's jar (httpx's cookies= would copy it)
        client.cookies.jar = cookies.jar
    return client


def _headers(token: str | None, headers: Mapping[str, str] | None) -> dict[str, str]:
    merged = dict(headers or {})
    if token is not None:
        merged["authorization"] = f"Bearer {token}"
    return merged


@asynccontextmanager
async def _wired(
    run: Callable[[anyio.abc.ByteStream], Any], http: httpx.AsyncClient | None
) -> AsyncGenerator[socket.socket, None]:
    """Run a wire on one end of a socket pair; yield the other end."""
    ours, theirs = socket.socketpair()
    try:
        local = await anyio.abc.UNIXSocketStream.from_socket(ours)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(run, local)
            yield theirs
            # the connection closed its end: the wire sees EOF, DELETEs, ends
        if http is not None:
            await http.aclose()
    finally:
        theirs.close()


@asynccontextmanager
async def connect_http(
    url: str,
    client: acp_trio.ClientOffer[AgentT],
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    cookies: httpx.Cookies | None = None,
    http: httpx.AsyncClient | None = None,
    http2: bool = True,
    limits: Limits | None = None,
    unstable: bool = False,
) -> AsyncGenerator[acp_trio.ClientSideConnection[AgentT], None]:
    """An ``acp_trio.ClientSideConnection`` to the agent at ``url`` over Streamable HTTP.

    ``client`` is what :func:`acp_trio.connect_to_agent` takes; ``token`` is
    sent as ``Authorization: Bearer``; ``http`` is your own httpx client
    (HTTP/2 with a cookie jar by default: :func:`http_client`; ``http2=False``
    for a server that speaks HTTP/1.1 only, such as uvicorn).
    """
    import acp_trio
    import trio

    owned = http is None
    http = http or http_client(url, cookies=cookies, http2=http2)
    wire = HttpWire(
        url, http, headers=_headers(token, headers), max_message_bytes=_max(limits)
    )
    async with _wired(wire.run, http if owned else None) as sock:
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
        async with acp_trio.connect_to_agent(
            stream, client, limits=limits, unstable=unstable
        ) as conn:
            yield conn


@asynccontextmanager
async def connect_websocket(
    url: str,
    client: acp_trio.ClientOffer[AgentT],
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    cookies: httpx.Cookies | None = None,
    limits: Limits | None = None,
    unstable: bool = False,
) -> AsyncGenerator[acp_trio.ClientSideConnection[AgentT], None]:
    """An ``acp_trio.ClientSideConnection`` to the agent at ``url`` (``ws://`` or ``wss://``)."""
    import acp_trio
    import trio

    wire = WebSocketWire(
        url,
        headers=_headers(token, headers),
        cookies=cookies,
        max_message_bytes=_max(limits),
    )
    await wire.connect()
    async with _wired(wire.run, None) as sock:
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
        async with acp_trio.connect_to_agent(
            stream, client, limits=limits, unstable=unstable
        ) as conn:
            yield conn


@asynccontextmanager
async def connect_http_asyncio(
    url: str,
    client: acp_asyncio.ClientOffer[AgentT],
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    cookies: httpx.Cookies | None = None,
    http: httpx.AsyncClient | None = None,
    http2: bool = True,
    limits: Limits | None = None,
    unstable: bool = False,
) -> AsyncGenerator[acp_asyncio.ClientSideConnection[AgentT], None]:
    """:func:`connect_http` under asyncio: an ``acp_asyncio.ClientSideConnection``."""
    import asyncio

    import acp_asyncio

    owned = http is None
    http = http or http_client(url, cookies=cookies, http2=http2)
    wire = HttpWire(
        url, http, headers=_headers(token, headers), max_message_bytes=_max(limits)
    )
    async with _wired(wire.run, http if owned else None) as sock:
        reader, writer = await asyncio.open_connection(sock=sock)
        async with acp_asyncio.connect_to_agent(
            reader, writer, client, limits=limits, unstable=unstable
        ) as conn:
            yield conn


@asynccontextmanager
async def connect_websocket_asyncio(
    url: str,
    client: acp_asyncio.ClientOffer[AgentT],
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    cookies: httpx.Cookies | None = None,
    limits: Limits | None = None,
    unstable: bool = False,
) -> AsyncGenerator[acp_asyncio.ClientSideConnection[AgentT], None]:
    """:func:`connect_websocket` under asyncio: an ``acp_asyncio.ClientSideConnection``."""
    import asyncio

    import acp_asyncio

    wire = WebSocketWire(
        url,
        headers=_headers(token, headers),
        cookies=cookies,
        max_message_bytes=_max(limits),
    )
    await wire.connect()
    async with _wired(wire.run, None) as sock:
        reader, writer = await asyncio.open_connection(sock=sock)
        async with acp_asyncio.connect_to_agent(
            reader, writer, client, limits=limits, unstable=unstable
        ) as conn:
            yield conn


def _max(limits: Limits | None) -> int:
    return (limits or Limits()).max_message_size
