"""One JSON-RPC peer over one trio stream: the trio adapter over :class:`acp_core.Engine`.

The protocol (framing, correlation, routing, batches, ordering, the side's
rules) is the engine's; this module reads, writes, runs handlers in tasks
and waits.  :class:`~acp_trio.AgentSideConnection` and
:class:`~acp_trio.ClientSideConnection` give it their side's rules
(``acp_core.AgentRules`` / ``ClientRules``) and build the handler objects.
How the engine's rules play out here:

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
- what handlers send while the receive loop runs their first steps is held
  and written in one go when the loop stops dispatching (before any other
  task runs), or sooner past ``HOLD_BYTES`` / ``HOLD_SECONDS``
  (:meth:`LineWriter.hold <acp_trio._framing.LineWriter.hold>`);
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

import contextvars
import logging
import types
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, Final

import trio
from acp_core.adapter import (
    END_OF_INPUT,
    NEED_DATA,
    NOTIFICATIONS,
    ORIGIN_NOTIFICATION,
    ORIGIN_REQUEST,
    ORIGIN_USER,
    PAUSED,
    WRITE_BUFFER,
    AgentRules,
    ClientRules,
    CloseConnection,
    ConnectionClosed,
    Engine,
    Id,
    IncomingRequest,
    Limits,
    MethodSpec,
    QueuedNotification,
    Running,
    Schema,
    VersionChosen,
)

from ._framing import (
    CallWaiter,
    LineReader,
    LineWriter,
    SchedulePoint,
    Wakeup,
)

__all__ = ["Connection", "Running"]

log = logging.getLogger("acp_trio")

#: How long a closing connection may spend flushing queued messages.
FLUSH_GRACE: Final = 1.0
#: After end of input, how long the requests (and notifications) already
#: received may take to be handled and answered before they are cancelled.
HANDLER_GRACE: Final = 1.0
#: The notification task yields to others after this many items in a row.
NOTIFICATION_BURST: Final = 64
#: Request tasks kept waiting for the next request (more end when done).
MAX_IDLE_WORKERS: Final = 8

# True inside the notification task: requests made there skip the ordering barrier.
_in_notification: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_trio_in_notification", default=False
)
# True in the tasks that run incoming requests (see ReadGate: requests_wait).
_in_request: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_trio_in_request", default=False
)

Handler = Callable[[Any], Awaitable[Any]]


class _Worker:
    """A task of the connection's pool: see :meth:`Connection._work`.

    ``job`` is the request it runs next; ``None`` means it reads instead.
    """

    __slots__ = ("job", "wakeup")

    def __init__(self, job: IncomingRequest | None) -> None:
        self.job = job
        self.wakeup = Wakeup()


class _Suspended:
    """A handler whose first step, run in the reading task, yielded to trio.

    ``job``: the request it answers; ``note``: the notification it handles
    (its step ran in ``context``, the notification task's); neither: the
    reading task must only hand reading over.
    """

    __slots__ = ("context", "coro", "job", "note", "trap")

    def __init__(
        self,
        job: IncomingRequest | None,
        coro: Any,
        trap: Any,
        note: QueuedNotification | None = None,
        context: contextvars.Context | None = None,
    ) -> None:
        self.job = job
        self.coro = coro
        self.trap = trap
        self.note = note
        self.context = context


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


@types.coroutine
def _resume_in(
    context: contextvars.Context, coro: Any, trap: Any
) -> Generator[Any, Any, Any]:
    """:func:`_resume`, each step of ``coro`` run in ``context``."""
    while True:
        try:
            value = yield trap
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # Cancelled and the like: into the coroutine
            try:
                trap = context.run(coro.throw, exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                trap = context.run(coro.send, value)
            except StopIteration as stop:
                return stop.value


#: The reading task must hand reading over and end.
_RETIRE: Final = _Suspended(None, None, None)


def _origin() -> int:
    if _in_notification.get():
        return ORIGIN_NOTIFICATION
    return ORIGIN_REQUEST if _in_request.get() else ORIGIN_USER


class Connection:
    """A JSON-RPC 2.0 peer speaking ACP over one trio stream.

    Not instantiated directly: use the agent- or client-side subclass through
    :func:`~acp_trio.serve_agent`, :func:`~acp_trio.connect_to_agent`,
    :func:`~acp_trio.spawn_agent` or :func:`~acp_trio.serve_agent_stdio`.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        rules: AgentRules | ClientRules,
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        self.stream = stream
        #: The bounds this connection keeps (:class:`~acp_trio.Limits`).
        self.limits = limits = Limits.resolve(limits, max_message_size)
        self.max_message_size = limits.max_message_size
        #: The protocol state (:class:`acp_core.Engine`).
        self.engine = Engine(rules, limits, unstable=unstable)
        self.rules = rules
        self._not_inline = rules.not_inline
        self._reader = LineReader(stream, max_message_size=limits.max_message_size)
        self._writer = LineWriter(
            stream,
            budget=limits.write_buffer_bytes,
            schedule_point=SchedulePoint(),
        )
        self._read_wakeup = Wakeup()
        self._read_paused: str | None = None  # why the reading task waits, if it does
        self._order_wakeup = Wakeup()
        self._order_waiting = False  # the notification task waits on the order
        self._notify_wakeup = Wakeup()
        # The notification task's context (handlers run in it, wherever they
        # run) and whether a notification handler runs outside that task.
        self._notify_context: contextvars.Context | None = None
        self._notify_busy = False
        self._idle_workers: list[_Worker] = []
        self._context = contextvars.Context()  # run()'s, for the tasks of the pool
        # While the reading task dispatches a chunk: its scope and context, so
        # that a request's first step runs right there (see _run_inline).
        self._inline: tuple[trio.CancelScope, contextvars.Context] | None = None
        self._suspended: _Suspended | None = None
        self._nursery: trio.Nursery | None = None
        self._cancel_scope = trio.CancelScope()
        self._closed = False
        self._eof = False  # end of input: handlers finish within HANDLER_GRACE
        self.closed = trio.Event()

    @property
    def schema(self) -> Schema:
        """The protocol version spoken (it may change with ``initialize``)."""
        return self.engine.schema

    @property
    def _notify_queue(self) -> Any:
        return self.engine.queue

    # -- configuration -----------------------------------------------------------

    def bind(self, schema: Schema) -> None:
        """Speak ``schema`` from now on (after version negotiation)."""
        self.engine.bind(schema)
        self._version_switched()

    def _version_switched(self) -> None:
        """Hook: the protocol version changed (the side's peer proxy forgets)."""

    def set_handler(self, obj: object | None) -> None:
        """Route incoming methods to ``obj``'s methods named by the table's handler names.

        Public methods of ``obj`` that no method reaches are logged.
        """
        self.engine.set_handler(obj)

    def version_chosen(self, version: int) -> None:
        """The engine's initialize step: build the handler object for ``version``."""
        raise NotImplementedError  # acp_core.AgentSide / ClientSide

    def cancelled_result(self, running: Running, result: Any = None) -> bytes | None:
        """The encoded result answering a session-cancelled request, if any."""
        return self.rules.cancelled_result(self.schema, running, result)

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
                    if self._eof and not self._cancel_scope.cancel_called:
                        self.engine.abandon_queued()
                        self._flush_outbox()
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
        self.engine.end_of_input()
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

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        self.engine.close()

    async def _write_loop(self) -> None:
        try:
            await self._writer.run()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("peer stopped reading; closing")
            self.close()

    def _flush_outbox(self) -> None:
        engine = self.engine
        lines = engine.take_outbox()
        if lines and not self._closed:
            send = self._writer.send_nowait
            for line in lines:
                send(line)

    def _on_event(
        self, event: IncomingRequest | VersionChosen | CloseConnection
    ) -> None:
        """Act on one event of :meth:`Engine.next_event`."""
        if isinstance(event, IncomingRequest):
            self._dispatch(event)
        elif isinstance(event, VersionChosen):
            self._version_switched()
            try:
                self.version_chosen(event.version)
            except Exception:
                log.exception("failed to build the handler for v%d", event.version)
                self.engine.set_handler(None)
        else:
            log.debug("closing: %s", event.reason)  # the caller gets the error
            self.close()

    def _wake_consumer(self) -> None:
        """The notification task, if it waits while the queue has work for it."""
        if self.engine.queue_ready:
            if self._order_waiting:
                self._order_wakeup.wake()
            else:
                self._notify_wakeup.wake()

    def _take_queued(self) -> None:
        """Queued notifications: handle them here if the notification task
        idles (nothing else queued or being handled), else wake it."""
        engine = self.engine
        if engine.queue_ready:
            wakeup = self._notify_wakeup
            if wakeup.task is not None:
                if (
                    self._inline is not None
                    and self._suspended is None
                    and not self._notify_busy
                    and engine.backlog == len(engine.queue)
                ):
                    self._notify_inline()
                    if not engine.queue:
                        return
                wakeup.wake()

    def _notify_inline(self) -> None:
        """Handle queued notifications in the reading task, while the
        notification task idles (nothing else queued or being handled).

        Saves a task switch per burst of notifications.  Each handler runs
        in the notification task's context (requests it makes are exempt
        from the order, as there); one that yields keeps running in this
        task, which hands reading over (:meth:`_work`), and the notification
        task waits for it (``_notify_busy``) before handling the next one.
        """
        engine = self.engine
        queue = engine.queue
        context: Any = self._notify_context
        item: Any = None
        while queue and type(queue[0]) is QueuedNotification:
            item = engine.next_queued(item)
            if item is None:  # held (ResumeOrder)
                return
            coro: Any = item.handler(item.params)
            try:
                trap = context.run(coro.send, None)
            except StopIteration:
                continue
            except Exception:
                log.exception("notification handler for %s failed", item.name)
                continue
            except BaseException:
                engine.notification_done(item)
                raise
            self._notify_suspended(item, coro, trap)
            return
        if item is not None:
            engine.notification_done(item)

    def _notify_suspended(self, item: QueuedNotification, coro: Any, trap: Any) -> None:
        """A notification handler run by the reading task yielded: this task
        goes on with it (:meth:`_work`), the notification task waits."""
        self._notify_busy = True
        self._suspended = _Suspended(None, coro, trap, item, self._notify_context)

    async def _read(
        self, scope: trio.CancelScope, baseline: contextvars.Context
    ) -> bool:
        """Read and dispatch messages: ``True`` at end of input (the connection
        is over), ``False`` when this task must stop reading (``_suspended``).

        The engine's one door: bytes in (``receive_data``), events out
        (``next_event``), bytes to send (``take_outbox``).  What a stretch
        of dispatching sends leaves in one write (:meth:`LineWriter.hold`).
        """
        reader = self._reader
        engine = self.engine
        writer = self._writer
        send = writer.send_nowait
        next_event = engine.next_event
        take_outbox = engine.take_outbox
        while True:
            self._inline = (scope, baseline)
            writer.hold()  # sends of this stretch leave together (LineWriter.hold)
            waiting = engine.calls_pending
            try:
                while True:
                    event = next_event(writer.queued)
                    for line in take_outbox():
                        send(line)
                    if event is NEED_DATA or event is PAUSED:
                        self._take_queued()
                        if self._suspended is not None:
                            return False
                        break
                    if event is END_OF_INPUT:
                        self._take_queued()
                        log.debug("peer closed the connection")
                        self._end_of_input()
                        return True
                    self._on_event(event)
                    self._take_queued()
                    if self._suspended is not None:
                        return False
            finally:
                self._inline = None
                # We answered or a caller got its answer (and will send): the
                # peer's next message comes after ours, the pipe is empty now.
                if writer.release() or engine.calls_pending < waiting:
                    reader.wait_first = True
            if event is PAUSED:
                await self._pause_reading()
                continue
            try:
                data = await reader.receive_some()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            engine.receive_data(data)  # b"": end of input

    async def _pause_reading(self) -> None:
        """Wait until :class:`ReadGate` lets the reading task read again."""
        engine = self.engine
        while True:
            reason = engine.read_gate(self._writer.queued)
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
        self._notify_context = trio.lowlevel.current_task().context
        engine = self.engine
        queue = engine.queue
        gate = engine.gate
        next_queued = engine.next_queued
        burst = 0
        while True:
            if self._notify_busy:  # a handler runs in another task (_notify_inline)
                await self._notify_wakeup.wait()
                continue
            item = next_queued()
            if item is None:
                if queue:  # a released caller goes first (ResumeOrder)
                    self._order_waiting = True
                    try:
                        await self._order_wakeup.wait()
                    finally:
                        self._order_waiting = False
                    continue
                if self._eof:
                    return
                burst = 0
                await self._notify_wakeup.wait()
                continue
            paused = self._read_paused
            if (
                paused == NOTIFICATIONS
                and 2 * len(queue) <= gate.max_items
                and 2 * engine.queued_bytes <= gate.max_bytes
            ):  # half empty: read again
                self._read_wakeup.wake()
            if isinstance(item, QueuedNotification):
                try:
                    await item.handler(item.params)
                except Exception:
                    log.exception("notification handler for %s failed", item.name)
                finally:
                    engine.notification_done(item)
            else:  # a request held behind earlier notifications
                self._dispatch(item)
            burst += 1
            if burst >= NOTIFICATION_BURST:
                burst = 0
                await trio.lowlevel.checkpoint()

    # -- incoming requests -----------------------------------------------------------

    def _dispatch(self, job: IncomingRequest) -> None:
        """Run ``job``: right here if the reading task is dispatching, else on
        an idle task of the pool, else on a new one."""
        if (
            self._inline is not None
            and self._suspended is None
            and job.running.method.name not in self._not_inline
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

    def _run_inline(self, job: IncomingRequest) -> None:
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
        self._suspended = _Suspended(job, coro, trap)

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

    async def _work(self, worker: _Worker) -> None:
        """A task of the pool: reads, or runs requests, in one cancel scope.

        A new task and a new cancel scope per request cost more than the rest
        of a request, so a task that answered one waits for the next (up to
        ``MAX_IDLE_WORKERS`` wait).  Exactly one task reads at a time; it runs
        each request's first step itself (:meth:`_run_inline`) and, when a
        handler yields, hands reading over and goes on with that request.

        The task's scope is the running request's handle; once cancelled,
        the task answers that request and ends.  It also ends when a handler
        left a context variable changed, so that no request sees another's
        context.
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
                        self._suspended = None
                        self._start_reader()
                        job = suspended.job
                        if job is None:  # _RETIRE, or a notification's handler
                            if suspended.note is not None:
                                await self._finish_notification(suspended)
                            return
                        worker.job = job
                        line = await _resume(suspended.coro, suspended.trap)
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
                self._request_done(job, self.engine.answer_cancelled(job))
        finally:
            if worker in idle:
                idle.remove(worker)
            left = worker.job
            if left is not None:  # the connection is closing
                worker.job = None
                # after a half-close the peer may still read: tell it
                line = None
                if self._eof and not self._cancel_scope.cancel_called:
                    line = self.engine.answer_cancelled(left)
                self._request_done(left, line)

    async def _finish_notification(self, suspended: _Suspended) -> None:
        """Run the rest of a notification handler whose first step yielded."""
        note = suspended.note
        assert note is not None and suspended.context is not None
        try:
            await _resume_in(suspended.context, suspended.coro, suspended.trap)
        except Exception:
            log.exception("notification handler for %s failed", note.name)
        finally:
            self._notify_busy = False
            self.engine.notification_done(note)
            self._notify_wakeup.wake()

    async def _handle_request(
        self, job: IncomingRequest, scope: trio.CancelScope
    ) -> bytes:
        """Run one handler inside ``scope``; its answer (a cancellation raises)."""
        running = job.running
        engine = self.engine
        if running.cancel_reason is None:  # not cancelled before it started
            running.handle = scope
            try:
                result = await job.handler(job.params)
            except Exception as exc:
                return engine.answer_exception(job, exc)
            finally:
                running.handle = None
            return engine.answer(job, result)
        return engine.answer_cancelled(job)

    def _request_done(self, job: IncomingRequest, line: bytes | None) -> None:
        """Forget ``job`` and send its answer (``None``: none, the connection is closing)."""
        engine = self.engine
        out = engine.request_done(job, line)
        self._wake_consumer()  # a request waiting for a slot may start
        if out is not None and not self._closed:
            self._writer.send_nowait(out)

    # -- outgoing ------------------------------------------------------------------

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
        writer = self._writer
        await trio.lowlevel.checkpoint_if_cancelled()
        if writer.queued >= writer.budget:
            await writer.wait_for_space()
            if self._closed:
                raise ConnectionClosed("connection closed")
        writer.send_nowait(self.engine.notification(method, params))
        if writer.schedule_point.needed():
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
        return await self._roundtrip(method, params, None)

    async def ext_request(self, name: str, params: Any) -> Any:
        """Call a ``_``-prefixed extension method; result returned as builtins."""
        if not name.startswith("_"):
            raise ValueError("extension method names start with '_'")
        if self._closed or self._eof:
            raise ConnectionClosed("connection closed")
        return await self._roundtrip(None, params, name)

    async def _roundtrip(
        self, method: MethodSpec | None, params: Any, ext: str | None
    ) -> Any:
        writer = self._writer
        engine = self.engine
        # A checkpoint before and (waiting for the answer) after, as
        # LineWriter.send is, without its schedule point in between.
        await trio.lowlevel.checkpoint_if_cancelled()
        if writer.queued >= writer.budget:
            await writer.wait_for_space()
        if self._closed:
            raise ConnectionClosed("connection closed")
        event = CallWaiter()
        if method is not None:
            call = engine.start_call(method, params, event, _origin())
        else:
            assert ext is not None
            call = engine.start_ext_call(ext, params, event, _origin())
        if (call.exempt or call.in_request) and self._read_paused is not None:
            self._read_wakeup.wake()  # a handler waits: reading must go on (ReadGate)
        self._wake_consumer()  # a request waiting for a slot is refused now
        try:
            writer.send_nowait(call.line)
            await event.wait()
        finally:
            cancel = engine.call_finished(call)
            if cancel is not None and not self._closed:
                writer.send_nowait(cancel)
            self._wake_consumer()
        return call.result()

    async def ext_notify(self, name: str, params: Any) -> None:
        """Send a ``_``-prefixed extension notification."""
        if not name.startswith("_"):
            raise ValueError("extension notification names start with '_'")
        if self._closed:
            raise ConnectionClosed("connection closed")
        await self._writer.send(self.engine.ext_notification(name, params))

    # -- introspection -------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        """Whether the connection stopped (peer gone or closed locally)."""
        return self._closed

    def running_requests(self) -> Mapping[Id, Running]:
        """Incoming requests currently being handled, by id."""
        return self.engine.running
