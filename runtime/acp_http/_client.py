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
over the in-memory seam (``acp_core.seam_ends``), as a subprocess agent would
over its pipes, with a pipe's bounds and no socket.

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

import contextlib
import functools
import ssl
import sys
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypedDict

import anyio
import anyio.abc
import httpx
from acp_core import AgentT, Limits, SeamEnd, seam_ends

if TYPE_CHECKING:
    import acp_asyncio
    import acp_trio

    if sys.version_info >= (3, 12):
        from typing import Unpack
    else:  # anyio's dependency
        from typing_extensions import Unpack

from ._h2_transport import H2Transport
from ._http_wire import HttpVersions, HttpWire
from ._resend import RETRIES
from ._seam import SeamStream
from ._ws_wire import WebSocketWire

__all__ = [
    "HttpOptions",
    "WebSocketOptions",
    "connect_http",
    "connect_http_asyncio",
    "connect_websocket",
    "connect_websocket_asyncio",
    "http_client",
    "http_versions",
]

#: SSE streams live as long as the connection: no read timeout
_TIMEOUT = httpx.Timeout(30.0, read=None)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The default TLS context, built once (it loads the CA bundle)."""
    return ssl.create_default_context()


@functools.cache
def _h2_tls_context() -> ssl.SSLContext:
    """The default TLS context of :class:`H2Transport` (its ALPN is its own)."""
    return ssl.create_default_context()


def http_client(
    url: str, *, cookies: httpx.Cookies | None = None, http2: bool | None = None
) -> httpx.AsyncClient:
    """An httpx client for ``url`` speaking what :func:`http_versions` says, a cookie jar.

    When it may speak HTTP/2 its transport is :class:`H2Transport`: every
    request and stream shares one HTTP/2 connection, and what comes for one
    never waits for another (httpx's own HTTP/2 lets it wait: see
    :mod:`acp_http._h2_transport`).  Open it with ``async with``: its
    connection's reader runs in a task of its own.
    """
    versions = http_versions(url, http2)
    cleartext = url.startswith("http://")
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
    # no TLS on http://: skip building a context (loading the CA bundle
    # costs more than the rest of a connection); one shared one for https://
    verify = False if cleartext else _tls_context()
    transport: httpx.AsyncBaseTransport | None = None
    if versions.http2:
        transport = H2Transport(
            ssl_context=None if cleartext else _h2_tls_context(),
            http1=versions.http1,
            http1_ssl_context=None if cleartext else _tls_context(),
            limits=limits,
        )
    client = httpx.AsyncClient(
        http1=versions.http1,
        http2=versions.http2,
        verify=verify,
        timeout=_TIMEOUT,
        limits=limits,
        transport=transport,
    )
    if cookies is not None:
        # share the caller's jar (httpx's cookies= would copy it)
        client.cookies.jar = cookies.jar
    return client


def http_versions(url: str, http2: bool | None = None) -> HttpVersions:
    """The HTTP versions a client of ``url`` offers, by the ``http2`` option.

    ``None`` (the default): HTTP/1.1 on ``http://`` (what every server speaks:
    uvicorn and the official SDK's server speak nothing else), HTTP/1.1 or
    HTTP/2 by ALPN on ``https://``.  ``True``: HTTP/2 with prior knowledge
    (h2c) on ``http://`` (hypercorn serves it), ALPN on ``https://``.
    ``False``: HTTP/1.1 only.
    """
    if http2 is False:
        return HttpVersions(
            True, False, "HTTP/1.1", "for HTTP/2 leave http2 unset (https://)"
        )
    if url.startswith("http://"):
        if http2:
            return HttpVersions(
                False,
                True,
                "HTTP/2 with prior knowledge (h2c)",
                "if the server speaks HTTP/1.1 only, leave http2 unset"
                " (connect: drop --http2)",
            )
        return HttpVersions(
            True,
            False,
            "HTTP/1.1",
            "for HTTP/2 without TLS pass http2=True (connect: --http2)",
        )
    return HttpVersions(
        True,
        True,
        "HTTP/2 or HTTP/1.1 by ALPN",
        "if the server's TLS fails, check its certificate and name;"
        " http2=False (connect: --http1) offers HTTP/1.1 alone",
    )


@asynccontextmanager
async def _wired(
    run: Callable[[anyio.abc.ByteStream], Any],
) -> AsyncGenerator[SeamEnd, None]:
    """Run a wire on one end of the in-memory seam; yield the other end."""
    ours, theirs = seam_ends()
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(run, SeamStream(ours))
            yield theirs
            # the connection closed its end: the wire sees EOF, DELETEs, ends
    finally:
        theirs.close()


class WebSocketOptions(TypedDict, total=False):
    """The keywords of :func:`connect_websocket` and :func:`connect_websocket_asyncio`."""

    #: sent as ``Authorization: Bearer`` (default: none)
    token: str | None
    #: more headers for every request and the upgrade
    headers: Mapping[str, str] | None
    #: the jar to keep the server's cookies in (default: a fresh one)
    cookies: httpx.Cookies | None
    #: the connection's bounds (:class:`acp_core.Limits`; default: its defaults)
    limits: Limits | None
    #: speak the schema's unstable surface (default False)
    unstable: bool


class HttpOptions(WebSocketOptions, total=False):
    """The keywords of :func:`connect_http` and :func:`connect_http_asyncio`."""

    #: your own httpx client, entered (default: :func:`http_client`, closed
    #: with the connection; over HTTP/2 one connection carries the POSTs and
    #: the SSE streams: see :class:`HttpWire`)
    http: httpx.AsyncClient | None
    #: None (default): HTTP/1.1 on ``http://``, ALPN on ``https://``; True:
    #: HTTP/2 with prior knowledge on ``http://``; False: HTTP/1.1 only
    #: (:func:`http_versions`)
    http2: bool | None
    #: how many more times a POST is sent, on a fresh connection, when the
    #: server ended its connection under it and provably did not process it
    #: (or it carries an answer), and a stream is reopened in a row when its
    #: connection failed (default 2; 0: never; see :class:`HttpWire`)
    retries: int


@asynccontextmanager
async def _http_seam(url: str, options: HttpOptions) -> AsyncGenerator[SeamEnd, None]:
    """A Streamable HTTP wire to ``url``: the seam end its connection talks over."""
    http = options.get("http")
    owned = http is None
    http2 = options.get("http2")
    if http is None:
        http = http_client(url, cookies=options.get("cookies"), http2=http2)
    versions = http_versions(url, http2)
    wire = HttpWire(
        url,
        http,
        headers=_headers(options),
        max_message_bytes=_max(options),
        versions=versions if owned else None,
        retries=options.get("retries", RETRIES),
    )
    async with contextlib.AsyncExitStack() as stack:
        if owned:  # entered: its HTTP/2 connection's reader runs in its task group
            await stack.enter_async_context(http)
        async with _wired(wire.run) as end:
            yield end


@asynccontextmanager
async def _websocket_seam(
    url: str, options: WebSocketOptions
) -> AsyncGenerator[SeamEnd, None]:
    """A WebSocket wire to ``url``, upgraded: the seam end its connection talks over."""
    wire = WebSocketWire(
        url,
        headers=_headers(options),
        cookies=options.get("cookies"),
        max_message_bytes=_max(options),
    )
    await wire.connect()
    async with _wired(wire.run) as end:
        yield end


@asynccontextmanager
async def _over_trio(
    end: SeamEnd, client: acp_trio.ClientOffer[AgentT], options: WebSocketOptions
) -> AsyncGenerator[acp_trio.ClientSideConnection[AgentT], None]:
    import acp_trio

    stream = acp_trio.MemoryStream(end)
    limits, unstable = options.get("limits"), options.get("unstable", False)
    connecting = acp_trio.connect_to_agent(
        stream, client, limits=limits, unstable=unstable
    )
    async with connecting as conn:
        yield conn


@asynccontextmanager
async def _over_asyncio(
    end: SeamEnd,
    client: acp_asyncio.ClientOffer[AgentT],
    options: WebSocketOptions,
) -> AsyncGenerator[acp_asyncio.ClientSideConnection[AgentT], None]:
    import acp_asyncio

    # the seam read and written by the connection itself (no asyncio streams)
    limits, unstable = options.get("limits"), options.get("unstable", False)
    async with acp_asyncio.connect_to_agent_in_memory(
        end, client, limits=limits, unstable=unstable
    ) as conn:
        yield conn


@asynccontextmanager
async def connect_http(
    url: str, client: acp_trio.ClientOffer[AgentT], **options: Unpack[HttpOptions]
) -> AsyncGenerator[acp_trio.ClientSideConnection[AgentT], None]:
    """An ``acp_trio.ClientSideConnection`` to the agent at ``url`` over Streamable HTTP.

    ``client`` is what :func:`acp_trio.connect_to_agent` takes; the keywords
    are :class:`HttpOptions` (``token``, ``headers``, ``cookies``, ``http``,
    ``http2``, ``retries``, ``limits``, ``unstable``).
    """
    async with _http_seam(url, options) as end:
        async with _over_trio(end, client, options) as conn:
            yield conn


@asynccontextmanager
async def connect_websocket(
    url: str, client: acp_trio.ClientOffer[AgentT], **options: Unpack[WebSocketOptions]
) -> AsyncGenerator[acp_trio.ClientSideConnection[AgentT], None]:
    """An ``acp_trio.ClientSideConnection`` to the agent at ``url`` (``ws://`` or ``wss://``).

    The keywords are :class:`WebSocketOptions`.
    """
    async with _websocket_seam(url, options) as end:
        async with _over_trio(end, client, options) as conn:
            yield conn


@asynccontextmanager
async def connect_http_asyncio(
    url: str, client: acp_asyncio.ClientOffer[AgentT], **options: Unpack[HttpOptions]
) -> AsyncGenerator[acp_asyncio.ClientSideConnection[AgentT], None]:
    """:func:`connect_http` under asyncio: an ``acp_asyncio.ClientSideConnection``."""
    async with _http_seam(url, options) as end:
        async with _over_asyncio(end, client, options) as conn:
            yield conn


@asynccontextmanager
async def connect_websocket_asyncio(
    url: str,
    client: acp_asyncio.ClientOffer[AgentT],
    **options: Unpack[WebSocketOptions],
) -> AsyncGenerator[acp_asyncio.ClientSideConnection[AgentT], None]:
    """:func:`connect_websocket` under asyncio: an ``acp_asyncio.ClientSideConnection``."""
    async with _websocket_seam(url, options) as end:
        async with _over_asyncio(end, client, options) as conn:
            yield conn


def _headers(options: WebSocketOptions) -> dict[str, str]:
    merged = dict(options.get("headers") or {})
    token = options.get("token")
    if token is not None:
        merged["authorization"] = f"Bearer {token}"
    return merged


def _max(options: WebSocketOptions) -> int:
    return (options.get("limits") or Limits()).max_message_size
