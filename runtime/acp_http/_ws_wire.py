"""The client side of ACP over WebSocket (wsproto over an anyio socket).

:class:`WebSocketWire` connects to ``ws://`` (or ``wss://``) ``HOST/acp``
with the bearer token and the cookie jar's cookies on the upgrade, keeps the
``Set-Cookie`` it answers with, then carries each line of the local
connection as one text message, and each text message back as a line.
Binary messages are ignored.  A text message over ``max_message_bytes`` is
judged as every reader judges an over-long line (``_lines.hand_on``: framed
by ``acp_core.LineBuffer``, discarded while it streams; a request answered
-32600 to the server, an answer an error for its local caller, a
notification dropped); the wire goes on.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Mapping
from functools import partial
from urllib.parse import urlsplit

import anyio
import anyio.abc
import httpx
import wsproto
import wsproto.events as ws
from acp_core import LineBuffer, Oversized

from ._http_wire import HttpError
from ._lines import READ_CHUNK, hand_on, read_lines

__all__ = ["WebSocketWire"]

log = logging.getLogger("acp_http")


class WebSocketWire:
    """One WebSocket carrying a local connection's lines."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        cookies: httpx.Cookies | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.cookies = cookies if cookies is not None else httpx.Cookies()
        self.max_message_bytes = max_message_bytes
        self.ssl_context = ssl_context
        self.connection_id: str | None = None
        self.error: HttpError | None = None
        self._ws = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
        self._sock: anyio.abc.ByteStream | None = None
        self._send_lock = anyio.Lock()
        #: one writer at a time on the local stream (inbound, answers to oversized lines)
        self._local_lock = anyio.Lock()

    async def connect(self) -> None:
        """Open the socket and upgrade it (:class:`HttpError` if refused)."""
        parts = urlsplit(self.url)
        secure = parts.scheme in ("wss", "https")
        host = parts.hostname or "127.0.0.1"
        port = parts.port or (443 if secure else 80)
        try:
            if secure:
                context = self.ssl_context or ssl.create_default_context()
                self._sock = await anyio.connect_tcp(
                    host, port, ssl_context=context, tls_hostname=host
                )
            else:
                self._sock = await anyio.connect_tcp(host, port)
        except OSError as error:
            raise HttpError(0, f"cannot connect to {host}:{port}: {error}") from None
        http_url = ("https" if secure else "http") + self.url[len(parts.scheme) :]
        probe = httpx.Request("GET", http_url)
        self.cookies.set_cookie_header(probe)
        extra = [(k.encode(), v.encode()) for k, v in self.headers.items()]
        if "cookie" in probe.headers:
            extra.append((b"cookie", probe.headers["cookie"].encode()))
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        netloc = parts.netloc.rsplit("@", 1)[-1]
        await self._sock.send(
            self._ws.send(ws.Request(host=netloc, target=target, extra_headers=extra))
        )
        while True:
            for event in self._ws.events():
                if isinstance(event, ws.AcceptConnection):
                    names = {
                        k.decode().lower(): v.decode() for k, v in event.extra_headers
                    }
                    self.connection_id = names.get("acp-connection-id")
                    cookies = [
                        (k.decode(), v.decode())
                        for k, v in event.extra_headers
                        if k.lower() == b"set-cookie"
                    ]
                    if cookies:
                        self.cookies.extract_cookies(
                            httpx.Response(101, headers=cookies, request=probe)
                        )
                    return
                if isinstance(event, ws.RejectConnection):
                    raise HttpError(
                        event.status_code, "the WebSocket upgrade was refused"
                    )
            data = await self._receive_raw()
            if not data:
                raise HttpError(0, "the server closed the socket during the upgrade")
            self._ws.receive_data(data)

    async def _receive_raw(self) -> bytes:
        assert self._sock is not None
        try:
            return await self._sock.receive(READ_CHUNK)
        except (
            anyio.EndOfStream,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            OSError,
        ):
            return b""

    async def _send_raw(self, data: bytes) -> None:
        assert self._sock is not None
        async with self._send_lock:
            await self._sock.send(data)

    async def run(self, local: anyio.abc.ByteStream) -> None:
        """Carry lines both ways until either side closes."""
        try:
            async with anyio.create_task_group() as task_group:
                scope = task_group.cancel_scope
                task_group.start_soon(self._guarded, self._inbound(local, scope), scope)
                reading = read_lines(
                    local,
                    self._send_lines,
                    max_message_size=self.max_message_bytes,
                    answer_sender=partial(self._to_local, local),
                )
                await self._guarded(reading, scope)
                scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.aclose_forcefully(local)
                await self._close()

    async def _guarded(self, work: Awaitable[None], scope: anyio.CancelScope) -> None:
        try:
            await work
        except HttpError as error:
            self.error = self.error or error
            log.warning("remote ACP connection ended: %s", error)
            scope.cancel()

    async def _send_lines(self, lines: list[bytes]) -> None:
        data = b"".join(
            self._ws.send(ws.TextMessage(data=line.decode("utf-8", "replace")))
            for line in lines
        )
        try:
            await self._send_raw(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise HttpError(0, "the WebSocket closed") from None

    async def _inbound(
        self, local: anyio.abc.ByteStream, scope: anyio.CancelScope
    ) -> None:
        # the server's text messages as lines, by the one framer: one past the
        # bound is discarded while it streams (its ends kept for the verdict)
        lines = LineBuffer(max_message_size=self.max_message_bytes)
        to_local = partial(self._lines_to_local, local)
        limit = self.max_message_bytes
        while True:
            data = await self._receive_raw()
            if not data:
                self.error = HttpError(0, "the server closed the WebSocket")
                scope.cancel()
                return
            self._ws.receive_data(data)
            out: list[bytes | Oversized] = []
            for event in self._ws.events():
                if isinstance(event, ws.TextMessage):
                    out += lines.feed(event.data.encode())
                    if event.message_finished:
                        out += lines.feed(b"\n")
                elif isinstance(event, ws.Ping):
                    await self._send_raw(self._ws.send(event.response()))
                elif isinstance(event, ws.CloseConnection):
                    if (
                        self._ws.state
                        is wsproto.connection.ConnectionState.REMOTE_CLOSING
                    ):
                        await self._send_raw(self._ws.send(event.response()))
                    self.error = HttpError(
                        0, f"the server closed the WebSocket ({event.code})"
                    )
                    await hand_on(out, to_local, limit, self._answer_server)
                    scope.cancel()
                    return
            await hand_on(out, to_local, limit, self._answer_server)

    async def _answer_server(self, line: bytes) -> None:
        """The wire's own answer to the server (an over-long request's -32600)."""
        await self._send_lines([line])

    async def _lines_to_local(
        self, local: anyio.abc.ByteStream, lines: list[bytes]
    ) -> None:
        """Lines for the local connection, in one write."""
        await self._to_local(local, b"\n".join(lines))

    async def _to_local(self, local: anyio.abc.ByteStream, data: bytes) -> None:
        """Write ``data`` to the local connection (a line without its
        ``\\n`` gets one)."""
        if not data.endswith(b"\n"):
            data += b"\n"
        async with self._local_lock:
            await local.send(data)

    async def _close(self) -> None:
        sock = self._sock
        if sock is None:
            return
        self._sock = None
        with anyio.move_on_after(2):
            try:
                if self._ws.state is wsproto.connection.ConnectionState.OPEN:
                    await sock.send(self._ws.send(ws.CloseConnection(code=1000)))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass
        await anyio.aclose_forcefully(sock)
