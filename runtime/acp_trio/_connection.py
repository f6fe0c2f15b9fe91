"""One JSON-RPC peer over one trio stream: correlation, routing, ordering.

:class:`Connection` is symmetric; :class:`~acp_trio.AgentSideConnection` and
:class:`~acp_trio.ClientSideConnection` orient it (which method table is
served, which is called) and add ACP's session rules.  The rules that live
here:

- incoming requests run concurrently, each in a task of the connection's
  nursery, inside a cancel scope of its own (tasks are reused: see
  :meth:`Connection._work`);
- incoming notifications are handled one at a time, in the order received;
- a response is released to its caller only after every notification
  received before it has been handled, so a turn's updates are applied
  before ``session_prompt`` returns.  A request made *from inside* a
  notification handler is exempt (it could never be released otherwise);
- the receive loop never waits on a handler or on the peer reading, so a
  slow handler cannot stall responses (it runs a request's first step
  itself, and hands reading over to another task if the handler yields);
- at the end of input (the peer closed its end) every pending outgoing
  request fails with :class:`~acp_trio.ConnectionClosed` at once, and so
  does every later one; the requests and notifications already received
  are still handled for up to ``HANDLER_GRACE`` seconds and their answers
  written (a peer that half-closed may still read), then whatever is left
  is cancelled (a request is answered -32800) and the connection ends.  A
  peer known to be dead (a write fails; over a pipe, no reader left at
  EOF) and :meth:`Connection.close` cancel every handler at once;
- nothing one message does stops the connection: an exception of any kind
  while decoding or handling it is logged, a request is answered -32603, a
  notification dropped, a response fails its caller.

Example (a client, over an already-connected stream)::

    async with acp_trio.connect_to_agent(stream, client=MyClient) as conn:
        init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
"""

from __future__ import annotations

import collections
import contextvars
import functools
import logging
import time
import types
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, Final

import msgspec
import trio
from acp_core import _capabilities, _handlers
from acp_core._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    ProtocolVersionError,
    RequestError,
)
from acp_core._flow import (
    NOTIFICATIONS,
    REQUESTS,
    WRITE_BUFFER,
    LogThrottle,
    ReadGate,
    ResumeOrder,
)
from acp_core._jsonrpc import (
    BatchTooLong,
    Envelope,
    Id,
    InvalidMessage,
    clip,
    clip_data,
    decode_envelope,
    decode_error,
    encode_error,
    encode_id,
    encode_notification,
    encode_request,
    encode_result,
    split_batch,
)
from acp_core._limits import Limits
from acp_core._schema import MethodSpec, Schema

from ._framing import (
    LineReader,
    LineWriter,
    Oversized,
    SchedulePoint,
    Wakeup,
    input_fd,
    sniff_oversized,
)
from ._schedule import IO_POLL_INTERVAL

__all__ = ["Connection", "Envelope", "PeerProxy", "Running"]

log = logging.getLogger("acp_trio")

#: Longest validation message echoed back in a -32602 ``data`` (the default
#: of ``Limits.max_error_text``, which the connection uses).
MAX_ERROR_DETAIL: Final = 256
#: How long a closing connection may spend flushing queued messages.
FLUSH_GRACE: Final = 1.0
#: After end of input, how long the requests (and notifications) already
#: received may take to be handled and answered before they are cancelled.
HANDLER_GRACE: Final = 1.0
#: The notification task yields to others after this many items in a row.
NOTIFICATION_BURST: Final = 64
#: Request tasks kept waiting for the next request (more end when done).
MAX_IDLE_WORKERS: Final = 8

_NULL: Final = b"null"
_EMPTY_OBJECT: Final = b"{}"

# True inside the notification task: requests made there skip the ordering barrier.
_in_notification: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_trio_in_notification", default=False
)
# True in the tasks that run incoming requests (see ReadGate: requests_wait).
_in_request: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_trio_in_request", default=False
)

Handler = Callable[[Any], Awaitable[Any]]


class _Pending:
    """An outgoing request waiting for its response.

    ``waiting``: its caller still waits (it left if cancelled or done);
    ``held``: released to its caller, which has not resumed yet, so later
    messages wait (:class:`~acp_trio._flow.ResumeOrder`).
    """

    __slots__ = ("event", "exempt", "failure", "held", "method", "value", "waiting")

    def __init__(self, method: MethodSpec, exempt: bool) -> None:
        self.method = method
        self.exempt = exempt
        self.event = trio.Event()
        self.value: Any = None
        self.failure: BaseException | None = None
        self.waiting = True
        self.held = False


class Running:
    """An incoming request being handled.

    ``cancel_reason`` tells how it was cancelled: ``"request"`` for
    ``$/cancel_request`` (answered -32800), ``"session"`` for a session-level
    cancel (answered with the method's "cancelled" result by the subclass).
    ``scope`` is the cancel scope around its handler while the handler runs
    (``None`` before and after): a request cancelled before it started never
    starts, one cancelled after its handler returned keeps its answer.
    """

    __slots__ = ("cancel_reason", "method", "scope", "session_id")

    def __init__(self, method: MethodSpec, session_id: str | None) -> None:
        self.method = method
        self.session_id = session_id
        self.scope: trio.CancelScope | None = None
        self.cancel_reason: str | None = None

    @property
    def session_cancelled(self) -> bool:
        """Cancelled by a session-level cancel (its handler may have returned)."""
        return self.cancel_reason == "session"

    def cancel(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        if self.scope is not None:
            self.scope.cancel()


#: An incoming request ready to run: (id, running, handler, params, batch).
_Job = tuple[Id, Running, Handler, Any, "_Batch | None"]


class _Worker:
    """A task of the connection's pool: see :meth:`Connection._work`.

    ``job`` is the request it runs next; ``None`` means it reads instead.
    """

    __slots__ = ("job", "wakeup")

    def __init__(self, job: _Job | None) -> None:
        self.job = job
        self.wakeup = Wakeup()


@types.coroutine
def _resume(coro: Any, trap: Any) -> Generator[Any, Any, Any]:
    """Go on awaiting ``coro``, whose first step already ran and yielded ``trap``.

    Like ``await coro`` from its second step on: what trio sends or throws
    goes into ``coro``, what ``coro`` yields goes to trio.
    """
    while True:
        try:
            value = yield trap
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # Cancelled and the like: into the coroutine
            try:
                trap = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                trap = coro.send(value)
            except StopIteration as stop:
                return stop.value


#: _Connection._suspended when the reading task must hand reading over and end.
_RETIRE: Final = (None, None, None)


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


def validation_data(
    exc: msgspec.ValidationError, root: str, limit: int = MAX_ERROR_DETAIL
) -> dict[str, str]:
    """A bounded ``data`` for -32602: the failing path and a short message."""
    text = str(exc)
    path = "$"
    head, sep, tail = text.rpartition(" - at `")
    if sep and tail.endswith("`"):
        text, path = head, tail[:-1]
    path = root + path[1:]
    return {"path": clip(path, limit), "message": clip(text, limit)}


async def _request_or_notify(
    conn: Connection, method: MethodSpec, form: type, params: Any
) -> Any:
    if isinstance(params, form):
        await conn.notify(method, params)
        return None
    return await conn.request(method, params)


class PeerProxy:
    """Calls the peer's methods by handler name: ``conn.agent.session_new(params)``.

    Requests return the decoded result; notifications return ``None`` once
    queued.  ``_``-prefixed extensions go through :meth:`ext_method` and
    :meth:`ext_notification`.  The callable of each name is built on first
    use and kept as an instance attribute (so later lookups skip
    ``__getattr__``) until the connection switches protocol version.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        conn._proxies.append(self)  # pyright: ignore[reportPrivateUsage]

    def __getattr__(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        conn = self._conn
        method = conn._by_handler.get(name)  # pyright: ignore[reportPrivateUsage]
        if method is None:
            raise AttributeError(
                f"the peer has no method {name!r} in protocol v{conn.schema.version}"
            )
        call: Callable[[Any], Awaitable[Any]]
        form = getattr(method, "notification", None)
        if method.result is None:
            call = functools.partial(conn.notify, method)
        elif form is None:
            call = functools.partial(conn.request, method)
        else:  # a request also defined as a notification: the params type decides
            call = functools.partial(_request_or_notify, conn, method, form)
        self.__dict__[name] = call
        return call

    def _forget(self) -> None:
        """Drop the callables built for the previous protocol version."""
        conn = self._conn
        self.__dict__.clear()
        self._conn = conn

    async def ext_method(self, method: str, params: Any) -> Any:
        """Call the ``_``-prefixed extension ``method``; returns the raw result (builtins)."""
        return await self._conn.ext_request(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send the ``_``-prefixed extension notification ``method``."""
        await self._conn.ext_notify(method, params)


_UNKNOWN: Final[Any] = object()
_perf_counter = time.perf_counter


def _size(raw: msgspec.Raw | msgspec.UnsetType) -> int:
    return 0 if raw is msgspec.UNSET else len(raw)


class Connection:
    """A symmetric JSON-RPC 2.0 peer speaking one ACP schema version.

    Not instantiated directly: use the agent- or client-side subclass through
    :func:`~acp_trio.serve_agent`, :func:`~acp_trio.connect_to_agent`,
    :func:`~acp_trio.spawn_agent` or :func:`~acp_trio.serve_agent_stdio`.
    """

    #: Handlers never run in the reading task (see :meth:`_run_inline`): their
    #: answer must not change how the rest of the chunk they came in is read.
    NOT_INLINE: frozenset[str] = frozenset()

    def __init__(
        self,
        stream: trio.abc.Stream,
        schema: Schema,
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
    ) -> None:
        self.stream = stream
        #: The bounds this connection keeps (:class:`~acp_trio.Limits`).
        self.limits = limits = Limits.resolve(limits, max_message_size)
        self.max_message_size = limits.max_message_size
        self._reader = LineReader(stream, max_message_size=limits.max_message_size)
        self._writer = LineWriter(
            stream,
            budget=limits.write_buffer_bytes,
            schedule_point=SchedulePoint(input_fd(stream)),
        )
        self._gate = ReadGate(limits)
        self._read_wakeup = Wakeup()
        self._read_paused: str | None = None  # why the reading task waits, if it does
        self._order = ResumeOrder()
        # Hooks a subclass does not override are not called (hot path).
        cls = type(self)
        self._sent_hook = cls.sent is not Connection.sent
        self._received_hook = (
            cls.notification_received is not Connection.notification_received
        )
        self._bad_input_log = LogThrottle()
        self._order_wakeup = Wakeup()
        self._order_waiting = False  # the notification task waits on _order
        self._queued_bytes = 0  # JSON bytes of what _notify_queue holds
        # Requests of ours waiting for the peer, made by request / notification
        # handlers: while any waits, the matching bound does not stop reading.
        self._waits_in_requests = 0
        self._waits_in_notifications = 0
        self._pending: dict[Id, _Pending] = {}
        self._running: dict[Id, Running] = {}
        self._next_id = 0
        self._handlers: dict[str, Handler | None] = {}
        self._handler_obj: object | None = None
        # Notifications (and what waits behind them) in order, for
        # _notification_loop: (name, handler, params, size in bytes).
        self._notify_queue: collections.deque[tuple[Any, Any, Any, int]] = (
            collections.deque()
        )
        self._notify_wakeup = Wakeup()
        self._backlog = 0  # items queued or being handled
        self._idle_workers: list[_Worker] = []
        self._context = contextvars.Context()  # run()'s, for the tasks of the pool
        # While the reading task dispatches a chunk: its scope and context, so
        # that a request's first step runs right there (see _run_inline).
        self._inline: tuple[trio.CancelScope, contextvars.Context] | None = None
        # A request whose first step (run inline) yielded to trio: (job, coro, trap).
        self._suspended: tuple[_Job | None, Any, Any] | None = None
        self._nursery: trio.Nursery | None = None
        self._cancel_scope = trio.CancelScope()
        self._closed = False
        self._eof = False  # end of input: handlers finish within HANDLER_GRACE
        self.closed = trio.Event()
        self.schema = schema
        self._by_handler: dict[str, MethodSpec] = {}
        self._proxies: list[PeerProxy] = []
        self.bind(schema)

    @property
    def _max_text(self) -> int:
        return self.limits.max_error_text

    # -- configuration -----------------------------------------------------------

    def bind(self, schema: Schema) -> None:
        """Speak ``schema`` from now on (after version negotiation)."""
        self.schema = schema
        self._by_handler = {m.handler: m for m in schema.outgoing.values()}
        self._handlers = {}
        for proxy in self._proxies:
            proxy._forget()  # pyright: ignore[reportPrivateUsage]

    def set_handler(self, obj: object | None) -> None:
        """Route incoming methods to ``obj``'s methods named by the table's handler names.

        Public methods of ``obj`` that no method reaches are logged (see
        :mod:`acp_trio._handlers`).
        """
        self._handler_obj = obj
        self._handlers = {}
        _handlers.warn_unmatched(obj, self.schema)

    def _handler_for(self, method: MethodSpec) -> Handler | None:
        try:
            return self._handlers[method.name]
        except KeyError:
            handler: Handler | None = _handlers.resolve_handler(
                self._handler_obj, method.handler
            )
            self._handlers[method.name] = handler
            return handler

    # -- running -------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the connection until the peer closes it or :meth:`close` is called."""
        self._context = contextvars.copy_context()
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._write_loop)
                try:
                    with self._cancel_scope:
                        async with trio.open_nursery() as nursery:
                            self._nursery = nursery
                            nursery.start_soon(self._notification_loop)
                            nursery.start_soon(self._work, _Worker(None))  # reads
                            task_status.started()
                finally:
                    self._abandon_queued()
                    self._shutdown()
                    outer.cancel_scope.deadline = trio.current_time() + FLUSH_GRACE
        finally:
            self._shutdown()
            self.closed.set()

    def close(self) -> None:
        """Stop serving: pending requests fail, handlers are cancelled."""
        self._cancel_scope.cancel()

    def _end_of_input(self) -> None:
        """The peer closed its end: no response can come, requests received finish.

        Pending outgoing requests fail now.  Handlers already running, the
        queued notifications and the requests queued behind them go on for
        up to ``HANDLER_GRACE`` seconds (their answers are written: the peer
        may still read); idle tasks end, so the connection ends as soon as
        the last of them is done.  A peer known to be gone gets no grace.
        """
        self._eof = True
        error = ConnectionClosed("the peer closed the connection")
        pending, self._pending = self._pending, {}
        for p in pending.values():
            p.failure = error
            p.event.set()
        if self._writer.reader_gone():
            log.debug("peer gone; closing")
            self.close()
            return
        assert self._nursery is not None
        self._nursery.cancel_scope.deadline = trio.current_time() + HANDLER_GRACE
        idle, self._idle_workers = self._idle_workers, []
        for worker in idle:  # job None and _eof set: it ends
            worker.wakeup.wake()
        self._notify_wakeup.wake()

    def _abandon_queued(self) -> None:
        """Answer the requests still queued behind notifications at a half-close."""
        if not self._eof or self._cancel_scope.cancel_called:
            return
        for name, a, b, _ in self._notify_queue:
            if name is None and callable(a):  # a request that never started
                ident, running = b[0], b[1]
                self._request_done(b, self._cancelled_line(running, encode_id(ident)))
        self._notify_queue.clear()

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
        for name, a, _, _ in self._notify_queue:  # responses held behind notifications
            if name is None and isinstance(a, _Pending) and not a.event.is_set():
                a.failure = error
                a.event.set()

    async def _write_loop(self) -> None:
        try:
            await self._writer.run()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("peer stopped reading; closing")
            self.close()

    async def _read(
        self, scope: trio.CancelScope, baseline: contextvars.Context
    ) -> bool:
        """Read and dispatch messages: ``True`` at end of input (the connection
        is over), ``False`` when this task must stop reading (``_suspended``)."""
        reader = self._reader
        gate = self._gate
        # ReadGate.full, inlined below (it runs after every line)
        max_write, max_requests = gate.max_write, gate.max_requests
        max_items, max_bytes = gate.max_items, gate.max_bytes
        writer = self._writer
        running = self._running
        queue = self._notify_queue
        while True:
            if gate.full(
                writer.queued,
                len(running),
                len(queue),
                self._queued_bytes,
                self._waits_in_requests,
                self._waits_in_notifications,
            ):
                await self._pause_reading()
            try:
                lines = await reader.receive_lines()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                lines = None
            if lines is None:
                log.debug("peer closed the connection")
                self._end_of_input()
                return True
            self._inline = (scope, baseline)
            last = len(lines) - 1
            try:
                for i, line in enumerate(lines):
                    try:
                        if type(line) is bytes:
                            self._on_line(line)
                        else:
                            self._on_oversized(line)  # type: ignore[arg-type]
                    except Exception:  # a bug: lose this message, keep the connection
                        log.exception("failed to handle an incoming message")
                    if self._suspended is not None:
                        reader.unread(lines[i + 1 :])
                        return False
                    # Checked after every line, not only every chunk: one
                    # chunk of tiny bad lines would answer 30,000 of them.
                    if i < last and (
                        writer.queued >= max_write
                        or (
                            len(running) >= max_requests and not self._waits_in_requests
                        )
                        or (
                            (len(queue) >= max_items or self._queued_bytes >= max_bytes)
                            and not self._waits_in_notifications
                        )
                    ):
                        reader.unread(lines[i + 1 :])
                        break
            finally:
                self._inline = None

    async def _pause_reading(self) -> None:
        """Wait until :class:`ReadGate` lets the reading task read again."""
        gate = self._gate
        while True:
            reason = gate.reason(
                write_queued=self._writer.queued,
                running=len(self._running),
                queued=len(self._notify_queue),
                queued_bytes=self._queued_bytes,
                requests_wait=self._waits_in_requests,
                notifications_wait=self._waits_in_notifications,
            )
            if reason is None:
                return
            log.debug("not reading: %s at its limit", reason)
            self._read_paused = reason
            try:
                if reason == WRITE_BUFFER:
                    await self._writer.wait_for_space()
                else:
                    await self._read_wakeup.wait()
            finally:
                self._read_paused = None

    async def _notification_loop(self) -> None:
        # Drains the queue without a scheduler pass per item (a memory channel
        # costs one per receive): it yields when the queue is empty, when a
        # handler awaits, and after NOTIFICATION_BURST items in a row.
        _in_notification.set(True)
        queue = self._notify_queue
        burst = 0
        order = self._order
        while True:
            if not queue:
                if self._eof:
                    return
                burst = 0
                await self._notify_wakeup.wait()
                continue
            if order.held:  # a released caller goes first (ResumeOrder.blocked)
                self._order_waiting = True
                try:
                    await self._order_wakeup.wait()
                finally:
                    self._order_waiting = False
                continue
            burst += 1
            if burst > NOTIFICATION_BURST:
                burst = 0
                await trio.lowlevel.checkpoint()
            name, a, b, size = queue.popleft()
            self._queued_bytes -= size
            if (
                self._read_paused == NOTIFICATIONS
                and 2 * len(queue) <= self._gate.max_items
                and 2 * self._queued_bytes <= self._gate.max_bytes
            ):  # half empty: read again
                self._read_wakeup.wake()
            try:
                if name is not None:  # a notification: its handler
                    try:
                        await a(b)
                    except Exception:
                        log.exception("notification handler for %s failed", name)
                elif callable(a):  # held behind earlier ones: a request to start
                    a(b)
                else:  # or a response to release
                    self._release(a, b)
            except Exception:  # a bug: lose this item, keep the connection
                log.exception("failed to handle a queued message")
            finally:
                self._backlog -= 1

    # -- incoming --------------------------------------------------------------------

    def _on_line(self, line: bytes, batch: _Batch | None = None) -> None:
        try:
            env = decode_envelope(line)
        except InvalidMessage as exc:
            if batch is None and not exc.response and line.lstrip()[:1] == b"[":
                self._on_batch(line)
                return
            self._on_invalid(exc, line, batch)
            return
        # Envelope.kind, inlined (one call less per message)
        if env.method is msgspec.UNSET:
            self._on_response(env)
        elif env.id is msgspec.UNSET:
            self._on_notification(env)
        else:
            self._on_request(env, batch)

    def _on_invalid(
        self, exc: InvalidMessage, line: bytes, batch: _Batch | None
    ) -> None:
        """Answer (or, for a response, not answer) a line that is no valid message.

        A response-shaped one (an ``id``, no ``method``) is answered with
        ``id: null``, never its own id, and fails the request of ours it was
        meant to answer, if one waits on that id.
        """
        self._bad_input(exc.message, line)
        ident = exc.ident
        if exc.response:
            p = self._pending.pop(ident, None)
            if p is not None:
                p.failure = RequestError(
                    INVALID_REQUEST,
                    clip(f"Invalid response from peer: {exc.message}", self._max_text),
                )
                p.event.set()
            ident = None
        self._reply_error(ident, exc.code, exc.message, batch)

    def _bad_input(self, what: str, line: bytes | None = None) -> None:
        """Log bad input from the peer: one WARNING line, bounded (LogThrottle)."""
        throttle = self._bad_input_log
        level = logging.WARNING if throttle.allow() else logging.DEBUG
        if not log.isEnabledFor(level):
            return
        limit = self._max_text
        text = f"bad input from the peer (#{throttle.count}): {clip(what, limit)}"
        if line is not None:
            text += f"; {len(line)} bytes: {clip(repr(line[:limit]), limit)}"
        log.log(level, "%s", text)

    def _on_batch(self, line: bytes) -> None:
        limit = self.limits.max_batch_members
        try:
            members = split_batch(line, limit)
        except BatchTooLong:
            self._bad_input(f"a batch of more than {limit} members", line)
            self._reply_error(
                None,
                INVALID_REQUEST,
                f"Invalid request: a batch may have at most {limit} members",
                data={"maxBatchMembers": limit},
            )
            return
        except msgspec.ValidationError:
            self._bad_input("a batch that is not an array", line)
            self._reply_error(None, INVALID_REQUEST, "Invalid request")
            return
        except msgspec.DecodeError:
            self._bad_input("a line that is not JSON", line)
            self._reply_error(None, PARSE_ERROR, "Parse error")
            return
        except Exception:  # RecursionError: a member nested too deep
            self._bad_input("a batch that could not be decoded", line)
            self._reply_error(None, INVALID_REQUEST, "Invalid request")
            return
        if not members:
            self._bad_input("an empty batch")
            self._reply_error(None, INVALID_REQUEST, "Invalid request: empty batch")
            return
        batch = _Batch(self._writer)
        for member in members:
            self._on_line(bytes(member), batch)
        batch.seal()

    def _on_oversized(self, line: Oversized) -> None:
        ident, method, is_response = sniff_oversized(line)
        self._bad_input(
            f"discarded a {line.size}-byte message (limit {self.max_message_size},"
            f" id={clip(repr(ident), self._max_text)})"
        )
        if ident is None:
            return
        message = f"Message of {line.size} bytes exceeds the limit of {self.max_message_size} bytes"
        # A response (or, shape unknown, what matches a request of ours) is
        # never answered with its own id: it fails that request instead.
        if is_response or (method is None and ident in self._pending):
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
        if self._waits_in_requests and self._gate.refuse_request(
            len(self._running), self._waits_in_requests
        ):  # read past the bound only so that a handler's answer can come
            limit = self.limits.max_concurrent_requests
            log.warning("refused %s: %d requests running", clip(name, 64), limit)
            self._reply_error(
                ident,
                INTERNAL_ERROR,
                "Too many concurrent requests",
                batch,
                {"maxConcurrentRequests": limit},
                counted=True,
            )
            return
        try:
            job = self._accept_request(ident, name, env.params, batch)
        except Exception:
            log.exception("failed to handle request %s", name[:64])
            self._reply_error(
                ident, INTERNAL_ERROR, "Internal error", batch, counted=True
            )
            return
        if job is None:  # answered already (or an extension, started)
            return
        running = job[1]
        self._running[ident] = running
        try:
            self.request_received(running)
        except Exception:
            log.exception("failed to handle request %s", name[:64])
            self._request_done(job, self._internal_error(ident))
            return
        if self._backlog == 0:
            self._start_request(job)
        else:  # start it once the notifications received before it were handled
            raw = env.params
            self._enqueue(
                None, self._start_request, job, 0 if raw is msgspec.UNSET else len(raw)
            )

    def _accept_request(
        self,
        ident: Id,
        name: str,
        raw: msgspec.Raw | msgspec.UnsetType,
        batch: _Batch | None,
    ) -> _Job | None:
        refusal = self.refuse(name, True)
        if refusal is not None:
            self._reply_error(
                ident, refusal.code, refusal.message, batch, refusal.data, counted=True
            )
            return None
        method = self.schema.incoming.get(name)
        if method is None:
            if name.startswith("_"):
                self._start_ext_request(ident, name, raw, batch)
            else:
                self._reply_error(
                    ident,
                    METHOD_NOT_FOUND,
                    f"Method not found: {name}",
                    batch,
                    counted=True,
                )
            return None
        if ident in self._running:
            self._reply_error(
                ident,
                INVALID_REQUEST,
                "Invalid request: duplicate id",
                batch,
                counted=True,
            )
            return None
        try:
            params = self.decode_params(method, raw)
        except msgspec.ValidationError as exc:
            self._bad_input(f"invalid params for {name}: {exc}")
            self._reply_error(
                ident,
                INVALID_PARAMS,
                "Invalid params",
                batch,
                validation_data(exc, "$.params", self._max_text),
                counted=True,
            )
            return None
        except msgspec.DecodeError:
            self._bad_input(f"params of {name} are not JSON")
            self._reply_error(ident, PARSE_ERROR, "Parse error", batch, counted=True)
            return None
        except RequestError as exc:
            self._bad_input(f"params of {name} refused: {exc.message}")
            self._reply_error(
                ident, exc.code, exc.message, batch, exc.data, counted=True
            )
            return None
        except RecursionError:  # a decoder that let it out: nested too deep
            self._bad_input(f"params of {name} nested too deep")
            self._reply_error(
                ident,
                INVALID_REQUEST,
                "Invalid request: params nested too deep",
                batch,
                counted=True,
            )
            return None
        # decoding initialize may have switched the version: its table now
        method = self.schema.incoming.get(name, method)
        handler = self.resolve_request(method, params)
        if handler is None:
            self._reply_error(
                ident,
                METHOD_NOT_FOUND,
                f"Method not found: {name}",
                batch,
                counted=True,
            )
            return None
        running = Running(method, getattr(params, "session_id", None))
        return (ident, running, handler, params, batch)

    def _start_request(self, job: _Job) -> None:
        try:
            self.request_started(job[1])
        except Exception:
            log.exception("failed to start request %s", job[1].method.name)
            self._request_done(job, self._internal_error(job[0]))
            return
        self._dispatch(job)

    def _dispatch(self, job: _Job) -> None:
        """Run ``job``: right here if the reading task is dispatching, else on
        an idle task of the pool, else on a new one."""
        if (
            self._inline is not None
            and self._suspended is None
            and job[1].method.handler not in self.NOT_INLINE
        ):
            self._run_inline(job)
            return
        idle = self._idle_workers
        if idle:
            worker = idle.pop()
            worker.job = job
            worker.wakeup.wake()
        else:
            self._spawn(_Worker(job))

    def _run_inline(self, job: _Job) -> None:
        """Run the first step of ``job`` in the reading task.

        A handler that returns without yielding to trio (most answers to
        simple requests) costs no task switch at all.  One that yields leaves
        its coroutine in ``_suspended``: the reading task stops reading,
        hands reading over to another task and goes on with this request
        (:meth:`_work`).  Everything the first step did happened in this
        task, inside this task's cancel scope, as it would in a task of its
        own; only the order differs (the rest of the chunk is read after it).
        """
        assert self._inline is not None
        scope, baseline = self._inline
        coro = self._handle_request(job, scope)
        try:
            trap = coro.send(None)
        except StopIteration as done:
            self._request_done(job, done.value)
            if scope.cancel_called or contextvars.copy_context() != baseline:
                self._suspended = _RETIRE  # this task cannot go on reading
            return
        except BaseException:
            self._request_done(job, None)
            raise
        self._suspended = (job, coro, trap)

    def _spawn(self, worker: _Worker) -> None:
        # In run()'s context: not in that of the task asking (a handler may
        # have changed it, the notification task has its own).
        assert self._nursery is not None
        self._context.run(self._nursery.start_soon, self._work, worker)

    def _start_reader(self) -> None:
        """Have an idle task of the pool (or a new one) take over reading."""
        idle = self._idle_workers
        if idle:
            idle.pop().wakeup.wake()  # its job is None: it reads
        else:
            self._spawn(_Worker(None))

    def decode_params(
        self,
        method: MethodSpec,
        raw: msgspec.Raw | msgspec.UnsetType,
        *,
        notification: bool = False,
    ) -> Any:
        """Decode ``raw`` params into the method's type (absent params read as ``{}``).

        ``notification``: the message had no id; a request that the schema
        also defines as a notification (``mcp/message``) then decodes into
        that form's type. The receiver-side rules both sides share (absolute
        paths) raise :class:`RequestError` -32602; subclasses add their own.
        """
        type_ = method.params
        if notification and method.result is not None:
            type_ = getattr(method, "notification", None) or type_
        params = self.schema.decode(
            _EMPTY_OBJECT if raw is msgspec.UNSET else raw, type_
        )
        _capabilities.check_incoming(self.schema.version, method.handler, params)
        return params

    def _require_version(self, version: int) -> None:
        """For the checked views (``agent_v1``, ``client_v2``, ...)."""
        if self.schema.version != version:
            raise ProtocolVersionError(
                f"this connection speaks protocol v{self.schema.version}, not v{version}"
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
        """Hook: encode a handler's return value (checked against the result type:
        a mismatch raises, and the request is answered -32603)."""
        return self.schema.encode(_handlers.checked_result(running.method, result))

    async def _work(self, worker: _Worker) -> None:
        """A task of the pool: reads, or runs requests, in one cancel scope.

        A new task and a new cancel scope per request cost more than the rest
        of a request, so a task that answered one waits for the next (up to
        ``MAX_IDLE_WORKERS`` wait).  Exactly one task reads at a time; it runs
        each request's first step itself (:meth:`_run_inline`) and, when a
        handler yields, hands reading over and goes on with that request.

        The task's scope is the running request's :attr:`Running.scope`; once
        cancelled, the task answers that request and ends.  It also ends when
        a handler left a context variable changed, so that no request sees
        another's context.
        """
        _in_notification.set(False)  # requests made here are never exempt
        _in_request.set(True)
        baseline = contextvars.copy_context()
        idle = self._idle_workers
        try:
            with trio.CancelScope() as scope:
                while True:
                    job = worker.job
                    if job is None:  # reading
                        if self._eof:
                            return  # woken at end of input
                        if await self._read(scope, baseline):
                            return  # end of input
                        suspended = self._suspended
                        assert suspended is not None  # _read returned False
                        job, coro, trap = suspended
                        self._suspended = None
                        self._start_reader()
                        if job is None:  # _RETIRE
                            return
                        worker.job = job
                        line = await _resume(coro, trap)
                    else:
                        line = await self._handle_request(job, scope)
                    worker.job = None
                    self._request_done(job, line)
                    if (
                        scope.cancel_called
                        or self._eof
                        or len(idle) >= MAX_IDLE_WORKERS
                        or contextvars.copy_context() != baseline
                    ):
                        return
                    idle.append(worker)
                    await worker.wakeup.wait()
            # Only a cancelled request gets here: the scope caught its Cancelled.
            job = worker.job
            worker.job = None
            if job is not None:
                self._request_done(job, self._cancelled_line(job[1], encode_id(job[0])))
        finally:
            if worker in idle:
                idle.remove(worker)
            left = worker.job
            if left is not None:  # the connection is closing
                worker.job = None
                # after a half-close the peer may still read: tell it
                line = None
                if self._eof and not self._cancel_scope.cancel_called:
                    line = self._cancelled_line(left[1], encode_id(left[0]))
                self._request_done(left, line)

    async def _handle_request(self, job: _Job, scope: trio.CancelScope) -> bytes:
        """Run one handler inside ``scope``; its answer (a cancellation raises)."""
        ident, running, handler, params, _ = job
        eid = encode_id(ident)
        if running.cancel_reason is None:  # not cancelled before it started
            running.scope = scope
            try:
                result = await handler(params)
                answer = (  # returned normally after a session cancel?
                    self.cancelled_result(running, result)
                    if running.session_cancelled
                    else None
                )
                if answer is None:
                    answer = self.encode_result(running, result)
                return encode_result(eid, answer)
            except Exception as exc:
                if running.cancel_reason is None:
                    if isinstance(exc, RequestError):
                        try:
                            return encode_error(eid, exc.code, exc.message, exc.data)
                        except Exception:
                            log.exception(
                                "unencodable RequestError from %s", running.method.name
                            )
                    else:
                        log.exception("handler for %s failed", running.method.name)
                    return encode_error(eid, INTERNAL_ERROR, "Internal error")
                # a cancellation that surfaced as an exception: answered below
            finally:
                running.scope = None
        return self._cancelled_line(running, eid)

    def _cancelled_line(self, running: Running, eid: bytes) -> bytes:
        """The answer to a request cancelled by a session cancel or ``$/cancel_request``."""
        answer = (
            self.cancelled_result(running)
            if running.cancel_reason == "session"
            else None
        )
        if answer is not None:
            return encode_result(eid, answer)
        code = self.schema.request_cancelled_code or REQUEST_CANCELLED
        return encode_error(eid, code, "Request cancelled")

    def _internal_error(self, ident: Id) -> bytes:
        return encode_error(encode_id(ident), INTERNAL_ERROR, "Internal error")

    def _request_done(self, job: _Job, line: bytes | None) -> None:
        """Forget ``job`` and send its answer (``None``: none, the connection is closing)."""
        ident, running, _, _, batch = job
        if self._running.get(ident) is running:
            del self._running[ident]
            if self._read_paused == REQUESTS:
                self._read_wakeup.wake()
        try:
            self.request_finished(running)
        except Exception:
            log.exception("request_finished failed for %s", running.method.name)
        if line is not None:
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
        self._dispatch((ident, running, call, params, batch))

    def _on_notification(self, env: Envelope) -> None:
        try:
            self._accept_notification(env)
        except Exception:
            log.exception("dropping notification %s", str(env.method)[:64])

    def _accept_notification(self, env: Envelope) -> None:
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

                    self._enqueue(name, call, params, _size(env.params))
                    return
            log.debug("ignoring unknown notification %s", clip(name, self._max_text))
            return
        try:
            params = self.decode_params(method, env.params, notification=True)
        except Exception as exc:  # msgspec's, RequestError, RecursionError
            self._bad_input(f"notification {name} dropped, invalid params: {exc}")
            return
        if self._received_hook:
            self.notification_received(method, params)
        handler = self._handlers.get(method.name, _UNKNOWN)
        if handler is _UNKNOWN:
            handler = self._handler_for(method)
        if handler is None:
            log.debug("no handler for notification %s", name)
            return
        # _enqueue, inlined (one call less per update)
        raw = env.params
        size = 0 if raw is msgspec.UNSET else len(raw)
        self._backlog += 1
        self._queued_bytes += size
        self._notify_queue.append((name, handler, params, size))
        wakeup = self._notify_wakeup
        if wakeup.task is not None:
            wakeup.wake()

    def notification_received(self, method: MethodSpec, params: Any) -> None:
        """Hook: runs at receipt, before the notification is queued for its handler."""

    def _enqueue(self, name: str | None, a: Any, b: Any, size: int) -> None:
        self._backlog += 1
        self._queued_bytes += size
        self._notify_queue.append((name, a, b, size))
        self._notify_wakeup.wake()

    def _on_cancel_request(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> None:
        try:
            params = self.decode_params(method, raw)
        except Exception as exc:
            self._bad_input(f"{method.name} dropped, invalid params: {exc}")
            return
        running = self._running.get(params.request_id)
        if running is None:
            log.debug("%s for unknown request id %r", method.name, params.request_id)
            return
        running.cancel("request")

    def _on_response(self, env: Envelope) -> None:
        ident = env.id
        p = (
            None
            if isinstance(ident, msgspec.UnsetType)
            else self._pending.pop(ident, None)
        )
        if p is None:  # a request cancelled here, or a peer's mistake
            log.info(
                "dropping response to unknown request id %s",
                clip(repr(env.id), self._max_text),
            )
            return
        try:
            self.response_received(p, env)
        except Exception:
            log.exception("failed to handle the response to %s", p.method.name)
            p.failure = RequestError(INTERNAL_ERROR, "Internal error")
            p.event.set()
            return
        if self._backlog == 0 or p.exempt:
            self._release(p, env)
        else:
            raw = env.result if env.error is msgspec.UNSET else env.error
            self._enqueue(None, p, env, 0 if raw is msgspec.UNSET else len(raw))

    def response_received(self, pending: _Pending, env: Envelope) -> None:
        """Hook: runs at receipt (before ordering), e.g. to switch versions."""

    def _release(self, p: _Pending, env: Envelope) -> None:
        if p.event.is_set():
            return
        try:
            if env.error is not msgspec.UNSET:
                p.failure = decode_error(env.error)
            else:
                p.value, p.failure = self._decode_result(p.method, env.result)  # type: ignore[arg-type]
        except Exception:
            log.exception("failed to decode the response to %s", p.method.name)
            p.value, p.failure = None, RequestError(INTERNAL_ERROR, "Internal error")
        p.event.set()
        if p.waiting and not p.exempt:  # its caller runs before what came after
            p.held = True
            self._order.hold()

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
                validation_data(exc, "$.result", self._max_text),
            )
            self._bad_input(f"invalid result for {method.name}: {exc}")
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
        # Built from the peer's input (method names, tags, paths): bounded.
        limit = self._max_text
        message = clip(message, limit)
        if data is not msgspec.UNSET:
            data = clip_data(data, limit)
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
        # LineWriter.send, with the hook between queueing and the schedule point
        writer = self._writer
        await trio.lowlevel.checkpoint_if_cancelled()
        if writer.queued >= writer.budget:
            await writer.wait_for_space()
            if self._closed:
                raise ConnectionClosed("connection closed")
        writer.send_nowait(line)
        if self._sent_hook:
            self.sent(method, params)
        # SchedulePoint.needed(), its most common "no" decided without a call
        point = writer.schedule_point
        watch = point.watch
        if (
            watch is None
            or watch.runq
            or watch.size > 1
            or watch.heap
            or _perf_counter() - watch.polled >= IO_POLL_INTERVAL
        ) and point.needed():
            await trio.lowlevel.cancel_shielded_checkpoint()

    async def request(self, method: MethodSpec, params: Any) -> Any:
        """Send the request ``method`` and wait for its decoded result.

        Raises :class:`~acp_trio.RequestError` for an error response and
        :class:`~acp_trio.ConnectionClosed` if the peer goes away.  If the
        caller is cancelled while waiting and this version has
        ``$/cancel_request``, it is sent for the request.
        """
        if self._closed or self._eof:
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
        writer = self._writer
        in_request = _in_request.get()
        if p.exempt or in_request:  # a handler waits: reading must go on (ReadGate)
            if p.exempt:
                self._waits_in_notifications += 1
            else:
                self._waits_in_requests += 1
            if self._read_paused is not None:
                self._read_wakeup.wake()
        try:
            # A checkpoint before and (waiting for the answer) after, as
            # LineWriter.send is, without its schedule point in between.
            await trio.lowlevel.checkpoint_if_cancelled()
            if writer.queued >= writer.budget:
                await writer.wait_for_space()
            if self._closed:
                raise ConnectionClosed("connection closed")
            writer.send_nowait(line)
            queued = True
            if self._sent_hook:
                self.sent(method, params)
            await p.event.wait()
        except BaseException:
            if self._pending.pop(ident, None) is not None and queued:
                self._send_cancel_request(ident)
            raise
        finally:
            if p.exempt:
                self._waits_in_notifications -= 1
            elif in_request:
                self._waits_in_requests -= 1
            p.waiting = False
            if p.held:  # released: what came after it may be handled now
                p.held = False
                if self._order.resume() and self._order_waiting:
                    self._order_wakeup.wake()
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
        if self._closed or self._eof:
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
    notification: Any = None

    def __init__(self, name: str) -> None:
        self.name = name
