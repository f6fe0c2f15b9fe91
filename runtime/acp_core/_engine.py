"""The engine's one door: bytes in, events out; calls in, bytes out (h11's shape).

:class:`Engine` never awaits and never does I/O.  An adapter (``acp_trio``,
``acp_asyncio``) reads bytes and hands them over, runs the handlers the
events name, writes the bytes the engine builds, and waits.  Behind this
door, one module per concern, each a set of functions over the connection's
state (:mod:`acp_core._state`), here as the engine's methods:

- ``_lines``: incoming lines and batches (framing by ``LineBuffer``, the
  envelope, errors answering what is no message);
- ``_receipt``: requests and notifications at receipt, under their row of
  the rules table (``_table``: gate, receiver check, watched, cancel);
- ``_requests``: an incoming request's life (when it may start, its answer);
- ``_ordering``: wire order, the ordered queue and its one consumer;
- ``_calls``: calls of ours, correlation of their answers, release;
- the bounds of :class:`~acp_core.Limits` (``_flow.ReadGate``), checked
  here before every line.

A client engine, fed its agent's bytes::

    engine = Engine(ClientRules([1]))
    engine.set_handler(my_client)
    call = engine.start_call(engine.schema.outgoing["initialize"], request, waiter)
    write(call.line)
    engine.receive_data(read())
    while (event := engine.next_event()) is not NEED_DATA:
        ...  # IncomingRequest: run it; VersionChosen: set_handler(...)
    write(b"".join(engine.take_outbox()))
    call.result()  # the InitializeResponse, once waiter was set
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _calls, _handlers, _ordering, _receipt, _requests
from ._errors import ConnectionClosed
from ._framing import LineBuffer, Oversized
from ._jsonrpc import Id
from ._limits import Limits
from ._lines import on_line
from ._records import END_OF_INPUT, NEED_DATA, PAUSED, HeldResponse, Running
from ._schema import Schema
from ._state import EngineState, Rules, log

__all__ = ["Engine"]


class Engine(EngineState):
    """The protocol state of one connection (see the module)."""

    def __init__(
        self,
        rules: Rules,
        limits: Limits | None = None,
        *,
        unstable: bool = False,
        schema: Schema | None = None,
    ) -> None:
        super().__init__(rules, limits, unstable=unstable, schema=schema)
        self._lines = LineBuffer(max_message_size=self.limits.max_message_size)
        # the lines read and not handled yet: _incoming[_taken:]; a list
        # emptied once all are handled (a chunk's lines, bounded by the
        # read), where a deque holds a block of 64 slots, even empty, for
        # each idle connection
        self._incoming: list[bytes | Oversized] = []
        self._taken = 0
        self._eof_reported = False
        #: Why :meth:`next_event` returned ``PAUSED`` (``WRITE_BUFFER``,
        #: ``NOTIFICATIONS`` of ``acp_core.adapter``).
        self.pause_reason: str | None = None

    # -- bytes in, events out ----------------------------------------------------

    def receive_data(self, data: bytes | bytearray) -> None:
        """Bytes read from the peer (``b""``: end of input)."""
        lines = self._lines.feed(data) if data else self._lines.feed_eof()
        if lines:
            self._incoming += lines

    def receive_eof(self) -> None:
        """The peer closed its end (same as ``receive_data(b"")``)."""
        self.receive_data(b"")

    def next_event(self, write_queued: int = 0) -> Any:
        """Handle the buffered lines up to the next event for the adapter.

        ``write_queued``: bytes the adapter has queued for the peer (the
        write budget is one of the bounds, checked before every line; what
        the outbox holds counts as written: a chunk of bad lines cannot
        build more answers than the write bound).  Returns ``NEED_DATA``,
        ``PAUSED``, ``END_OF_INPUT`` or an event record (the names of
        :mod:`acp_core.adapter`).  Lines that only queue notifications or
        build replies produce no event: the loop goes on to the next one.
        """
        events, incoming, queue, gate = (
            self.events,
            self._incoming,
            self.queue,
            self.gate,
        )
        items = queue.items
        # ReadGate.full's bounds, read once: a line is handled at once while
        # none is reached (its necessary condition); else the gate decides.
        max_write, max_items, max_bytes = gate.max_write, gate.max_items, gate.max_bytes
        while True:
            if events:
                return events.pop(0)  # one or a few: a line's events
            if (
                len(items) >= max_items
                or queue.size >= max_bytes
                or write_queued + self.outbox_bytes >= max_write
            ) and gate.full(
                write_queued + self.outbox_bytes,
                len(items),
                queue.size,
                self.calls.in_notifications,
            ):
                self.pause_reason = self.read_gate(write_queued)
                return PAUSED
            taken = self._taken
            if taken >= len(incoming):
                if taken:
                    incoming.clear()  # its slots freed while idle
                    self._taken = 0
                self.pause_reason = None
                if self._lines.eof and not self._eof_reported:
                    self._eof_reported = True
                    self.end_of_input()
                    return END_OF_INPUT
                return NEED_DATA
            self._taken = taken + 1
            try:
                on_line(self, incoming[taken], None)
            except Exception:  # a bug: lose this message, keep the connection
                log.exception("failed to handle an incoming message")

    def read_gate(self, write_queued: int) -> str | None:
        """Why not to read now (``WRITE_BUFFER``, ``NOTIFICATIONS`` of
        ``acp_core.adapter``), or ``None``: read."""
        return self.gate.reason(
            write_queued=write_queued + self.outbox_bytes,
            queued=len(self.queue.items),
            queued_bytes=self.queue.size,
            notifications_wait=self.calls.in_notifications,
        )

    # -- the handler object ------------------------------------------------------

    def set_handler(self, obj: object | None, *, failure: str | None = None) -> None:
        """Route incoming methods to ``obj``'s methods named by the table's handler names.

        Public methods of ``obj`` that no method reaches are logged.  After a
        :class:`~acp_core.VersionChosen` event, this is the step that lets
        the ``initialize`` request run, or answers it: -32603 with
        ``failure`` (one line: why no handler object could be built, cut at
        ``max_error_text``) when given, else -32601 if ``obj`` has no
        ``initialize``.
        """
        self.use_handler_object(obj)
        _handlers.warn_unmatched(obj, self.schema)
        _receipt.resume_initialize(self, failure)

    # -- incoming requests: answers --------------------------------------------

    answer = _requests.answer
    answer_exception = _requests.answer_exception
    answer_cancelled = _requests.answer_cancelled
    request_done = _requests.request_done

    def running_requests(self) -> Mapping[Id, Running]:
        """Incoming requests currently being handled, by id (read-only)."""
        return self.running.view

    # -- the ordered queue ---------------------------------------------------------

    # next_queued: OrderedQueue.next (EngineState), documented in adapter.py
    notification_done = _ordering.notification_done
    abandon_queued = _ordering.abandon_queued

    @property
    def queue_blocked(self) -> bool:
        """The queue waits: for a released caller to resume (ResumeOrder), or
        its first item is a request that may not start yet."""
        return _ordering.queue_blocked(self)

    @property
    def queue_ready(self) -> bool:
        """``next_queued`` has something for the consumer now: wake it."""
        return bool(self.queue.items) and not _ordering.queue_blocked(self)

    @property
    def queue_idle(self) -> bool:
        """Nothing is queued and no notification handler runs: the consumer
        may end once the input ended."""
        return self.queue.idle

    # -- calls of ours ---------------------------------------------------------------

    start_call = _calls.start_call
    start_ext_call = _calls.start_ext_call
    call_finished = _calls.call_finished
    notification = _calls.notification
    ext_notification = _calls.ext_notification
    forward_notification = _calls.forward_notification

    # -- the end -------------------------------------------------------------------

    def end_of_input(self) -> None:
        """The peer closed its end: every pending call fails now, and every later one."""
        self.end_input()
        self.calls.fail_all(ConnectionClosed("the peer closed the connection"))

    def close(self) -> None:
        """The connection is over: pending calls (held ones too) fail, nothing more is sent."""
        if not self.close_output():
            return
        error = ConnectionClosed("connection closed")
        self.calls.fail_all(error)
        for item in self.queue:
            if type(item) is HeldResponse:
                item.call.fail(error)

    # -- the steps one concern takes of another's (EngineState: the hub) ---------

    on_notification = _receipt.on_notification
    on_request = _receipt.on_request
    on_response = _calls.on_response
    fail_call = _calls.fail_call
    release = _calls.release
    ordered_head = _ordering.ordered_head
    must_wait = _requests.must_wait
    start = _requests.start
    started = _requests.started
    finish = _requests.finish
    refuse_too_many = _requests.refuse_too_many
