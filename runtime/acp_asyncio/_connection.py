"""One ACP connection on asyncio: the engine's events turned into tasks and writes.

Everything that is protocol (framing, correlation, ordering, batches, the
initialize and version rules, capability refusals, session-cancel answers,
bounds) is :class:`acp_core.Engine`'s; this module only

- feeds the engine the bytes the :mod:`wire <acp_asyncio._wire>` read, in the
  event loop's callback (no task switch per chunk) and writes what it
  answers;
- runs each incoming request's handler in a task of its own, and the
  ordered notifications in one consumer task;
- pauses reading while the engine says a bound is reached, and makes
  senders wait while ``Limits.write_buffer_bytes`` are queued;
- keeps the timers: ``HANDLER_GRACE`` after the peer closed its end,
  ``FLUSH_GRACE`` to flush on close.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

import acp_core
from acp_core import ConnectionClosed, Limits
from acp_core import engine as _engine

from ._wire import PipeWire, StreamWire, Wire

__all__ = ["FLUSH_GRACE", "HANDLER_GRACE", "Connection", "PeerProxy"]

log = logging.getLogger("acp_asyncio")

#: After end of input, how long the requests (and notifications) already
#: received may take to be handled and answered before they are cancelled.
HANDLER_GRACE: Final = 1.0
#: How long a closing connection may spend flushing queued messages.
FLUSH_GRACE: Final = 1.0
#: A handler that sends without ever waiting yields to the event loop at
#: least this often (seconds), so that a ``session/cancel`` can be read.
YIELD_INTERVAL: Final = 0.0002

# Who makes an outgoing call (the engine's ReadGate exemptions and ordering).
_origin: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "acp_asyncio_origin", default=_engine.ORIGIN_USER
)

_monotonic = time.monotonic


class _Waiter:
    """What the engine sets when a call's answer is there: one future."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.future = future

    def set(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


class Connection:
    """A JSON-RPC peer on asyncio over one :class:`acp_core.Engine`.

    Not built directly: see :func:`~acp_asyncio.serve_agent`,
    :func:`~acp_asyncio.connect_to_agent`, :func:`~acp_asyncio.spawn_agent`.
    """

    def __init__(self, engine: Any, limits: Limits) -> None:
        self._engine = engine
        #: The bounds this connection keeps (:class:`~acp_core.Limits`).
        self.limits = limits
        self._wire: Wire | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._consumer: asyncio.Task[None] | None = None
        self._queue_wakeup: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._paused = False
        self._eof = False
        self._closing = False
        self._grace: asyncio.TimerHandle | None = None
        self._done: asyncio.Future[None] | None = None
        self._last_yield = 0.0
        self._proxies: list[PeerProxy] = []

    # -- the wire's callbacks ------------------------------------------------------------

    def on_data(self, data: bytes) -> None:
        self._engine.receive_data(data)
        self._process()

    def on_eof(self) -> None:
        if not self._eof:
            self._engine.receive_eof()
            self._process()

    def on_broken(self) -> None:
        log.debug("peer stopped reading; closing")
        self.close()

    # -- running -------------------------------------------------------------------------

    async def _start(self, wire: Wire) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._wire = wire
        self._done = loop.create_future()
        self._consumer = loop.create_task(self._consume())
        if isinstance(wire, StreamWire):
            wire.start()

    async def wait_closed(self) -> None:
        """Return once the connection is over (peer gone, or :meth:`close`)."""
        assert self._done is not None
        await asyncio.shield(self._done)

    @property
    def is_closed(self) -> bool:
        """Whether the connection stopped (peer gone or closed locally)."""
        return self._closing

    def close(self) -> None:
        """Stop serving: pending calls fail, handlers are cancelled, queued bytes flushed."""
        if self._closing:
            return
        self._closing = True
        if self._grace is not None:
            self._grace.cancel()
        self._write(self._engine.close())
        for task in list(self._tasks):
            task.cancel()
        if self._consumer is not None:
            self._consumer.cancel()
        wire = self._wire
        if wire is not None:
            wire.close()
            assert self._loop is not None
            self._loop.call_later(FLUSH_GRACE, wire.abort)
        self._maybe_done()

    def _maybe_done(self) -> None:
        if (
            self._done is not None
            and not self._done.done()
            and self._closing
            and not self._tasks
            and (self._consumer is None or self._consumer.done())
        ):
            self._done.set_result(None)

    # -- input -----------------------------------------------------------------------------

    def _write(self, lines: list[bytes] | bytes | None) -> None:
        if not lines or self._wire is None:
            return
        if isinstance(lines, bytes):
            self._wire.write(lines)
        else:
            self._wire.write(b"".join(lines))

    def _process(self) -> None:
        """Take the engine's events until it needs data, pauses, or input ended."""
        if self._closing:
            return
        engine = self._engine
        wire = self._wire
        assert wire is not None
        while True:
            event = engine.next_event(wire.queued)
            outbox = engine.take_outbox()
            if outbox:
                self._write(outbox)
            if engine.queue_ready:
                self._wake_consumer()
            if event is _engine.NEED_DATA:
                if self._paused:
                    self._paused = False
                    wire.resume_reading()
                return
            if event is _engine.PAUSED:
                if not self._paused:
                    self._paused = True
                    wire.pause_reading()
                    if engine.pause_reason == _engine.WRITE_BUFFER:
                        self._spawn(self._resume_when_written())
                return
            kind = type(event)
            if kind is _engine.IncomingRequest:
                self._start_request(event)
            elif kind is _engine.VersionChosen:
                engine.set_handler(self._build_handler(event.version))
            elif kind is _engine.CloseConnection:
                self.close()
                return
            elif event is _engine.END_OF_INPUT:
                self._end_of_input()
                return

    async def _resume_when_written(self) -> None:
        assert self._wire is not None
        await self._wire.wait_for_space()
        self._process()

    def _end_of_input(self) -> None:
        self._eof = True
        assert self._wire is not None and self._loop is not None
        if self._wire.reader_gone():
            log.debug("peer gone; closing")
            self.close()
            return
        self._grace = self._loop.call_later(HANDLER_GRACE, self.close)
        self._wake_consumer()
        self._finish_if_idle()

    def _finish_if_idle(self) -> None:
        """After end of input: close once nothing received is left to do."""
        if self._eof and not self._tasks and self._engine.queue_empty:
            self.close()

    def _build_handler(self, version: int) -> object:
        raise NotImplementedError  # the agent / client side

    # -- incoming requests -----------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        assert self._loop is not None
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if self._closing:
            self._maybe_done()
        elif self._eof:
            self._finish_if_idle()

    def _start_request(self, request: Any) -> None:
        task = self._spawn(self._run_request(request))
        request.running.handle = task

    async def _run_request(self, request: Any) -> None:
        _origin.set(_engine.ORIGIN_REQUEST)
        engine = self._engine
        line: bytes | None
        try:
            if request.running.cancel_reason is not None:
                line = engine.answer_cancelled(request)  # cancelled before it started
            else:
                result = await request.handler(request.params)
                line = engine.answer(request, result)
        except asyncio.CancelledError:
            if self._closing and not self._eof:
                engine.request_done(request, None)
                raise
            line = engine.answer_cancelled(request)
        except Exception as exc:
            line = engine.answer_exception(request, exc)
        self._write(engine.request_done(request, line))
        if self._paused:
            self._process()

    # -- the ordered queue: notifications, and what waits behind them ---------------------

    def _wake_consumer(self) -> None:
        wakeup = self._queue_wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    async def _consume(self) -> None:
        _origin.set(_engine.ORIGIN_NOTIFICATION)
        engine = self._engine
        loop = asyncio.get_running_loop()
        while True:
            item = engine.next_queued()
            outbox = engine.take_outbox()
            if outbox:
                self._write(outbox)
            if item is None:
                if self._eof and engine.queue_empty:
                    self._finish_if_idle()
                    return
                self._queue_wakeup = loop.create_future()
                await self._queue_wakeup
                self._queue_wakeup = None
                continue
            if type(item) is _engine.IncomingRequest:
                self._start_request(item)
            else:
                try:
                    await item.handler(item.params)
                except Exception:
                    log.exception("notification handler for %s failed", item.name)
                engine.notification_done(item)
            if self._paused:
                self._process()

    # -- outgoing --------------------------------------------------------------------------

    async def notify(self, method: Any, params: Any) -> None:
        """Send the notification ``method`` (a method-table entry)."""
        if self._closing:
            raise ConnectionClosed("connection closed")
        line = self._engine.notification(method, params)
        await self._send(line)

    async def _send(self, line: bytes) -> None:
        wire = self._wire
        assert wire is not None
        wire.write(line)
        if wire.queued > self.limits.write_buffer_bytes:
            await wire.wait_for_space()
        elif _monotonic() - self._last_yield >= YIELD_INTERVAL:
            # a checkpoint: lets the loop read a session/cancel (and delivers one)
            await asyncio.sleep(0)
            self._last_yield = _monotonic()

    async def request(self, method: Any, params: Any) -> Any:
        """Send the request ``method`` and wait for its decoded result.

        Raises :class:`~acp_core.RequestError` for an error response and
        :class:`~acp_core.ConnectionClosed` if the peer goes away.  If the
        caller is cancelled while waiting and the version has
        ``$/cancel_request``, it is sent for the request.
        """
        if self._closing:
            raise ConnectionClosed("connection closed")
        loop = self._loop
        assert loop is not None
        future: asyncio.Future[None] = loop.create_future()
        call = self._engine.start_call(method, params, _Waiter(future), _origin.get())
        return await self._roundtrip(call, future)

    async def _roundtrip(self, call: Any, future: asyncio.Future[None]) -> Any:
        engine = self._engine
        try:
            if call.line:
                await self._send(call.line)
            await future
        finally:
            self._write(engine.call_finished(call))
            if engine.queue_ready:
                self._wake_consumer()
        return call.result()

    async def ext_request(self, name: str, params: Any) -> Any:
        """Call a ``_``-prefixed extension method; the result comes back as builtins."""
        if not name.startswith("_"):
            raise ValueError("extension method names start with '_'")
        if self._closing:
            raise ConnectionClosed("connection closed")
        loop = self._loop
        assert loop is not None
        future: asyncio.Future[None] = loop.create_future()
        call = self._engine.ext_call(name, params, _Waiter(future), _origin.get())
        return await self._roundtrip(call, future)

    async def ext_notify(self, name: str, params: Any) -> None:
        """Send a ``_``-prefixed extension notification."""
        if not name.startswith("_"):
            raise ValueError("extension notification names start with '_'")
        if self._closing:
            raise ConnectionClosed("connection closed")
        await self._send(self._engine.ext_notification(name, params))


async def _request_or_notify(
    conn: Connection, method: Any, form: type, params: Any
) -> Any:
    if isinstance(params, form):
        await conn.notify(method, params)
        return None
    return await conn.request(method, params)


class PeerProxy:
    """Calls the peer's methods by handler name: ``conn.agent.session_new(params)``.

    Requests return the decoded result; notifications return ``None`` once
    written.  ``_``-prefixed extensions: :meth:`ext_method` /
    :meth:`ext_notification`.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._version: object = None

    def __getattr__(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        conn = self._conn
        schema = conn._engine.schema  # pyright: ignore[reportPrivateUsage]
        method = next(
            (m for m in schema.outgoing.values() if m.handler == name), None
        )
        if method is None:
            raise AttributeError(
                f"the peer has no method {name!r} in protocol v{schema.version}"
            )
        call: Callable[[Any], Awaitable[Any]]
        form = getattr(method, "notification", None)
        if method.result is None:
            call = functools.partial(conn.notify, method)
        elif form is None:
            call = functools.partial(conn.request, method)
        else:  # a request also defined as a notification: the params type decides
            call = functools.partial(_request_or_notify, conn, method, form)
        return call

    async def ext_method(self, method: str, params: Any) -> Any:
        """Call the ``_``-prefixed extension ``method``; returns the raw result (builtins)."""
        return await self._conn.ext_request(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send the ``_``-prefixed extension notification ``method``."""
        await self._conn.ext_notify(method, params)


_ = (acp_core, PipeWire)
