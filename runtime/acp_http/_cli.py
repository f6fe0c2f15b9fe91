"""``python -m acp_http serve|connect``: bridges between stdio agents and remote ACP.

``serve --listen HOST:PORT [--token TOKEN] -- AGENT_CMD...``
    exposes a stdio agent at ``http://HOST:PORT/acp`` (Streamable HTTP over
    HTTP/2 or HTTP/1.1, and WebSocket), on hypercorn: one agent process per
    connection, its process group ended with the connection.  The default
    listen address is ``127.0.0.1:8000``; ``--listen fd://N`` serves a socket
    already listening on descriptor N.

``connect [--token TOKEN] URL``
    is a stdio agent that forwards to the remote endpoint ``URL`` (``http(s)://``:
    Streamable HTTP; ``ws(s)://``: WebSocket), so an editor that launches only
    local commands can use a remote agent.

The token may come from the ``ACP_HTTP_TOKEN`` environment variable instead
(which other local users cannot read in the process list).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.abc
import trio
import trio.lowlevel

from ._agents import CommandAgent
from ._asgi import asgi_app
from ._client import http_client
from ._http_wire import HttpWire
from ._limits import HttpLimits
from ._ws_wire import WebSocketWire

__all__ = ["main"]

log = logging.getLogger("acp_http")


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
    serve.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD [ARGS...]")
    connect = commands.add_parser(
        "connect", help="a stdio agent forwarding to a remote endpoint"
    )
    connect.add_argument(
        "--token", help="bearer token sent on every request (or $ACP_HTTP_TOKEN)"
    )
    connect.add_argument(
        "--http1", action="store_true", help="HTTP/1.1 only (a server without HTTP/2)"
    )
    connect.add_argument("url", help="http(s)://HOST/acp or ws(s)://HOST/acp")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a bridge command; the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="acp_http: %(message)s", stream=sys.stderr
    )
    token: str | None = args.token or os.environ.get("ACP_HTTP_TOKEN") or None
    if args.command == "serve":
        command = list(args.agent)
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            _parser().error("serve needs an agent command after --")
        trio.run(
            _serve,
            args.listen,
            command,
            token,
            args.affinity_cookie,
            args.max_connections,
        )
        return 0
    trio.run(_connect, args.url, token, not args.http1)
    return 0


async def _serve(
    listen: str,
    command: list[str],
    token: str | None,
    affinity_cookie: str | None,
    max_connections: int,
) -> None:
    from hypercorn.config import Config

    # its serve() is typed over hypercorn's own scope types, not ASGI's mappings
    hypercorn_trio: Any = importlib.import_module("hypercorn.trio")

    limits = HttpLimits(max_connections=max_connections)
    app = asgi_app(
        CommandAgent(command),
        limits=limits,
        token=token,
        affinity_cookie=affinity_cookie,
    )
    config = Config()
    config.bind = [listen]
    config.accesslog = None
    # a WebSocket frame past the app's bound is refused as it streams
    config.websocket_max_message_size = limits.max_body_bytes
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

        async def stop() -> None:
            async for _ in signals:
                return

        await hypercorn_trio.serve(app, config, shutdown_trigger=stop)


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


async def _connect(url: str, token: str | None, http2: bool) -> None:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    local = _StdioStream()
    if url.startswith(("ws://", "wss://")):
        wire = WebSocketWire(url, headers=headers)
        await wire.connect()
        await wire.run(local)
        error = wire.error
    else:
        async with http_client(url, http2=http2) as http:
            # a connection of its own for each stream, as connect_http's
            streams = functools.partial(
                http_client, url, cookies=http.cookies, http2=False
            )
            http_wire = HttpWire(url, http, headers=headers, stream_http=streams)
            await http_wire.run(local)
            error = http_wire.error
    if error is not None:
        log.warning("%s", error)
