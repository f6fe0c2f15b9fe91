"""``python -m acp_http serve|connect``: bridges between stdio agents and remote ACP.

``serve --listen HOST:PORT [--token TOKEN] -- AGENT_CMD...``
    exposes a stdio agent at ``http://HOST:PORT/acp`` (Streamable HTTP over
    HTTP/2 or HTTP/1.1, and WebSocket), on hypercorn's asyncio worker (see
    :func:`_serve`): one agent process per connection, its process group
    ended with the connection.  The default
    listen address is ``127.0.0.1:8000``; ``--listen fd://N`` serves a socket
    already listening on descriptor N.  Without a token it warns (every local
    program may run the agent), and on an address other than loopback it
    refuses to start unless ``--insecure-no-token`` says so.  Browsers are
    kept out by the ``Host`` and ``Origin`` checks (``--allow-host``,
    ``--allow-origin`` widen them; see :mod:`acp_http._guard`).

``connect [--token TOKEN] [--http1 | --http2] URL``
    is a stdio agent that forwards to the remote endpoint ``URL`` (``http(s)://``:
    Streamable HTTP; ``ws(s)://``: WebSocket), so an editor that launches only
    local commands can use a remote agent.  ``http://`` speaks HTTP/1.1 unless
    ``--http2`` (prior knowledge), ``https://`` HTTP/2 or HTTP/1.1 by ALPN
    unless ``--http1``.  It exits 1 when the remote connection failed
    (``initialize`` refused or unreachable included), after one line on stderr
    saying what was tried and what to change.

The token may come from the ``ACP_HTTP_TOKEN`` environment variable instead
(which other local users cannot read in the process list).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.abc
import trio
import trio.lowlevel

from ._agents import CommandAgent
from ._asgi import asgi_app
from ._client import http_client, http_versions
from ._guard import host_of, is_loopback
from ._http_wire import HttpWire
from ._limits import HttpLimits
from ._ws_wire import WebSocketWire

__all__ = ["main"]

log = logging.getLogger("acp_http")

#: requests one HTTP connection carries under ``serve`` (hypercorn's
#: ``keep_alive_max_requests``, 1000 by default: see :func:`_serve`)
KEEP_ALIVE_MAX_REQUESTS = 2**31


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m acp_http",
        description="Bridges between stdio agents and remote ACP.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="serve a stdio agent command over HTTP and WebSocket"
    )
    serve.add_argument(
        "--listen",
        default="127.0.0.1:8000",
        help="HOST:PORT or fd://N (default 127.0.0.1:8000)",
    )
    serve.add_argument(
        "--token", help="bearer token every request must carry (or $ACP_HTTP_TOKEN)"
    )
    serve.add_argument(
        "--affinity-cookie",
        help="NAME=VALUE set on each new connection, for a load balancer",
    )
    serve.add_argument(
        "--max-connections", type=int, default=HttpLimits().max_connections
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST",
        help="a Host a request may name (repeatable; default: loopback names"
        " on a loopback address, any elsewhere; * for any)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="a browser Origin allowed in (repeatable, e.g. https://app.example;"
        " default: loopback origins on a loopback address, none elsewhere)",
    )
    serve.add_argument(
        "--insecure-no-token",
        action="store_true",
        help="serve on an address other than loopback without a token"
        " (anyone reaching it runs the agent as you)",
    )
    serve.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD [ARGS...]")
    connect = commands.add_parser(
        "connect", help="a stdio agent forwarding to a remote endpoint"
    )
    connect.add_argument(
        "--token", help="bearer token sent on every request (or $ACP_HTTP_TOKEN)"
    )
    versions = connect.add_mutually_exclusive_group()
    versions.add_argument(
        "--http1",
        dest="http2",
        action="store_const",
        const=False,
        help="HTTP/1.1 only, on https:// too (default: HTTP/1.1 on http://,"
        " HTTP/2 or HTTP/1.1 by ALPN on https://)",
    )
    versions.add_argument(
        "--http2",
        dest="http2",
        action="store_const",
        const=True,
        help="HTTP/2 with prior knowledge (h2c) on http://, for a server that speaks it",
    )
    connect.add_argument("url", help="http(s)://HOST/acp or ws(s)://HOST/acp")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a bridge command; the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="acp_http: %(message)s", stream=sys.stderr
    )
    # httpx logs every request at INFO: the bridge's stderr says what failed only
    logging.getLogger("httpx").setLevel(logging.WARNING)
    token: str | None = args.token or os.environ.get("ACP_HTTP_TOKEN") or None
    if args.command == "serve":
        command = list(args.agent)
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            _parser().error("serve needs an agent command after --")
        if token is None:
            _no_token(args.listen, args.insecure_no_token)
        anyio.run(
            _serve,
            args.listen,
            command,
            token,
            args.affinity_cookie,
            args.max_connections,
            args.allow_host,
            args.allow_origin,
            backend="asyncio",
        )
        return 0
    failed = trio.run(_connect, args.url, token, args.http2)
    return 1 if failed else 0


def listens_locally(listen: str) -> bool:
    """Whether ``--listen`` is a loopback address or a Unix socket (``fd://N``:
    the address the socket is bound to)."""
    if listen.startswith("fd://"):
        with socket.socket(fileno=os.dup(int(listen[5:]))) as sock:
            if sock.family == socket.AF_UNIX:
                return True
            return is_loopback(sock.getsockname()[0])
    if listen.startswith("unix:"):
        return True
    return is_loopback(host_of(listen))


def _no_token(listen: str, insecure: bool) -> None:
    """Refuse to serve a network address without a token unless ``insecure``;
    warn otherwise."""
    if listens_locally(listen):
        log.warning(
            "serving %s without a token: every program of this machine may run"
            " the agent as you (browsers are kept out by the Host and Origin"
            " checks); give --token or $ACP_HTTP_TOKEN",
            listen,
        )
    elif insecure:
        log.warning(
            "serving %s without a token (--insecure-no-token): anyone who"
            " reaches it runs the agent as you",
            listen,
        )
    else:
        _parser().error(
            f"--listen {listen} is not a loopback address: give --token (or"
            " $ACP_HTTP_TOKEN), or --insecure-no-token to serve it to anyone"
        )


async def _serve(
    listen: str,
    command: list[str],
    token: str | None,
    affinity_cookie: str | None,
    max_connections: int,
    allowed_hosts: list[str] | None,
    allowed_origins: list[str] | None,
) -> None:
    """Serve on hypercorn's asyncio worker, not its trio one, where one client
    ends the server (hypercorn 0.18): DATA on an HTTP/2 stream whose
    application is done (a refused WebSocket upgrade over HTTP/2: a
    ``KeyError`` in ``protocol/h2.py``), or a WebSocket frame sent with its
    upgrade request while the application refuses it (an h11
    ``LocalProtocolError``).  The asyncio worker ends that connection alone."""
    from hypercorn.config import Config

    # its serve() is typed over hypercorn's own scope types, not ASGI's mappings
    hypercorn_asyncio: Any = importlib.import_module("hypercorn.asyncio")

    limits = HttpLimits(max_connections=max_connections)
    app = asgi_app(
        CommandAgent(command),
        limits=limits,
        token=token,
        affinity_cookie=affinity_cookie,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    config = Config()
    config.bind = [listen]
    config.accesslog = None
    # hypercorn's lines ("Running on ...") through our logger, once: its own
    # stderr handler would print each a second time beside the root one
    config.errorlog = logging.getLogger("acp_http.hypercorn")
    # a WebSocket message past the app's bound is closed 1009 at the bound
    # (hypercorn 0.18 goes on reading the frame: see HttpLimits.max_body_bytes)
    config.websocket_max_message_size = limits.max_body_bytes
    # hypercorn (0.18) ends an HTTP/2 connection at its 1000th request by a
    # GOAWAY naming the next request, which it then never answers: no count
    config.keep_alive_max_requests = KEEP_ALIVE_MAX_REQUESTS
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

        async def stop() -> None:
            async for _ in signals:
                return

        await hypercorn_asyncio.serve(app, config, shutdown_trigger=stop)


class _StdioStream(anyio.abc.ByteStream):
    """This process's stdin and stdout as one byte stream (trio's FdStream)."""

    def __init__(self) -> None:
        self._in = trio.lowlevel.FdStream(os.dup(0))
        self._out = trio.lowlevel.FdStream(os.dup(1))

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._in.receive_some(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def send(self, item: bytes) -> None:
        await self._out.send_all(item)

    async def send_eof(self) -> None:
        await self._out.aclose()

    async def aclose(self) -> None:
        await self._in.aclose()
        await self._out.aclose()


async def _connect(url: str, token: str | None, http2: bool | None) -> bool:
    """Bridge this process's stdio to ``url``; whether the remote connection failed."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    local = _StdioStream()
    if url.startswith(("ws://", "wss://")):
        wire = WebSocketWire(url, headers=headers)
        await wire.connect()
        await wire.run(local)
        if wire.error is not None:
            log.warning("%s", wire.error)
        return wire.error is not None
    async with http_client(url, http2=http2) as http:
        http_wire = HttpWire(
            url, http, headers=headers, versions=http_versions(url, http2)
        )
        await http_wire.run(local)  # logs its error once, as one line
        # a refused initialize was answered to the editor: a failure too
        return http_wire.error is not None or http_wire.initialized is False
