"""One ACP connection on asyncio: the engine's events turned into tasks and writes.

Everything that is protocol (framing, correlation, ordering, batches, the
initialize and version rules, capability refusals, session-cancel answers,
bounds) is :class:`acp_core.Engine`'s; this module only

- feeds the engine the bytes the wire read, in the event loop's callback
  (no task switch per chunk), and writes what it built;
- runs each incoming request's handler in a task of its own (cancelled
  through ``Running.handle``), and the ordered notifications in one
  consumer task;
- pauses reading while the engine says a bound is reached, and makes
  senders wait while ``Limits.write_buffer_bytes`` are queued;
- keeps the clocks: ``HANDLER_GRACE`` after the peer closed its end,
  ``FLUSH_GRACE`` to flush on close.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

from acp_core.adapter import (
    END_OF_INPUT,
    NEED_DATA,
    ORIGIN_NOTIFICATION,
    ORIGIN_REQUEST,
    ORIGIN_USER,
    PAUSED,
    AgentRules,
    Call,
    ClientRules,
    CloseConnection,
    ConnectionClosed,
    Engine,
    IncomingRequest,
    Limits,
    MethodSpec,
    Running,
    UnknownVariant,
    VersionChosen,
)

from ._wire import Wire

__all__ = [
    "FLUSH_GRACE",
    "HANDLER_GRACE",
    "NOTIFICATION_BURST",
    "YIELD_INTERVAL",
    "Connection",
]

log = logging.getLogger("acp_asyncio")

#: After end of input, how long the requests (and notifications) already
#: received may take to be handled and answered before they are cancelled
#: (answered -32800).
HANDLER_GRACE: Final = 1.0
#: How long a closing connection may spend flushing queued messages.
FLUSH_GRACE: Final = 1.0
#: A handler that sends without ever waiting yields to the event loop at
#: least this often (seconds), so that a ``session/cancel`` is read and
#: delivered (as ``asyncio.CancelledError``) however tight its loop.
YIELD_INTERVAL: Final = 0.002
#: The notification consumer yields to the event loop after this many items
#: in a row (handlers that never wait would otherwise hold it to the end).
NOTIFICATION_BURST: Final = 64

# Who makes an outgoing call: the engine's ReadGate exemptions and ordering.
_origin: contextvars.ContextVar[int] = contextvars.ContextVar(
    "acp_asyncio_origin", default=ORIGIN_USER
)
_monotonic = time.monotonic


def _forwarded(engine: Engine, message: UnknownVariant) -> bytes:
    return engine.forward_notification(message)


class _Waiter(asyncio.Future[None]):
    """What the engine sets when a call's answer is there."""

    def set(self) -> None:
        if not self.done():
            self.set_result(None)


class Connection:
    """A JSON-RPC peer on asyncio over one :class:`acp_core.Engine`.

    Not built directly: see :func:`~acp_asyncio.serve_agent`,
    :func:`~acp_asyncio.connect_to_agent`, :func:`~acp_asyncio.spawn_agent`.
    """

    def __init__(
        self,
        rules: AgentRules | ClientRules,
        limits: Limits | None,
        max_message_size: int | None,
        unstable: bool,
    ) -> None:
        resolved = Limits.resolve(limits, max_message_size)
        #: The protocol state (:class:`acp_core.Engine`).
        self.engine = Engine(rules, resolved, unstable=unstable)
        self.rules = rules
        #: The bounds this connection keeps (:class:`~acp_core.Limits`).
        self.limits: Limits = resolved
        self._budget = resolved.write_buffer_bytes
        self._wire: Wire | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._consumer: asyncio.Task[None] | None = None
        self._consumer_idle: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._paused = False
        self._space_waiter: asyncio.Task[None] | None = None
        self._eof = False
        self._grace_over = False
        self._closing = False
        self._done: asyncio.Future[None] | None = None
        self._last_yield = 0.0
        # the context of _serving's caller, with the handler's origin: each
        # request task gets a copy of it (never the consumer's, which the
        # notification handlers change), as acp_trio's request context
        self._request_context = contextvars.Context()

    # -- the wire's callbacks ------------------------------------------------------------

    def on_data(self, data: bytes) -> None:
        if data:
            self.engine.receive_data(data)
            self._process()

    def on_eof(self) -> None:
        self.engine.receive_eof()
        self._process()

    def on_broken(self) -> None:
        log.debug("the peer stopped reading; closing")
        self.close()

    # -- life --------------------------------------------------------------------------

    @asynccontextmanager
    async def _serving(self, wire: Wire) -> AsyncGenerator[None, None]:
        """Serve over ``wire`` while the block runs; then close, and give the
        wire ``FLUSH_GRACE`` to write what is queued."""
        loop = self._loop = asyncio.get_running_loop()
        self._wire = wire
        self._request_context = contextvars.copy_context()
        self._request_context.run(_origin.set, ORIGIN_REQUEST)
        self._done = loop.create_future()
        self._consumer = loop.create_task(self._consume())
        self._consumer.add_done_callback(lambda _: self._maybe_done())
        try:
            yield
        finally:
            self.close()
            await self.wait_closed()
            try:
                await asyncio.wait_for(wire.wait_closed(), FLUSH_GRACE)
            except asyncio.TimeoutError:
                wire.abort()

    async def wait_closed(self) -> None:
        """Return once the connection is over (peer gone, or :meth:`close`)."""
        assert self._done is not None
        await asyncio.shield(self._done)

    @property
    def is_closed(self) -> bool:
        """Whether the connection stopped (peer gone or closed locally)."""
        return self._closing

    def running_requests(self) -> Mapping[Any, Running]:
        """Incoming requests currently being handled, by id."""
        return self.engine.running_requests()

    def close(self) -> None:
        """Stop: pending calls fail with ``ConnectionClosed``, handler tasks are
        cancelled, what is queued for the peer is flushed (``FLUSH_GRACE``)."""
        if self._closing:
            return
        self._closing = True
        self.engine.close()
        for task in list(self._tasks):
            task.cancel()
        if self._consumer is not None:
            self._consumer.cancel()
        if self._space_waiter is not None:
            self._space_waiter.cancel()
        wire = self._wire
        if wire is not None:
            wire.close()
            assert self._loop is not None
            self._loop.call_later(FLUSH_GRACE, wire.abort)
        self._maybe_done()

    def _maybe_done(self) -> None:
        done = self._done
        if (
            done is not None
            and not done.done()
            and self._closing
            and not self._tasks
            and (self._consumer is None or self._consumer.done())
        ):
            done.set_result(None)

    # -- input -----------------------------------------------------------------------------

    def _write(self, data: bytes | None) -> None:
        if data and self._wire is not None:
            self._wire.write(data)

    def _flush_outbox(self) -> None:
        engine = self.engine
        lines = engine.take_outbox()
        if lines:
            self._write(lines[0] if len(lines) == 1 else b"".join(lines))
        if engine.queue_ready:
            self._wake_consumer()

    def _process(self) -> None:
        """Take the engine's events until it needs data, pauses, or input ended."""
        if self._closing:
            return
        engine = self.engine
        wire = self._wire
        assert wire is not None
        while True:
            event = engine.next_event(wire.queued)
            self._flush_outbox()
            if event is NEED_DATA:
                if self._paused:
                    self._paused = False
                    wire.resume_reading()
                return
            if event is PAUSED:
                if not self._paused:
                    self._paused = True
                    wire.pause_reading()
                if wire.queued and self._space_waiter is None:
                    # WRITE_BUFFER: read again once the peer took some
                    assert self._loop is not None
                    self._space_waiter = self._loop.create_task(self._await_space())
                return
            if isinstance(event, IncomingRequest):
                self._start_request(event)
            elif isinstance(event, VersionChosen):
                self.version_chosen(event.version)
            elif isinstance(event, CloseConnection):
                log.debug("closing: %s", event.reason)  # the caller gets the error
                self.close()
                return
            elif event is END_OF_INPUT:
                self._end_of_input()
                return

    async def _await_space(self) -> None:
        assert self._wire is not None
        try:
            await self._wire.wait_for_space()
        finally:
            self._space_waiter = None
        self._process()

    def _unpause(self) -> None:
        """Something the read gate counts went down: read again if it allows."""
        if self._paused:
            self._process()

    def _end_of_input(self) -> None:
        """The peer closed its end: what was received gets ``HANDLER_GRACE``."""
        self._eof = True
        assert self._wire is not None and self._loop is not None
        if self._wire.reader_gone():
            log.debug("the peer is gone; closing")
            self.close()
            return
        self._loop.call_later(HANDLER_GRACE, self._grace_expired)
        self._wake_consumer()
        self._finish_if_idle()

    def _grace_expired(self) -> None:
        """Cancel what still runs after the grace: answered -32800, then close."""
        if self._closing:
            return
        self._grace_over = True
        engine = self.engine
        engine.abandon_queued()
        self._flush_outbox()
        for running in list(engine.running_requests().values()):
            running.cancel("request")
        if self._consumer is not None:
            self._consumer.cancel()
        assert self._loop is not None
        self._loop.call_later(FLUSH_GRACE, self.close)
        self._finish_if_idle()

    def _finish_if_idle(self) -> None:
        """After end of input: close once nothing received is left to do."""
        if (
            self._eof
            and not self._tasks
            and (self._grace_over or self.engine.queue_idle)
        ):
            self.close()

    def version_chosen(self, version: int) -> None:
        """The engine's initialize step: build the handler object for ``version``."""
        raise NotImplementedError  # acp_core.AgentSide / ClientSide

    # -- incoming requests -----------------------------------------------------------------

    def _start_request(self, request: IncomingRequest) -> None:
        """A task for ``request``, in a copy of the connection's request context
        (``create_task`` copies the context it runs in): what a notification
        handler set on the consumer's context is not seen there."""
        assert self._loop is not None
        task = self._request_context.run(
            self._loop.create_task, self._run_request(request)
        )
        self._tasks.add(task)
        task.add_done_callback(self._request_task_done)

    def _request_task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._closing:
            self._maybe_done()
        elif self._eof:
            self._finish_if_idle()

    async def _run_request(self, request: IncomingRequest) -> None:
        # The handle is set here, not at create_task: a task cancelled before
        # its first step would never run this function (no answer at all).
        engine = self.engine
        running = request.running
        line: bytes | None
        if running.cancel_reason is not None:  # cancelled before it started
            line = engine.answer_cancelled(request)
        else:
            running.handle = asyncio.current_task()
            try:
                result = await request.handler(request.params)
            except asyncio.CancelledError:
                running.handle = None
                line = None if self._closing else engine.answer_cancelled(request)
            except Exception as exc:
                running.handle = None
                line = engine.answer_exception(request, exc)
            else:
                running.handle = None
                line = engine.answer(request, result)
        self._write(engine.request_done(request, line))
        self._flush_outbox()
        self._unpause()

    # -- the ordered queue: notifications, and what waits behind them ---------------------

    def _wake_consumer(self) -> None:
        idle = self._consumer_idle
        if idle is not None and not idle.done():
            idle.set_result(None)

    async def _consume(self) -> None:
        _origin.set(ORIGIN_NOTIFICATION)
        engine = self.engine
        loop = asyncio.get_running_loop()
        burst = 0
        while True:
            item = engine.next_queued()
            self._flush_outbox()
            if item is None:
                if self._eof and engine.queue_idle:
                    self._finish_if_idle()
                    return
                burst = 0
                self._consumer_idle = loop.create_future()
                await self._consumer_idle
                self._consumer_idle = None
                continue
            if isinstance(item, IncomingRequest):
                self._start_request(item)
            else:
                try:
                    await item.handler(item.params)
                except Exception:
                    log.exception("notification handler for %s failed", item.name)
                engine.notification_done(item)
            self._unpause()
            burst += 1
            if burst >= NOTIFICATION_BURST:
                burst = 0
                await asyncio.sleep(0)

    # -- outgoing --------------------------------------------------------------------------

    async def notify(self, method: MethodSpec, params: Any) -> None:
        """Send the notification ``method`` (a method-table entry).

        Waits while ``Limits.write_buffer_bytes`` are queued for the peer.
        """
        await self._send(self.engine.notification, method, params)

    async def ext_notify(self, name: str, params: Any) -> None:
        """Send a ``_``-prefixed extension notification."""
        await self._send(self.engine.ext_notification, name, params)

    async def forward(self, message: UnknownVariant) -> None:
        """Send on a notification received naming an unknown variant (a peer
        on a newer spec, given to ``unknown_variant``), its params byte for
        byte.  :class:`ValueError` if this side does not send its method."""
        await self._send(_forwarded, self.engine, message)

    async def _send(
        self, encode: Callable[[Any, Any], bytes], what: Any, params: Any
    ) -> None:
        if self._closing:
            raise ConnectionClosed("connection closed")
        wire = self._wire
        assert wire is not None
        wire.write(encode(what, params))
        if wire.queued > self._budget:
            await wire.wait_for_space()
        elif _monotonic() - self._last_yield >= YIELD_INTERVAL:
            # a checkpoint: the loop reads (a session/cancel) and delivers it;
            # the interval counts from the resumption (the sender's own running)
            await asyncio.sleep(0)
            self._last_yield = _monotonic()

    async def request(self, method: MethodSpec, params: Any) -> Any:
        """Send the request ``method`` and wait for its decoded result.

        Raises :class:`~acp_core.RequestError` for an error response,
        :class:`~acp_core.CapabilityError` for a call the peer did not
        advertise (nothing sent) and :class:`~acp_core.ConnectionClosed` if
        the peer goes away.  If the caller is cancelled while waiting and
        the version has ``$/cancel_request``, it is sent for the request.
        """
        return await self._call(self.engine.start_call, method, params)

    async def ext_request(self, name: str, params: Any) -> Any:
        """Call a ``_``-prefixed extension method; the result comes back as builtins."""
        return await self._call(self.engine.start_ext_call, name, params)

    async def _call(self, start: Callable[..., Call], what: Any, params: Any) -> Any:
        """Register a call with ``start``, send it, wait for its answer."""
        if self._closing:
            raise ConnectionClosed("connection closed")
        engine = self.engine
        wire = self._wire
        assert wire is not None
        waiter = _Waiter(loop=self._loop)
        call = start(what, params, waiter, _origin.get())
        sent = False
        try:
            if wire.queued > self._budget:
                await wire.wait_for_space()
            wire.write(call.line)
            sent = True
            await waiter
        finally:
            cancel_request = engine.call_finished(call)
            if sent:  # $/cancel_request only for a request the peer got
                self._write(cancel_request)
            if engine.queue_ready:
                self._wake_consumer()
        return call.result()
