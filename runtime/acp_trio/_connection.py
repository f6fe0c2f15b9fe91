"""One ACP connection on trio: the engine's events turned into tasks and writes.

Everything that is protocol (framing, correlation, ordering, batches, the
initialize and version rules, capability refusals, session-cancel answers,
bounds) is :class:`acp_core.Engine`'s; this module only

- reads and feeds the engine (``receive_data`` / ``next_event``, the
  adapter contract of :mod:`acp_core.adapter`), writing what it built;
- runs the notification handlers one at a time, in order
  (:meth:`Connection._take_queued`, the only place they start), and each
  request's handler in a cancel scope (``Running.handle``);
- pauses reading while the engine says a bound is reached, and makes
  senders wait while ``Limits.write_buffer_bytes`` are queued;
- keeps the clocks: ``HANDLER_GRACE`` after the peer closed its end,
  ``FLUSH_GRACE`` to flush on close.

Roles, each held by one task at a time (the pool's tasks run
:meth:`Connection._work`):

==================  =============================  =================================
role                which task holds it            when it is handed over
==================  =============================  =================================
reading             a task of the pool             a first step it ran yielded: to
(``_read``)                                        an idle task of the pool, else a
                                                   new one (this one goes on with it)
consuming           a task of the pool             the same; while it waits idle,
(``_consume``)                                     reading takes queued notifications
a request's rest    the task that ran its first    never (its scope is the request's
                    step                           handle); then it waits for a role
a notification's    the task that ran its first    never; the queue waits for it
rest                step
writing             the sender                     the writer task (``_write_loop``)
                    (``LineWriter.flush``)         writes what the pipe did not
                                                   take at once
our call's wait     the caller's task              released by the task that took
                    (``CallWaiter``)               the answer (reading; consuming if
                                                   held behind notifications)
==================  =============================  =================================

A request starts in the task whose role took it from the engine (reading
for ``next_event``, consuming for ``next_queued``): a handler that answers
without waiting on anything costs no task switch, and reading and
consuming never wait on a handler.

Every handler step runs through one trampoline
(:class:`~acp_trio._handler_steps.HandlerSteps`), in a copy of :meth:`Connection.run`'s context
(one per request, so no request sees another's context variables; the
notification handlers, which run one at a time in order, share one):
what it sends is queued and leaves in one write when it yields to trio or
returns (:class:`~acp_trio._framing.LineWriter`), so the peer wakes once
per burst.  At the end of input (the peer
closed its end) pending outgoing requests fail with
:class:`~acp_trio.ConnectionClosed`; what was received is still handled
for up to ``HANDLER_GRACE`` seconds and answered (a peer that half-closed
may still read), then cancelled (a request is answered -32800).  A peer
known to be gone (a write fails; over a pipe, no reader left at EOF) and
:meth:`Connection.close` cancel every handler at once.

Example (a client, over an already-connected stream)::

    async with acp_trio.connect_to_agent(stream, client=MyClient) as conn:
        init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final

import trio
from acp_core.adapter import (
    END_OF_INPUT,
    NEED_DATA,
    ORIGIN_NOTIFICATION,
    ORIGIN_REQUEST,
    ORIGIN_USER,
    PAUSED,
    WRITE_BUFFER,
    AgentRules,
    Call,
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
    UnknownVariant,
    VersionChosen,
)

from ._framing import CallWaiter, LineReader, LineWriter, Wakeup
from ._handler_steps import HandlerSteps
from ._pool import (
    BURST,
    RETIRE,
    RETURNED,
    Notifying,
    Role,
    Signal,
    Started,
    Taken,
    Worker,
)

__all__ = ["FLUSH_GRACE", "HANDLER_GRACE", "Connection", "Running"]

log = logging.getLogger("acp_trio")

#: How long a closing connection may spend flushing queued messages.
FLUSH_GRACE: Final = 1.0
#: After end of input, how long the requests (and notifications) already
#: received may take to be handled and answered before they are cancelled.
HANDLER_GRACE: Final = 1.0
#: The consuming task yields to others after this many items in a row.
NOTIFICATION_BURST: Final = 64
#: Tasks of the pool kept waiting for a role (more end when done).
MAX_IDLE_WORKERS: Final = 8

# What a role's loop may return (tuples: ``A | B`` would build a union per test).
_REQUEST_OR_SIGNAL: Final = (Started, Signal)
_TAKEN: Final = (Started, Signal, Notifying)

# trio's checkpoints, looked up once (each send awaits one or two).
_checkpoint_if_cancelled: Final = trio.lowlevel.checkpoint_if_cancelled
_cancel_shielded_checkpoint: Final = trio.lowlevel.cancel_shielded_checkpoint

# Who makes an outgoing call: the engine's ReadGate exemptions and ordering.
_origin: contextvars.ContextVar[int] = contextvars.ContextVar(
    "acp_trio_origin", default=ORIGIN_USER
)


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
        self._reader = LineReader(stream, max_message_size=limits.max_message_size)
        self._writer = LineWriter(stream, budget=limits.write_buffer_bytes)
        self._read_wakeup = Wakeup()  # the reading task, paused at a bound
        self._paused = False
        # handlers run one step at a time; sends made in a step are only queued
        self._steps = HandlerSteps(self._writer)
        self._step = self._steps.step
        self._drive = self._steps.drive
        self._consumer = Wakeup()  # the consuming task, idle
        self._notifying = False  # a notification handler's first step yielded
        self._idle: list[Worker] = []
        self._context = contextvars.Context()  # run()'s, for the tasks of the pool
        # run()'s context with the handler's origin: copied for each request
        # handler; the notification handlers, one at a time, share theirs.
        self._request_context = contextvars.Context()
        self._notification_context = contextvars.Context()
        self._nursery: trio.Nursery | None = None
        self._cancel_scope = trio.CancelScope()
        self._closed = False
        self._eof = False  # end of input: handlers finish within HANDLER_GRACE
        #: Set once the connection is over.
        self.closed = trio.Event()

    @property
    def schema(self) -> Schema:
        """The protocol version spoken (it may change with ``initialize``)."""
        return self.engine.schema

    def version_chosen(self, version: int) -> None:
        """The engine's initialize step: build the handler object for ``version``."""
        raise NotImplementedError  # acp_core.AgentSide / ClientSide

    # -- life ------------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the connection until the peer closes it or :meth:`close` is called."""
        self._context = context = contextvars.copy_context()
        self._request_context = context.copy()
        self._request_context.run(_origin.set, ORIGIN_REQUEST)
        self._notification_context = context.copy()
        self._notification_context.run(_origin.set, ORIGIN_NOTIFICATION)
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._write_loop)
                try:
                    with self._cancel_scope:
                        async with trio.open_nursery() as nursery:
                            self._nursery = nursery
                            self._spawn(Worker(Role.CONSUME))
                            self._spawn(Worker(Role.READ))
                            task_status.started()
                finally:
                    if self._eof and not self._cancel_scope.cancel_called:
                        self.engine.abandon_queued()  # answered -32800
                        self._flush_outbox()
                    self._shutdown()
                    outer.cancel_scope.deadline = trio.current_time() + FLUSH_GRACE
        finally:
            self._shutdown()
            self.closed.set()

    def close(self) -> None:
        """Stop serving: pending requests fail, handlers are cancelled."""
        self._cancel_scope.cancel()

    def _shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close()
            self.engine.close()

    async def _write_loop(self) -> None:
        try:
            await self._writer.run()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("the peer stopped reading; closing")
            self.close()

    def _end_of_input(self) -> None:
        """The peer closed its end: what was received gets ``HANDLER_GRACE``."""
        self._eof = True
        if self._writer.reader_gone():
            log.debug("the peer is gone; closing")
            self.close()
            return
        assert self._nursery is not None
        self._nursery.cancel_scope.deadline = trio.current_time() + HANDLER_GRACE
        idle, self._idle = self._idle, []
        for worker in idle:  # no role and _eof set: it ends
            worker.wakeup.wake()
        self._consumer.wake()

    # -- the pool: roles, and requests that outlive their first step ------------------

    def _spawn(self, worker: Worker) -> None:
        # In run()'s context: not in that of the task asking.
        assert self._nursery is not None
        self._context.run(self._nursery.start_soon, self._work, worker)

    def _hand_over(self, role: Role) -> None:
        """Give ``role`` to an idle task of the pool, else to a new one."""
        idle = self._idle
        if idle:
            worker = idle.pop()
            worker.role = role
            worker.wakeup.wake()
        else:
            self._spawn(Worker(role))

    async def _work(self, worker: Worker) -> None:
        """A task of the pool: holds a role, or goes on with a request.

        The task's cancel scope is the handle of the request it runs (its
        first step ran in the role's loop, under the same scope).  When a
        first step yields, the role's loop returns it here: the role goes to
        another task and this one awaits the rest.  A task whose scope was
        cancelled answers its request (-32800) and ends; one that finished
        its request waits for a role (up to ``MAX_IDLE_WORKERS`` wait).
        """
        idle = self._idle
        try:
            with trio.CancelScope() as scope:
                while (role := worker.role) is not None:
                    worker.role = None
                    if role is Role.READ:
                        started = await self._read(scope)
                    else:
                        started = await self._consume(scope)
                    if started is None:
                        return  # the role is over: end of input
                    self._hand_over(role)
                    if started is RETIRE:
                        return
                    if isinstance(started, Notifying):  # taken while reading
                        await self._notify_rest(started)
                    else:
                        assert isinstance(started, Started)
                        worker.job = started.job
                        line = await self._finish_request(started)
                        worker.job = None
                        self._request_done(started.job, line)
                        self._writer.flush()
                    if (
                        scope.cancel_called
                        or self._eof
                        or len(idle) >= MAX_IDLE_WORKERS
                    ):
                        return
                    idle.append(worker)
                    await worker.wakeup.wait()  # a role, or none at end of input
            # A cancelled request: the scope caught its Cancelled.
            job = worker.job
            if job is not None:
                worker.job = None
                self._request_done(job, self.engine.answer_cancelled(job))
                self._writer.flush()
        finally:
            if worker in idle:
                idle.remove(worker)
            left = worker.job
            if left is not None:  # the connection is closing
                worker.job = None
                # after a half-close the peer may still read: tell it
                answer = None
                if self._eof and not self._cancel_scope.cancel_called:
                    answer = self.engine.answer_cancelled(left)
                self._request_done(left, answer)

    # -- input -----------------------------------------------------------------------

    async def _read(self, scope: trio.CancelScope) -> Taken:
        """The reading role: until end of input (``None``), or until what it
        started yields to trio (returned, for the caller to go on with)."""
        engine = self.engine
        reader = self._reader
        while True:
            event = self._process(scope)
            if event is END_OF_INPUT:  # the consuming task takes what is left
                self._writer.flush()
                log.debug("the peer closed the connection")
                self._end_of_input()
                return None
            if engine.queue_ready:
                if isinstance(event, _REQUEST_OR_SIGNAL):
                    self._consumer.wake()
                elif (taken := self._take_queued_here(scope)) is not None:
                    event = taken
            self._writer.flush()  # before any wait: what this stretch built
            if isinstance(event, _TAKEN):
                return event
            if event is PAUSED:
                await self._pause_reading()
                continue
            try:
                data = await reader.receive_some()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            engine.receive_data(data)  # b"": end of input

    def _process(self, scope: trio.CancelScope) -> object:
        """Take the engine's events until it needs data, pauses, input
        ended, or a request's first step yields."""
        engine = self.engine
        writer = self._writer
        while True:
            event = engine.next_event(writer.queued)
            self._queue_outbox()
            if event is NEED_DATA or event is PAUSED or event is END_OF_INPUT:
                return event
            if isinstance(event, IncomingRequest):
                started = self._start_request(event, scope)
                if started is not None:
                    return started
            elif isinstance(event, VersionChosen):
                self.version_chosen(event.version)
            elif isinstance(event, CloseConnection):
                log.debug("closing: %s", event.reason)  # the caller gets the error
                self.close()

    def _take_queued_here(self, scope: trio.CancelScope) -> Taken:
        """After a stretch of reading: the queue has work for the consuming role.

        If the consuming task waits idle (and no notification handler is
        running), the reading task takes the work itself: no task switch to
        handle a chunk's notifications.  Otherwise, or after a burst, the
        consuming task is woken.
        """
        consumer = self._consumer
        if consumer.task is None or self._notifying:
            consumer.wake()
            return None
        taken = self._take_queued(scope)
        if taken is BURST:
            consumer.wake()  # it goes on after a pass of trio's loop
            return None
        if isinstance(taken, _REQUEST_OR_SIGNAL) and self.engine.queue_ready:
            consumer.wake()  # this task goes on with a request: not the queue
        return taken

    async def _pause_reading(self) -> None:
        """Wait until the engine's read gate lets the reading task read again."""
        while (reason := self.engine.read_gate(self._writer.queued)) is not None:
            log.debug("not reading: %s at its limit", reason)
            if reason == WRITE_BUFFER:
                await self._writer.wait_for_space()
                continue
            self._paused = True
            try:
                await self._read_wakeup.wait()
            finally:
                self._paused = False

    def _unpause(self) -> None:
        """Something the read gate counts went down: read again if it allows."""
        if self._paused and self.engine.read_gate(self._writer.queued) is None:
            self._read_wakeup.wake()

    def _queue_outbox(self) -> None:
        """Queue for writing what the engine built (answers, refusals)."""
        lines = self.engine.take_outbox()
        if lines and not self._closed:
            self._writer.queue(lines[0] if len(lines) == 1 else b"".join(lines))

    def _flush_outbox(self) -> None:
        """Queue what the engine built; wake the consuming task if it has work."""
        self._queue_outbox()
        if self.engine.queue_ready and not self._notifying:
            self._consumer.wake()

    # -- the ordered queue: notifications, and what waits behind them -------------------

    async def _consume(self, scope: trio.CancelScope) -> Taken:
        """The consuming role: takes the engine's ordered queue (:meth:`_take_queued`).

        It yields when the queue is empty, when a handler awaits (it awaits
        the rest), and after ``NOTIFICATION_BURST`` items in a row.  It
        returns a request whose first step yielded (for the caller to go on
        with), or ``None`` once input ended and nothing is left.  While a
        notification handler runs in another task (taken while reading),
        it waits for it.
        """
        engine = self.engine
        while True:
            if self._notifying:
                await self._consumer.wait()  # woken when that handler is done
                continue
            taken = self._take_queued(scope)
            if taken is None:
                self._writer.flush()
                if self._eof and engine.queue_idle:
                    return None
                await self._consumer.wait()
            elif taken is BURST:
                self._writer.flush()
                await trio.lowlevel.checkpoint()
            elif isinstance(taken, Notifying):
                await self._notify_rest(taken)
            else:
                return taken

    def _take_queued(self, scope: trio.CancelScope) -> Taken:
        """Take the ordered queue's items, in order: the one place notification
        handlers start.

        Each notification handler's first step runs here; a held request
        starts as in :meth:`_start_request`.  ``None`` once nothing can be
        taken now, ``BURST`` after ``NOTIFICATION_BURST`` items; a handler
        whose first step yielded is returned (a :class:`Notifying`: nothing
        more is taken until its task awaited the rest, :meth:`_notify_rest`;
        a :class:`Started`).
        """
        engine = self.engine
        next_queued = engine.next_queued
        context = self._notification_context  # one at a time: they share it
        for _ in range(NOTIFICATION_BURST):
            item = next_queued()
            if item is None:
                self._queue_outbox()
                self._unpause()
                return None
            if type(item) is QueuedNotification:
                try:
                    coro = item.handler(item.params).__await__()
                    trap = self._step(coro, context, RETURNED)
                except Exception:
                    log.exception("notification handler for %s failed", item.name)
                except BaseException:
                    engine.notification_done(item)
                    raise
                else:
                    if trap is not RETURNED:
                        self._notifying = True
                        self._writer.flush()  # this task yields to trio next
                        return Notifying(item, coro, trap)
                engine.notification_done(item)
                if self._paused:
                    self._unpause()
            else:  # a request held behind earlier notifications
                self._queue_outbox()
                assert isinstance(item, IncomingRequest)
                started = self._start_request(item, scope)
                if started is not None:
                    return started
        self._queue_outbox()
        return BURST

    async def _notify_rest(self, notifying: Notifying) -> None:
        """Await the rest of a notification handler whose first step yielded;
        then the queue goes on."""
        item = notifying.item
        try:
            await self._drive(
                notifying.coro, self._notification_context, notifying.trap
            )
        except Exception:
            log.exception("notification handler for %s failed", item.name)
        finally:
            self._notifying = False
            self.engine.notification_done(item)
            self._consumer.wake()  # if another task holds the role, it goes on
        self._unpause()

    # -- incoming requests -------------------------------------------------------------

    def _start_request(
        self, job: IncomingRequest, scope: trio.CancelScope
    ) -> Started | Signal | None:
        """Run the first step of ``job`` here, inside ``scope`` (the role's task's).

        ``None`` once it is answered; a :class:`Started` when it yielded to
        trio (this task goes on with it: :meth:`_work`), or ``RETIRE`` when
        the step cancelled ``scope`` (this task may not go on).
        """
        running = job.running
        engine = self.engine
        if running.cancel_reason is not None:  # cancelled before it started
            self._request_done(job, engine.answer_cancelled(job))
            return None
        running.handle = scope
        context = self._request_context.copy()
        try:
            coro = job.handler(job.params).__await__()
            trap = self._step(coro, context)
        except StopIteration as done:
            running.handle = None
            line = engine.answer(job, done.value)
        except Exception as exc:
            running.handle = None
            line = engine.answer_exception(job, exc)
        except BaseException:
            running.handle = None
            self._request_done(job, None)
            raise
        else:
            self._writer.flush()  # this task yields to trio next
            return Started(job, coro, context, trap)
        self._request_done(job, line)
        return RETIRE if scope.cancel_called else None

    async def _finish_request(self, started: Started) -> bytes:
        """Await the rest of a request's handler; its answer (a cancellation raises)."""
        job = started.job
        try:
            result = await self._drive(started.coro, started.context, started.trap)
        except Exception as exc:
            return self.engine.answer_exception(job, exc)
        finally:
            job.running.handle = None
        return self.engine.answer(job, result)

    def _request_done(self, job: IncomingRequest, line: bytes | None) -> None:
        """Forget ``job`` and queue its answer (``None``: none, the connection is closing)."""
        out = self.engine.request_done(job, line)
        if out is not None and not self._closed:
            self._writer.queue(out)
        self._flush_outbox()  # a request waiting for a slot may start
        self._unpause()

    # -- outgoing ----------------------------------------------------------------------

    # Plain functions returning the one coroutine that sends: one less per message.

    def notify(self, method: MethodSpec, params: Any) -> Coroutine[Any, Any, None]:
        """Send the notification ``method`` (a method-table entry); await it.

        A checkpoint, as every trio ``await``: it raises ``Cancelled``
        (having sent nothing) in a cancelled scope, waits while
        ``Limits.write_buffer_bytes`` are queued, and lets other tasks run.
        """
        return self._send(self.engine.notification(method, params))

    def ext_notify(self, name: str, params: Any) -> Coroutine[Any, Any, None]:
        """Send a ``_``-prefixed extension notification; await it."""
        return self._send(self.engine.ext_notification(name, params))

    def forward(self, message: UnknownVariant) -> Coroutine[Any, Any, None]:
        """Send on a notification received naming an unknown variant (a peer
        on a newer spec, given to ``unknown_variant``), its params byte for
        byte; await it.  :class:`ValueError` if this side does not send its
        method."""
        return self._send(self.engine.forward_notification(message))

    async def _send(self, line: bytes) -> None:
        # LineWriter.send, but a handler's step only queues (_drive flushes).
        writer = self._writer
        await _checkpoint_if_cancelled()
        if writer.queued >= writer.budget and not self._closed:
            await writer.wait_for_space()
        if self._closed:
            raise ConnectionClosed("connection closed")
        if self._steps.stepping:
            writer.queue(line)
        else:
            writer.send_nowait(line)
        if writer.schedule_point.needed():
            await _cancel_shielded_checkpoint()

    def request(self, method: MethodSpec, params: Any) -> Coroutine[Any, Any, Any]:
        """Send the request ``method``; await it for its decoded result.

        Raises :class:`~acp_trio.RequestError` for an error response,
        :class:`~acp_trio.CapabilityError` for a call the peer did not
        advertise (nothing sent) and :class:`~acp_trio.ConnectionClosed` if
        the peer goes away.  If the caller is cancelled while waiting and
        this version has ``$/cancel_request``, it is sent for the request.
        """
        return self._call(self.engine.start_call, method, params)

    def ext_request(self, name: str, params: Any) -> Coroutine[Any, Any, Any]:
        """Call a ``_``-prefixed extension method; await it for its result (builtins)."""
        return self._call(self.engine.start_ext_call, name, params)

    async def _call(self, start: Callable[..., Call], what: Any, params: Any) -> Any:
        """Register a call with ``start``, send it, wait for its answer."""
        if self._closed or self._eof:
            raise ConnectionClosed("connection closed")
        engine = self.engine
        writer = self._writer
        await _checkpoint_if_cancelled()
        if writer.queued >= writer.budget:
            await writer.wait_for_space()
        if self._closed:
            raise ConnectionClosed("connection closed")
        waiter = CallWaiter()
        call = start(what, params, waiter, _origin.get())
        # A handler waiting on the peer lets reading go on (the read gate);
        # a request waiting for a slot may be refused now.
        self._unpause()
        self._flush_outbox()
        try:
            writer.queue(call.line)
            writer.flush()  # now: this task waits for the answer
            await waiter.wait()
        finally:
            cancel_request = engine.call_finished(call)
            if cancel_request is not None and not self._closed:
                writer.send_nowait(cancel_request)
            if engine.queue_ready:
                self._consumer.wake()
        return call.result()

    # -- introspection -----------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        """Whether the connection stopped (peer gone or closed locally)."""
        return self._closed

    def running_requests(self) -> Mapping[Id, Running]:
        """Incoming requests currently being handled, by id."""
        return self.engine.running_requests()
