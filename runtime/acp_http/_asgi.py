"""The ASGI 3 application: ACP over Streamable HTTP and WebSocket on ``/acp``.

::

    app = acp_http.asgi_app(acp_http.InProcessAgent({1: MyAgent}))
    # hypercorn module:app   |   uvicorn module:app

========  ===================  ====================================================
method    headers              answer
========  ===================  ====================================================
POST      (no connection id)   ``initialize``: 200, the agent's JSON answer and
                               ``Acp-Connection-Id``; anything else 400
POST      Acp-Connection-Id    202 (the answer comes on a stream); 400/404/409/
                               413/415/429/501 with a JSON-RPC error body
GET       Acp-Connection-Id    the connection-scoped SSE stream
GET       + Acp-Session-Id     the session-scoped SSE stream
GET       Upgrade: websocket   a new connection over one WebSocket
DELETE    Acp-Connection-Id    202: the connection and its agent end
========  ===================  ====================================================

Every request (and the upgrade) first passes the ``Host`` and ``Origin``
checks (:mod:`acp_http._guard`: 403, nothing started), then ``authorize``; a
request refused for its headers is answered before its body is read
(:mod:`acp_http._body`).  The server's connections run in a task group opened
by the ASGI lifespan, which both hypercorn and uvicorn run: what fails in one
connection ends that connection; if the task group itself fails, every
connection ends and so does the process (:data:`EXIT_SHARED_FAILURE`).
"""

from __future__ import annotations

import hmac
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import msgspec

from ._agents import AgentLauncher
from ._body import RequestBody
from ._connection import FLUSH_SECONDS, Connection, Refusal, Registry
from ._guard import HostGuard
from ._limits import HttpLimits
from ._outbox import NOT_READY, Outbox
from ._routing import MessageError, Scope, decode_envelope, post_rule

__all__ = ["EXIT_SHARED_FAILURE", "AcpHttpApp", "Authorize", "asgi_app", "bearer_token"]

log = logging.getLogger("acp_http")

#: The exit status of a server process whose shared machinery failed (the
#: task group its connections run in): every connection and agent is ended
#: first (EX_SOFTWARE).
EXIT_SHARED_FAILURE = 70


def end_process(status: int) -> None:
    """End this process with ``status`` at once (logs flushed): neither ASGI
    server ends on a failed lifespan after its startup, and a server that
    stays up answering 500 is restarted by no supervisor."""
    logging.shutdown()
    sys.stderr.flush()
    os._exit(status)


# loose on purpose: each server types its own events (hypercorn: TypedDicts)
Scope_ = Mapping[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]

#: Decides from a request's headers (lower-case names) whether it may pass.
Authorize = Callable[[Mapping[str, str]], bool]

CONNECTION_HEADER = "acp-connection-id"
SESSION_HEADER = "acp-session-id"
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
]
_KEEPALIVE = b": keepalive\n\n"
#: the largest piece of an SSE body given to the server in one send
SEND_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class _StreamTarget:
    """What an SSE GET reads: its connection's outbox of its stream."""

    connection: Connection
    outbox: Outbox


def bearer_token(token: str) -> Authorize:
    """An :data:`Authorize` accepting ``Authorization: Bearer <token>`` only."""
    expected = f"Bearer {token}".encode()

    def authorize(headers: Mapping[str, str]) -> bool:
        given = headers.get("authorization", "").encode()
        return hmac.compare_digest(given, expected)

    return authorize


def _error_body(code: int, message: str, request_id: object = None) -> bytes:
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": code, "message": message},
        }
    )


class AcpHttpApp:
    """ACP on ``path`` for ASGI 3 servers; one agent per connection.

    ``launcher`` starts each connection's agent (:class:`InProcessAgent`,
    :class:`CommandAgent`); ``limits`` bounds what the server holds
    (:class:`HttpLimits`); ``authorize`` (or ``token``: a bearer token) is
    asked on every request and WebSocket upgrade; ``affinity_cookie``
    (``name=value``) is set on ``initialize`` answers and upgrades so that a
    load balancer can send a connection's requests to this worker.

    ``allowed_hosts`` and ``allowed_origins`` replace the default rules of the
    ``Host`` and ``Origin`` headers (a request on a loopback address must name
    a loopback host, and come from no browser page but a loopback one;
    elsewhere any ``Host``, no browser page): a request outside them is
    answered 403 (an upgrade refused) before anything starts.  Host names
    (``agents.example``, ``agents.example:8443``) and origins
    (``https://app.example``); ``"*"`` allows any.
    """

    def __init__(
        self,
        launcher: AgentLauncher,
        *,
        limits: HttpLimits | None = None,
        authorize: Authorize | None = None,
        token: str | None = None,
        affinity_cookie: str | None = None,
        path: str = "/acp",
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
    ) -> None:
        if authorize is not None and token is not None:
            raise ValueError("give authorize or token, not both")
        self.limits = limits or HttpLimits()
        self.registry = Registry(launcher, self.limits)
        self.authorize = bearer_token(token) if token is not None else authorize
        self.path = path
        self.guard = HostGuard(allowed_hosts, allowed_origins)
        self._cookie: list[tuple[bytes, bytes]] = []
        if affinity_cookie is not None:
            cookie = f"{affinity_cookie}; Path=/; HttpOnly; SameSite=Strict"
            self._cookie = [(b"set-cookie", cookie.encode("latin-1"))]

    async def __call__(self, scope: Scope_, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    # -- lifespan ----------------------------------------------------------

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        try:
            async with anyio.create_task_group() as task_group:
                self.registry.task_group = task_group
                task_group.start_soon(self.registry.sweep)
                await send({"type": "lifespan.startup.complete"})
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
                self.registry.task_group = None
                await self.registry.close_all()
                task_group.cancel_scope.cancel()
        except Exception:
            # the task group every connection runs in failed (each connection's
            # own failures end that connection only): no connection can be
            # served any more, so the process ends for its supervisor to see
            log.critical("the server's shared task group failed", exc_info=True)
            self.registry.task_group = None
            with anyio.CancelScope(shield=True):
                await self.registry.close_all()
            end_process(EXIT_SHARED_FAILURE)
        await send({"type": "lifespan.shutdown.complete"})

    # -- HTTP --------------------------------------------------------------

    async def _http(self, scope: Scope_, receive: Receive, send: Send) -> None:
        # every refusal is decided on the headers, before the body is read
        headers = _headers(scope)
        body = RequestBody(scope, headers, receive, self.limits)
        try:
            if scope["path"] != self.path:
                raise Refusal(404, -32600, f"no ACP endpoint at {scope['path'][:100]}")
            forbidden = self.guard.refusal(headers, scope.get("server"))
            if forbidden is not None:
                raise Refusal(403, -32000, forbidden)
            if self.authorize is not None and not self.authorize(headers):
                raise Refusal(401, -32000, "Unauthorized")
            method = scope["method"]
            if method == "POST":
                await self._post(headers, body, send)
                return
            if method == "DELETE":
                await self._delete(headers, send)
                return
            if method != "GET":
                raise Refusal(
                    405, -32600, f"method {method[:20]} not allowed on {self.path}"
                )
            target = self._stream_target(headers)
        except Refusal as refusal:
            await self._refuse(body, send, refusal, None)
            return
        # a stream lasts: it keeps neither the request's headers nor a body
        # reader (it reads the client's disconnect from ASGI's receive itself)
        del headers, body
        await self._stream(target.connection, target.outbox, receive, send)

    async def _refuse(
        self, body: RequestBody, send: Send, refusal: Refusal, request_id: object
    ) -> None:
        extra = [(b"www-authenticate", b"Bearer")] if refusal.status == 401 else []
        await body.answer(
            send,
            refusal.status,
            _error_body(refusal.code, refusal.message, request_id),
            extra,
        )

    async def _post(
        self, headers: Mapping[str, str], request: RequestBody, send: Send
    ) -> None:
        content_type = headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            raise Refusal(415, -32600, "Content-Type must be application/json")
        body = await request.read()
        try:
            envelope = decode_envelope(body, self.limits.max_nesting_depth)
        except MessageError as error:
            raise Refusal(error.status, error.code, error.message) from None
        request_id = None if envelope.id is msgspec.UNSET else envelope.id
        rule = post_rule(envelope, headers.get(SESSION_HEADER))
        connection_id = headers.get(CONNECTION_HEADER)
        try:
            if rule.error is not None:
                raise Refusal(rule.status, -32600, rule.error)
            if rule.scope is Scope.INITIALIZE:
                if connection_id is not None:
                    raise Refusal(
                        400,
                        -32600,
                        "initialize opens a new connection: no Acp-Connection-Id",
                    )
                await self._initialize(envelope, body, send)
                return
            connection = self._connection(connection_id)
            if connection.single_stream:
                raise Refusal(409, -32600, "a WebSocket connection takes no POST")
            await connection.send(envelope, rule, body)
        except Refusal as refusal:
            await self._refuse(request, send, refusal, request_id)
            return
        await _respond(send, 202, b"", [])

    async def _initialize(self, envelope: Any, body: bytes, send: Send) -> None:
        connection = await self.registry.create(single_stream=False)
        try:
            answer = await connection.initialize(envelope, body)
        except TimeoutError:
            await connection.close("no initialize answer")
            raise Refusal(
                504, -32603, "the agent did not answer initialize in time"
            ) from None
        except Refusal:
            await connection.close("initialize failed")
            raise
        headers = [(b"acp-connection-id", connection.id.encode()), *self._cookie]
        await _respond(send, 200, answer, headers)

    def _connection(self, connection_id: str | None) -> Connection:
        if connection_id is None:
            raise Refusal(400, -32600, "missing Acp-Connection-Id")
        connection = self.registry.get(connection_id)
        if connection is None:
            raise Refusal(404, -32600, "unknown Acp-Connection-Id")
        return connection

    def _stream_target(self, headers: Mapping[str, str]) -> _StreamTarget:
        """The outbox a GET reads, or :class:`Refusal`."""
        if headers.get("upgrade", "").lower() == "websocket":
            raise Refusal(
                426, -32600, "this server did not get a WebSocket upgrade scope"
            )
        if "text/event-stream" not in headers.get("accept", "").lower():
            raise Refusal(406, -32600, "Accept must include text/event-stream")
        connection = self._connection(headers.get(CONNECTION_HEADER))
        if connection.single_stream:
            raise Refusal(409, -32600, "a WebSocket connection has no SSE streams")
        session = headers.get(SESSION_HEADER)
        outbox = connection.outbox if session is None else connection.reserve(session)
        if outbox.has_reader:
            raise Refusal(409, -32600, "this stream already has a reader")
        if outbox.closed:
            raise Refusal(404, -32600, "this stream has ended")
        return _StreamTarget(connection, outbox)

    async def _stream(
        self, connection: Connection, outbox: Outbox, receive: Receive, send: Send
    ) -> None:
        outbox.has_reader = True
        outbox.quiet_since = anyio.current_time()
        connection.open_streams += 1
        try:
            await send(
                {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
            )
            ended = await self._send_events(connection, outbox, receive, send)
            if ended:  # else abandoned (or the client left): no more to send
                with anyio.move_on_after(FLUSH_SECONDS):
                    await send({"type": "http.response.body", "body": b""})
        except OSError:
            pass  # the client went away
        finally:
            outbox.has_reader = False
            connection.open_streams -= 1
            connection.last_active = anyio.current_time()

    async def _send_events(
        self, connection: Connection, outbox: Outbox, receive: Receive, send: Send
    ) -> bool:
        """Send what ``outbox`` gives as SSE events until it ends (True), the
        client leaves or a send is abandoned (False: :meth:`Connection.abandoning`).

        One task per stream, no task group: while the outbox is empty it
        waits for the client's next ASGI message (a disconnect), and a line
        queued (or the sweep's keepalive nudge, or the end) cancels that
        wait; an idle stream holds that wait and nothing else.
        """
        while True:
            lines = outbox.take_ready()
            if lines is None:
                return True
            if lines is NOT_READY:
                message = None
                with anyio.CancelScope() as waiting:
                    outbox.on_ready = waiting.cancel
                    try:
                        message = await receive()
                    finally:
                        outbox.on_ready = None
                if message is not None and message["type"] == "http.disconnect":
                    return False
                if waiting.cancel_called:
                    # woken by the first line of a burst (an update, its
                    # answer): what the pump routes meanwhile joins it
                    await anyio.lowlevel.checkpoint()
                continue
            # none: quiet for keepalive_seconds, the sweep woke it
            body = b"".join([b"data: " + line + b"\n\n" for line in lines])
            with anyio.CancelScope() as sending, connection.abandoning(sending):
                await _send_body(send, body or _KEEPALIVE)
            if sending.cancel_called:
                return False
            outbox.delivered()

    async def _delete(self, headers: Mapping[str, str], send: Send) -> None:
        connection = self._connection(headers.get(CONNECTION_HEADER))
        await connection.close("DELETE")
        await _respond(send, 202, b"", [])

    # -- WebSocket ---------------------------------------------------------

    async def _websocket(self, scope: Scope_, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        headers = _headers(scope)
        if (
            scope["path"] != self.path
            or self.guard.refusal(headers, scope.get("server")) is not None
            or (self.authorize is not None and not self.authorize(headers))
        ):
            await send({"type": "websocket.close", "code": 1008})  # before accept: 403
            return
        try:
            connection = await self.registry.create(single_stream=True)
        except Refusal as refusal:
            log.warning("WebSocket refused: %s", refusal.message)
            await send({"type": "websocket.close", "code": 1013})
            return
        accept_headers = [(b"acp-connection-id", connection.id.encode()), *self._cookie]
        await send({"type": "websocket.accept", "headers": accept_headers})
        connection.open_streams += 1
        try:
            async with anyio.create_task_group() as task_group:
                sends = task_group.cancel_scope
                task_group.start_soon(self._ws_out, connection, send, sends)
                with connection.abandoning(sends):
                    await self._ws_read(connection, receive, send)
                sends.cancel()
        except OSError:
            pass
        finally:
            connection.open_streams -= 1
            await connection.close("the WebSocket closed")

    async def _ws_out(
        self, connection: Connection, send: Send, scope: anyio.CancelScope
    ) -> None:
        outbox = connection.outbox
        while (lines := await outbox.take()) is not None:
            for line in lines:
                await send(
                    {"type": "websocket.send", "text": line.decode("utf-8", "replace")}
                )
            outbox.delivered()
        # the connection ended (its agent, a stall, a limit): close the socket
        with anyio.move_on_after(1):
            await send({"type": "websocket.close", "code": 1000})
        scope.cancel()

    async def _ws_read(
        self, connection: Connection, receive: Receive, send: Send
    ) -> None:
        limit = self.limits.max_body_bytes
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                continue  # binary frames are ignored (RFD)
            data = text.encode()
            if len(data) > limit:
                await send({"type": "websocket.close", "code": 1009})
                return
            try:
                envelope = decode_envelope(data, self.limits.max_nesting_depth)
            except MessageError as error:
                ident = None if error.response else error.ident
                error_line = _error_body(error.code, error.message, ident)
                await connection.queue(connection.outbox, error_line)
                continue
            try:
                await connection.send(envelope, post_rule(envelope, None), data)
            except Refusal as refusal:
                if refusal.status == 404:
                    return
                if envelope.is_request:  # a refused notification gets no answer
                    request_id = None if envelope.id is msgspec.UNSET else envelope.id
                    error_line = _error_body(refusal.code, refusal.message, request_id)
                    await connection.queue(connection.outbox, error_line)


#: :class:`AcpHttpApp` by its factory name (the same arguments, the same app)
asgi_app = AcpHttpApp


def _headers(scope: Scope_) -> dict[str, str]:
    return {
        name.decode("latin-1").lower(): value.decode("latin-1")
        for name, value in scope["headers"]
    }


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    all_headers = list(headers)
    if body:
        all_headers.append((b"content-type", b"application/json"))
    all_headers.append((b"content-length", str(len(body)).encode()))
    await send(
        {"type": "http.response.start", "status": status, "headers": all_headers}
    )
    await send({"type": "http.response.body", "body": body})


async def _send_body(send: Send, body: bytes) -> None:
    """``body`` as SSE data, in pieces of at most ``SEND_CHUNK`` bytes (what a
    server holds of a send that does not complete: the rest stays in the
    connection's budget)."""
    for start in range(0, len(body), SEND_CHUNK):
        piece = body[start : start + SEND_CHUNK]
        await send({"type": "http.response.body", "body": piece, "more_body": True})
