"""The adapter contract: what an event loop implements to run ACP over :class:`Engine`.

``acp_trio`` and ``acp_asyncio`` are built on exactly these names, and a
third adapter (anyio, a remote HTTP or WebSocket transport) takes the same.
The engine never awaits and does no I/O; the adapter reads, writes, runs
handlers and waits.  The names below are stable: an adapter imports them
from here (or from ``acp_core``), never from a private ``acp_core._x``.

**Bytes in, events out** (the only input door, h11's shape)::

    engine.receive_data(chunk)           # b"": the peer closed its end
    while True:
        event = engine.next_event(write_queued)
        write(b"".join(engine.take_outbox()))   # answers the engine built
        if event is NEED_DATA: break            # read more, then again
        if event is PAUSED: ...                 # a bound: engine.pause_reason
                                                # (WRITE_BUFFER, NOTIFICATIONS);
                                                # wait until engine.read_gate(...)
                                                # is None, then next_event again
        if event is END_OF_INPUT: ...           # pending calls failed already
        if isinstance(event, IncomingRequest): start(event)   # a task of its own
        if isinstance(event, VersionChosen): conn.version_chosen(event.version)
        if isinstance(event, CloseConnection): close()

``write_queued`` is how many bytes the adapter holds for the peer (the
write budget is one of the bounds).

**The ordered queue** (notifications, and what waits behind them): one
consumer task loops on ``Engine.next_queued``; a
:class:`QueuedNotification` is awaited (``await item.handler(item.params)``)
then given back with :meth:`Engine.notification_done`; an
:class:`IncomingRequest` is started like one ``next_event`` returned.
``None``: nothing can be taken now; wait until :attr:`Engine.queue_ready`
may have turned true (after ``next_event``, after a request's answer, after
:meth:`Engine.call_finished`).  :attr:`Engine.queue_idle`: nothing is queued and no
notification handler runs (after the end of input, the consumer may end).

**A request's life**: run ``await request.handler(request.params)`` with a
cancellation handle in ``request.running.handle`` (anything with
``cancel()``: the engine calls it for ``session/cancel``,
``$/cancel_request``, ``session/close``); turn the outcome into its line
with :meth:`Engine.answer`, :meth:`Engine.answer_exception` or
:meth:`Engine.answer_cancelled`; then :meth:`Engine.request_done` gives the
bytes to write (``None`` inside an unfinished batch) and may free a slot
for a waiting request: call ``next_event`` again.

**Calls of ours**: :meth:`Engine.start_call` / :meth:`Engine.start_ext_call`
register a call (``origin``: :data:`ORIGIN_USER`, :data:`ORIGIN_REQUEST`
from a request handler, :data:`ORIGIN_NOTIFICATION` from the notification
consumer) and give ``call.line`` to write; the engine sets ``waiter``
(anything with ``set()``) once the answer is there; the caller then calls
:meth:`Engine.call_finished` (it returns a ``$/cancel_request`` line to
write if the caller left early) and reads ``call.result()``.
:meth:`Engine.notification` / :meth:`Engine.ext_notification` give the
line of a notification to write; :meth:`Engine.forward_notification` that of
an :class:`UnknownVariant` sent on unchanged (the connection's ``forward``).

**The end**: :meth:`Engine.abandon_queued` answers the queued requests
cancelled (a half-closed peer may still read), :meth:`Engine.close` fails
what is pending.  Clocks (grace periods) are the adapter's.

**The side**: mix :class:`AgentSide` or :class:`ClientSide` into the
connection class, give the engine :class:`AgentRules` or
:class:`ClientRules`; the side builds the handler object at
``VersionChosen`` and gives the typed peer proxy.
"""

from __future__ import annotations

from ._engine import Engine
from ._errors import ConnectionClosed, RequestError
from ._flow import NOTIFICATIONS, WRITE_BUFFER
from ._jsonrpc import Id
from ._limits import Limits
from ._newer import UnknownVariant
from ._records import (
    END_OF_INPUT,
    NEED_DATA,
    ORIGIN_NOTIFICATION,
    ORIGIN_REQUEST,
    ORIGIN_USER,
    PAUSED,
    Call,
    Cancellable,
    CloseConnection,
    IncomingRequest,
    QueuedNotification,
    Running,
    Settable,
    VersionChosen,
)
from ._rules import AgentRules, ClientRules
from ._schema import MethodSpec, Schema
from ._sides import AgentSide, ClientSide, normalize_offer

__all__ = [
    "END_OF_INPUT",
    "NEED_DATA",
    "NOTIFICATIONS",
    "ORIGIN_NOTIFICATION",
    "ORIGIN_REQUEST",
    "ORIGIN_USER",
    "PAUSED",
    "WRITE_BUFFER",
    "AgentRules",
    "AgentSide",
    "Call",
    "Cancellable",
    "ClientRules",
    "ClientSide",
    "CloseConnection",
    "ConnectionClosed",
    "Engine",
    "Id",
    "IncomingRequest",
    "Limits",
    "MethodSpec",
    "QueuedNotification",
    "RequestError",
    "Running",
    "Schema",
    "Settable",
    "UnknownVariant",
    "VersionChosen",
    "normalize_offer",
]
