"""One JSON-RPC peer over one trio stream: correlation, routing, ordering.

:class:`Connection` is symmetric; :class:`~acp_trio.AgentSideConnection` and
:class:`~acp_trio.ClientSideConnection` orient it (which method table is
served, which is called) and add ACP's session rules.  The rules that live
here:

- incoming requests run concurrently, each in a task of the connection's
  nursery, inside its own cancel scope;
- incoming notifications are handled one at a time, in the order received;
- a response is released to its caller only after every notification
  received before it has been handled, so a turn's updates are applied
  before ``session_prompt`` returns.  A request made *from inside* a
  notification handler is exempt (it could never be released otherwise);
- the receive loop never waits on a handler or on the peer reading, so a
  slow handler cannot stall responses;
- when the peer goes away every pending request fails with
  :class:`~acp_trio.ConnectionClosed` and every handler is cancelled.

Example (a client, over an already-connected stream)::

    async with acp_trio.connect_to_agent(stream, client=MyClient) as conn:
        init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
"""

from __future__ import annotations

import contextvars
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import msgspec
import trio

from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    RequestError,
)
from ._framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    LineReader,
    LineWriter,
    Oversized,
    sniff_oversized,
)
from ._jsonrpc import (
    NOTIFICATION,
    REQUEST,
    Envelope,
    Id,
    decode_envelope,
    decode_error,
    encode_error,
    encode_id,
    encode_notification,
    encode_request,
    encode_result,
)
from ._schema import MethodSpec, Schema

__all__ = ["Connection", "Envelope", "PeerProxy", "Running"]

log = logging.getLogger("acp_trio")

#: Longest validation message echoed back in a -32602 ``data``.
MAX_ERROR_DETAIL: Final = 256
#: How long a closing connection may spend flushing queued messages.
FLUSH_GRACE: Final = 1.0

_NULL: Final = b"null"
_EMPTY_OBJECT: Final = b"{}"

# True inside the notification task: requests made there skip the ordering barrier.
_in_notification: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_trio_in_notification", default=False
)

Handler = Callable[[Any], Awaitable[Any]]


class _Pending:
    """An outgoing request waiting for its response."""

    __slots__ = ("event", "exempt", "failure", "method", "value")

    def __init__(self, method: MethodSpec, exempt: bool) -> None:
        self.method = method
        self.exempt = exempt
        self.event = trio.Event()
        self.value: Any = None
        self.failure: BaseException | None = None


class Running:
    """An incoming request being handled (one task, one cancel scope).

    ``cancel_reason`` tells how the scope was cancelled: ``"request"`` for
    ``$/cancel_request`` (answered -32800), ``"session"`` for a session-level
    cancel (answered with the method's "cancelled" result by the subclass).
    """

    __slots__ = ("cancel_reason", "method", "scope", "session_id")

    def __init__(self, method: MethodSpec, session_id: str | None) -> None:
        self.method = method
        self.session_id = session_id
        self.scope = trio.CancelScope()
        self.cancel_reason: str | None = None

    def cancel(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self.scope.cancel()


class _Batch:
    """Responses to the members of one incoming batch, sent as one array."""

    __slots__ = ("expected", "lines", "sealed", "writer")

    def __init__(self, writer: LineWriter) -> None:
        self.writer = writer
        self.lines: list[bytes] = []
        self.expected = 0
        self.sealed = False

    def add(self, line: bytes) -> None:
        self.lines.append(line.rstrip(b"\n"))
        self._flush()

    def seal(self) -> None:
        self.sealed = True
        self._flush()

    def _flush(self) -> None:
        if self.sealed and self.expected and len(self.lines) == self.expected:
            self.writer.send_nowait(b"[" + b",".join(self.lines) + b"]\n")
            self.expected = 0


class _VersionPeek(msgspec.Struct, rename="camel"):
    protocol_version: Any = None


_peek_decoder = msgspec.json.Decoder(_VersionPeek)


def peek_protocol_version(raw: bytes | msgspec.Raw) -> Any:
    """``protocolVersion`` of an initialize request or response, if readable."""
    try:
        return _peek_decoder.decode(raw).protocol_version
    except msgspec.MsgspecError:
        return None


def validation_data(exc: msgspec.ValidationError, root: str) -> dict[str, str]:
    """A bounded ``data`` for -32602: the failing path and a short message."""
    text = str(exc)
    path = "$"
    head, sep, tail = text.rpartition(" - at `")
    if sep and tail.endswith("`"):
        text, path = head, tail[:-1]
    path = root + path[1:]
    if len(text) > MAX_ERROR_DETAIL:
        text = text[: MAX_ERROR_DETAIL - 3] + "..."
    if len(path) > MAX_ERROR_DETAIL:
        path = path[: MAX_ERROR_DETAIL - 3] + "..."
    return {"path": path, "message": text}


class PeerProxy:
    """Calls the peer's methods by handler name: ``conn.agent.session_new(params)``.

    Requests return the decoded result; notifications return ``None`` once
    queued.  ``_``-prefixed extensions go through :meth:`ext_method` and
    :meth:`ext_notification`.
    """

    __slots__ = ("_conn",)

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def __getattr__(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        conn = self._conn
        method = conn._by_handler.get(name)
        if method is None:
            raise AttributeError(
                f"the peer has no method {name!r} in protocol v{conn.schema.version}"
            )

        async def call(params: Any) -> Any:
            return await conn.call(method, params)

        call.__name__ = name
        call.__qualname__ = f"PeerProxy.{name}"
        return call

    async def ext_method(self, method: str, params: Any) -> Any:
        """Call the ``_``-prefixed extension ``method``; returns the raw result (builtins)."""
        return await self._conn.ext_request(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send the ``_``-prefixed extension notification ``method``."""
        await self._conn.ext_notify(method, params)


class Connection:
    """A symmetric JSON-RPC 2.0 peer speaking one ACP schema version.

    Not instantiated directly: use the agent- or client-side subclass through
    :func:`~acp_trio.serve_agent`, :func:`~acp_trio.connect_to_agent`,
    :func:`~acp_trio.spawn_agent` or :func:`~acp_trio.serve_agent_stdio`.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        schema: Schema,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self.stream = stream
        self.max_message_size = max_message_size
        self._reader = LineReader(stream, max_message_size=max_message_size)
        self._writer = LineWriter(stream)
        self._pending: dict[Id, _Pending] = {}
        self._running: dict[Id, Running] = {}
        self._next_id = 0
        self._handlers: dict[str, Handler | None] = {}
        self._handler_obj: object | None = None
        self._notify_send, self._notify_receive = trio.open_memory_channel[
            tuple[Any, ...]
        ](math.inf)
        self._backlog = 0
        self._nursery: trio.Nursery | None = None
        self._cancel_scope = trio.CancelScope()
        self._closed = False
        self.closed = trio.Event()
        self.schema = schema
        self._by_handler: dict[str, MethodSpec] = {}
        self.bind(schema)

    # -- configuration -----------------------------------------------------------

    def bind(self, schema: Schema) -> None:
        """Speak ``schema`` from now on (after version negotiation)."""
        self.schema = schema
        self._by_handler = {m.handler: m for m in schema.outgoing.values()}
        self._handlers = {}

    def set_handler(self, obj: object | None) -> None:
        """Route incoming methods to ``obj``'s methods named by the table's handler names."""
        self._handler_obj = obj
        self._handlers = {}

    def _handler_for(self, method: MethodSpec) -> Handler | None:
        try:
            return self._handlers[method.name]
        except KeyError:
            handler = (
                getattr(self._handler_obj, method.handler, None)
                if self._handler_obj is not None
                else None
            )
            self._handlers[method.name] = handler
            return handler

    # -- running -------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the connection until the peer closes it or :meth:`close` is called."""
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._write_loop)
                try:
                    with self._cancel_scope:
                        async with trio.open_nursery() as nursery:
                            self._nursery = nursery
                            nursery.start_soon(self._notification_loop)
                            task_status.started()
                            await self._receive_loop()
                            nursery.cancel_scope.cancel()
                finally:
                    self._shutdown()
                    outer.cancel_scope.deadline = trio.current_time() + FLUSH_GRACE
        finally:
            self._shutdown()
            self.closed.set()

    def close(self) -> None:
        """Stop serving: pending requests fail, handlers are cancelled."""
        self._cancel_scope.cancel()

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        error = ConnectionClosed("connection closed")
        pending, self._pending = self._pending, {}
        for p in pending.values():
            p.failure = error
            p.event.set()

    async def _write_loop(self) -> None:
        try:
            await self._writer.run()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("peer stopped reading; closing")
            self.close()

    async def _receive_loop(self) -> None:
        reader = self._reader
        while True:
            try:
                line = await reader.receive_line()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if line is None:
                log.debug("peer closed the connection")
                return
            if isinstance(line, Oversized):
                self._on_oversized(line)
            else:
                self._on_line(line)

    async def _notification_loop(self) -> None:
        _in_notification.set(True)
        async for item in self._notify_receive:
            try:
                if item[0] is None:  # held back behind earlier notifications:
                    if callable(item[1]):  # an incoming request to start
                        item[1](item[2])
                    else:  # a response to release
                        self._release(item[1], item[2])
                else:
                    await self._run_notification(item[0], item[1], item[2])
            finally:
                self._backlog -= 1

    async def _run_notification(
        self, method: str, handler: Handler, params: Any
    ) -> None:
        try:
            await handler(params)
        except Exception:
            log.exception("notification handler for %s failed", method)

    # -- incoming --------------------------------------------------------------------

    def _on_line(self, line: bytes, batch: _Batch | None = None) -> None:
        try:
            env = decode_envelope(line)
        except msgspec.DecodeError:
            if batch is None and line.lstrip()[:1] == b"[":
                self._on_batch(line)
                return
            self._reply_error(None, PARSE_ERROR, "Parse error", batch)
            return
        except RequestError as exc:
            if batch is None and line.lstrip()[:1] == b"[":
                self._on_batch(line)
                return
            self._reply_error(exc.data, exc.code, exc.message, batch)
            return
        kind = env.kind
        if kind == REQUEST:
            self._on_request(env, batch)
        elif kind == NOTIFICATION:
            self._on_notification(env)
        else:
            self._on_response(env)

    def _on_batch(self, line: bytes) -> None:
        try:
            members = msgspec.json.decode(line, type=list[msgspec.Raw])
        except msgspec.DecodeError:
            self._reply_error(None, PARSE_ERROR, "Parse error")
            return
        except msgspec.ValidationError:
            self._reply_error(None, INVALID_REQUEST, "Invalid request")
            return
        if not members:
            self._reply_error(None, INVALID_REQUEST, "Invalid request: empty batch")
            return
        batch = _Batch(self._writer)
        for member in members:
            self._on_line(bytes(member), batch)
        batch.seal()

    def _on_oversized(self, line: Oversized) -> None:
        ident, method, is_response = sniff_oversized(line)
        log.warning(
            "discarded a %d-byte message (limit %d, id=%r)",
            line.size,
            self.max_message_size,
            ident,
        )
        if ident is None:
            return
        message = f"Message of {line.size} bytes exceeds the limit of {self.max_message_size} bytes"
        if is_response:
            p = self._pending.pop(ident, None)
            if p is not None:
                p.failure = RequestError(INVALID_REQUEST, message)
                p.event.set()
            return
        self._reply_error(
            ident,
            INVALID_REQUEST,
            message,
            data={"maxMessageSize": self.max_message_size},
        )

    def _on_request(self, env: Envelope, batch: _Batch | None) -> None:
        ident: Id = env.id  # type: ignore[assignment]
        name: str = env.method  # type: ignore[assignment]
        if batch is not None:
            batch.expected += 1
        refusal = self.refuse(name, True)
        if refusal is not None:
            self._reply_error(
                ident, refusal.code, refusal.message, batch, refusal.data, counted=True
            )
            return
        method = self.schema.incoming.get(name)
        if method is None:
            if name.startswith("_"):
                self._start_ext_request(ident, name, env.params, batch)
            else:
                self._reply_error(
                    ident,
                    METHOD_NOT_FOUND,
                    f"Method not found: {name}",
                    batch,
                    counted=True,
                )
            return
        if ident in self._running:
            self._reply_error(
                ident,
                INVALID_REQUEST,
                "Invalid request: duplicate id",
                batch,
                counted=True,
            )
            return
        try:
            params = self.decode_params(method, env.params)
        except msgspec.ValidationError as exc:
            self._reply_error(
                ident,
                INVALID_PARAMS,
                "Invalid params",
                batch,
                validation_data(exc, "$.params"),
                counted=True,
            )
            return
        except msgspec.DecodeError:
            self._reply_error(ident, PARSE_ERROR, "Parse error", batch, counted=True)
            return
        except RequestError as exc:
            self._reply_error(
                ident, exc.code, exc.message, batch, exc.data, counted=True
            )
            return
        handler = self.resolve_request(method, params)
        if handler is None:
            self._reply_error(
                ident,
                METHOD_NOT_FOUND,
                f"Method not found: {name}",
                batch,
                counted=True,
            )
            return
        running = Running(method, getattr(params, "session_id", None))
        self._running[ident] = running
        self.request_received(running)
        args = (ident, running, handler, params, batch)
        if self._backlog == 0:
            self._start_request(args)
        else:  # start it once the notifications received before it were handled
            self._enqueue(None, self._start_request, args)

    def _start_request(self, args: tuple[Any, ...]) -> None:
        self.request_started(args[1])
        assert self._nursery is not None
        self._nursery.start_soon(self._run_request, *args)

    def decode_params(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> Any:
        """Decode ``raw`` params into the method's type (absent params read as ``{}``).

        Subclasses add receiver-side checks by raising :class:`RequestError`.
        """
        return self.schema.decode(
            _EMPTY_OBJECT if raw is msgspec.UNSET else raw, method.params
        )

    def resolve_request(self, method: MethodSpec, params: Any) -> Handler | None:
        """The coroutine function answering ``method`` (``None``: -32601)."""
        return self._handler_for(method)

    def refuse(self, name: str, request: bool) -> RequestError | None:
        """Hook: refuse an incoming request (the error answers it) or notification (dropped)."""
        return None

    def request_received(self, running: Running) -> None:
        """Hook: an incoming request was accepted (it may wait behind notifications)."""

    def request_started(self, running: Running) -> None:
        """Hook: an incoming request is about to run."""

    def request_finished(self, running: Running) -> None:
        """Hook: an incoming request was answered (or abandoned)."""

    def cancelled_result(self, running: Running, result: Any = None) -> bytes | None:
        """Hook: the encoded result answering a session-cancelled request, if any.

        ``result`` is what the handler returned when it returned normally
        after the cancel (``None`` when it raised or was cancelled).
        """
        return None

    def encode_result(self, running: Running, result: Any) -> bytes:
        """Hook: encode a handler's return value."""
        return self.schema.encode(result)

    async def _run_request(
        self,
        ident: Id,
        running: Running,
        handler: Handler,
        params: Any,
        batch: _Batch | None,
    ) -> None:
        eid = encode_id(ident)
        line: bytes | None = None
        try:
            with running.scope:
                try:
                    if running.cancel_reason is None:  # not cancelled before it started
                        result = await handler(params)
                        answer = (  # returned normally after a session cancel?
                            self.cancelled_result(running, result)
                            if running.cancel_reason == "session"
                            else None
                        )
                        if answer is None:
                            answer = self.encode_result(running, result)
                        line = encode_result(eid, answer)
                except Exception as exc:
                    if running.cancel_reason is not None:
                        pass  # a cancellation that surfaced as an exception: answered below
                    elif isinstance(exc, RequestError):
                        line = encode_error(eid, exc.code, exc.message, exc.data)
                    else:
                        log.exception("handler for %s failed", running.method.name)
                        line = encode_error(eid, INTERNAL_ERROR, "Internal error")
            if line is None:  # cancelled: by $/cancel_request or a session cancel
                answer = (
                    self.cancelled_result(running)
                    if running.cancel_reason == "session"
                    else None
                )
                if answer is not None:
                    line = encode_result(eid, answer)
                else:
                    code = self.schema.request_cancelled_code or REQUEST_CANCELLED
                    line = encode_error(eid, code, "Request cancelled")
        finally:
            if self._running.get(ident) is running:
                del self._running[ident]
            self.request_finished(running)
        self._send_reply(line, batch)

    def _start_ext_request(
        self,
        ident: Id,
        name: str,
        raw: msgspec.Raw | msgspec.UnsetType,
        batch: _Batch | None,
    ) -> None:
        handler = getattr(self._handler_obj, "ext_method", None)
        if handler is None:
            self._reply_error(
                ident,
                METHOD_NOT_FOUND,
                f"Method not found: {name}",
                batch,
                counted=True,
            )
            return
        params = msgspec.json.decode(_EMPTY_OBJECT if raw is msgspec.UNSET else raw)

        async def call(p: Any) -> Any:
            return await handler(name, p)

        running = Running(_ExtMethod(name), None)
        self._running[ident] = running
        assert self._nursery is not None
        self._nursery.start_soon(self._run_request, ident, running, call, params, batch)

    def _on_notification(self, env: Envelope) -> None:
        name: str = env.method  # type: ignore[assignment]
        refusal = self.refuse(name, False)
        if refusal is not None:
            log.warning("dropping notification %s: %s", name, refusal.message)
            return
        schema = self.schema
        method = schema.incoming.get(name)
        if method is None:
            cancel = schema.cancel_request
            if cancel is not None and name == cancel.name:
                self._on_cancel_request(cancel, env.params)
                return
            if name.startswith("_"):
                ext = getattr(self._handler_obj, "ext_notification", None)
                if ext is not None:
                    params = msgspec.json.decode(
                        _EMPTY_OBJECT if env.params is msgspec.UNSET else env.params
                    )

                    async def call(p: Any) -> None:
                        await ext(name, p)

                    self._enqueue(name, call, params)
                    return
            log.debug("ignoring unknown notification %s", name)
            return
        try:
            params = self.decode_params(method, env.params)
        except (msgspec.MsgspecError, RequestError) as exc:
            log.warning("dropping notification %s with invalid params: %s", name, exc)
            return
        self.notification_received(method, params)
        handler = self._handler_for(method)
        if handler is None:
            log.debug("no handler for notification %s", name)
            return
        self._enqueue(name, handler, params)

    def notification_received(self, method: MethodSpec, params: Any) -> None:
        """Hook: runs at receipt, before the notification is queued for its handler."""

    def _enqueue(self, name: str | None, a: Any, b: Any) -> None:
        self._backlog += 1
        self._notify_send.send_nowait((name, a, b))

    def _on_cancel_request(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> None:
        try:
            params = self.decode_params(method, raw)
        except (msgspec.MsgspecError, RequestError) as exc:
            log.warning("dropping invalid %s: %s", method.name, exc)
            return
        running = self._running.get(params.request_id)
        if running is None:
            log.debug("%s for unknown request id %r", method.name, params.request_id)
            return
        running.cancel("request")

    def _on_response(self, env: Envelope) -> None:
        p = self._pending.pop(env.id, None)  # type: ignore[arg-type]
        if p is None:
            log.info("dropping response to unknown request id %r", env.id)
            return
        self.response_received(p, env)
        if self._backlog == 0 or p.exempt:
            self._release(p, env)
        else:
            self._enqueue(None, p, env)

    def response_received(self, pending: _Pending, env: Envelope) -> None:
        """Hook: runs at receipt (before ordering), e.g. to switch versions."""

    def _release(self, p: _Pending, env: Envelope) -> None:
        if p.event.is_set():
            return
        if env.error is not msgspec.UNSET:
            p.failure = decode_error(env.error)
        else:
            p.value, p.failure = self._decode_result(p.method, env.result)  # type: ignore[arg-type]
        p.event.set()

    def _decode_result(
        self, method: MethodSpec, raw: msgspec.Raw
    ) -> tuple[Any, BaseException | None]:
        result_type = method.result
        if result_type is None or isinstance(method, _ExtMethod):
            return msgspec.json.decode(raw), None
        try:
            return self.schema.decode(raw, result_type), None
        except msgspec.ValidationError as exc:
            if (
                bytes(raw).strip() == _NULL
            ):  # `"result": null` reads as the empty response
                try:
                    return self.schema.decode(_EMPTY_OBJECT, result_type), None
                except msgspec.ValidationError:
                    pass
            err = RequestError(
                INVALID_PARAMS,
                "Invalid result from peer",
                validation_data(exc, "$.result"),
            )
            return None, err

    # -- replies -------------------------------------------------------------------

    def _reply_error(
        self,
        ident: Id,
        code: int,
        message: str,
        batch: _Batch | None = None,
        data: Any = msgspec.UNSET,
        *,
        counted: bool = False,
    ) -> None:
        if batch is not None and not counted:
            batch.expected += 1
        self._send_reply(encode_error(encode_id(ident), code, message, data), batch)

    def _send_reply(self, line: bytes, batch: _Batch | None) -> None:
        if self._closed:
            return
        if batch is not None:
            batch.add(line)
        else:
            self._writer.send_nowait(line)

    # -- outgoing ------------------------------------------------------------------

    def check_outgoing(self, method: MethodSpec, params: Any) -> None:
        """Hook: refuse a call locally (raise :class:`~acp_trio.CapabilityError`)."""

    def sent(self, method: MethodSpec, params: Any) -> None:
        """Hook: ``method`` was queued for sending."""

    async def call(self, method: MethodSpec, params: Any) -> Any:
        """Send a request (or a notification, if ``method.result`` is ``None``)."""
        if method.result is None:
            await self.notify(method, params)
            return None
        return await self.request(method, params)

    async def notify(self, method: MethodSpec, params: Any) -> None:
        """Send the notification ``method``."""
        if self._closed:
            raise ConnectionClosed("connection closed")
        self.check_outgoing(method, params)
        schema = self.schema
        line = encode_notification(
            schema.wire_names[method.name], schema.encode(params)
        )
        await self._writer.send(line)
        self.sent(method, params)

    async def request(self, method: MethodSpec, params: Any) -> Any:
        """Send the request ``method`` and wait for its decoded result.

        Raises :class:`~acp_trio.RequestError` for an error response and
        :class:`~acp_trio.ConnectionClosed` if the peer goes away.  If the
        caller is cancelled while waiting and this version has
        ``$/cancel_request``, it is sent for the request.
        """
        if self._closed:
            raise ConnectionClosed("connection closed")
        self.check_outgoing(method, params)
        schema = self.schema
        ident = self._next_id
        self._next_id += 1
        line = encode_request(
            ident, schema.wire_names[method.name], schema.encode(params)
        )
        return await self._roundtrip(ident, method, line, params)

    async def _roundtrip(
        self, ident: int, method: MethodSpec, line: bytes, params: Any
    ) -> Any:
        p = _Pending(method, _in_notification.get())
        self._pending[ident] = p
        queued = False
        try:
            await self._writer.send(line)
            queued = True
            self.sent(method, params)
            await p.event.wait()
        except BaseException:
            if self._pending.pop(ident, None) is not None and queued:
                self._send_cancel_request(ident)
            raise
        if p.failure is not None:
            raise p.failure
        return p.value

    def _send_cancel_request(self, ident: int) -> None:
        cancel = self.schema.cancel_request
        if cancel is None or self._closed:
            return
        params = self.schema.decode(b'{"requestId":%d}' % ident, cancel.params)
        wire = self.schema.wire_names[cancel.name]
        self._writer.send_nowait(encode_notification(wire, self.schema.encode(params)))

    async def ext_request(self, name: str, params: Any) -> Any:
        """Call a ``_``-prefixed extension method; result returned as builtins."""
        if not name.startswith("_"):
            raise ValueError("extension method names start with '_'")
        if self._closed:
            raise ConnectionClosed("connection closed")
        ident = self._next_id
        self._next_id += 1
        wire = msgspec.json.encode(name)
        line = encode_request(ident, wire, self.schema.encode(params))
        return await self._roundtrip(ident, _ExtMethod(name), line, params)

    async def ext_notify(self, name: str, params: Any) -> None:
        """Send a ``_``-prefixed extension notification."""
        if not name.startswith("_"):
            raise ValueError("extension notification names start with '_'")
        if self._closed:
            raise ConnectionClosed("connection closed")
        await self._writer.send(
            encode_notification(msgspec.json.encode(name), self.schema.encode(params))
        )

    # -- introspection -------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        """Whether the connection stopped (peer gone or closed locally)."""
        return self._closed

    def running_requests(self) -> Mapping[Id, Running]:
        """Incoming requests currently being handled, by id."""
        return self._running


class _ExtMethod:
    """A stand-in :class:`MethodSpec` for ``_``-prefixed extension methods."""

    __slots__ = ("name",)
    params: Any = None
    result: Any = object
    handler = "ext_method"

    def __init__(self, name: str) -> None:
        self.name = name
