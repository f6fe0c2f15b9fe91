"""What one connection's engine knows, shared by the modules that handle it.

:class:`EngineState` is the state the engine's modules read and change:
``_lines`` (incoming lines and batches), ``_receipt`` (requests and
notifications at receipt), ``_requests`` (an incoming request's life),
``_ordering`` (the ordered queue), ``_calls`` (calls of ours and their
answers).  :class:`~acp_core.Engine` is this state with their functions as
its methods.  Here also the few steps all of them take: send a line, answer
an error, log bad input, queue an item, speak a schema, find a handler.
"""

from __future__ import annotations

import collections
import logging
from typing import Any, Final

import msgspec

from . import _handlers, _telemetry
from ._flow import LogThrottle, ReadGate, ResumeOrder
from ._jsonrpc import Id, clip, clip_data, encode_error, encode_id
from ._limits import Limits
from ._outgoing import check_outgoing_default
from ._records import (
    Batch,
    Call,
    Handler,
    HeldResponse,
    IncomingRequest,
    QueuedNotification,
    Running,
)
from ._rules import AgentRules, ClientRules
from ._schema import MethodSpec, Schema

__all__ = ["EMPTY_OBJECT", "EngineState", "QueueItem", "Rules", "log", "size_of"]

log = logging.getLogger("acp_core")

#: Absent params read as ``{}``.
EMPTY_OBJECT: Final = b"{}"

Rules = AgentRules | ClientRules
QueueItem = QueuedNotification | IncomingRequest | HeldResponse


def size_of(raw: msgspec.Raw | msgspec.UnsetType) -> int:
    """Bytes of a payload (``0``: absent)."""
    return 0 if raw is msgspec.UNSET else len(raw)


class AwaitingHandler(msgspec.Struct):
    """``initialize`` accepted, its handler object not given yet (``VersionChosen``)."""

    id: Id
    method: MethodSpec
    params: Any
    batch: Batch | None
    size: int


class EngineState:
    """One connection's protocol state (the attributes the engine's modules share)."""

    def __init__(
        self,
        rules: Rules,
        limits: Limits | None = None,
        *,
        unstable: bool = False,
        schema: Schema | None = None,
    ) -> None:
        self.rules = rules
        #: The bounds this connection keeps (:class:`~acp_core.Limits`).
        self.limits = limits = limits or Limits()
        self.unstable = unstable
        #: Check each typed message sent against the schema (``_outgoing``:
        #: off by default, on under ``python -X dev`` or ``ACP_CHECK_OUTGOING=1``).
        self.check_outgoing = check_outgoing_default()
        self.gate = ReadGate(limits)
        #: Why :meth:`next_event` returned ``PAUSED`` (a ``_flow`` reason).
        self.pause_reason: str | None = None
        self.order = ResumeOrder()
        self.bad_input_log = LogThrottle()
        #: Bytes to send that the engine built (answers, errors, batch arrays).
        self.outbox: list[bytes] = []
        self.outbox_bytes = 0  # what outbox holds
        #: What :meth:`next_event` returns next (filled while a line is handled).
        self.events: collections.deque[Any] = collections.deque()
        #: Outgoing calls waiting for their answer, by id.
        self.pending: dict[Id, Call] = {}
        #: Incoming requests accepted and not answered yet, by id.
        self.running: dict[Id, Running] = {}
        self.next_id = 0
        #: Incoming methods by wire name, with their rules and decoders (``_receipt``).
        self.receipts: dict[str, Any] = {}
        self.handlers: dict[str, Handler | None] = {}
        self.handler_obj: object | None = None
        #: Notifications, and requests / responses held behind them, in order.
        self.queue: collections.deque[QueueItem] = collections.deque()
        self.queued_bytes = 0  # JSON bytes of what queue holds
        self.backlog = 0  # items queued or being handled
        #: Requests in :attr:`queue` (accepted, in :attr:`running`, not started).
        self.waiting = 0
        # Calls of ours waiting for the peer made by request / notification
        # handlers: while any waits, the bound it holds does not stop reading.
        self.waits_in_requests = 0
        self.waits_in_notifications = 0
        self.closed = False
        self.eof = False
        self.awaiting_handler: AwaitingHandler | None = None
        self.schema = schema or Schema.load(
            rules.offer.latest,
            rules.side,
            unstable=unstable,
            draft=rules.offer.drafts.get(rules.offer.latest),
        )
        self.by_handler: dict[str, MethodSpec] = {}
        #: Where spans go (``_telemetry``), or ``None``: handlers called as they are.
        self.tracer: Any = None
        self.bind(self.schema)

    def bind(self, schema: Schema) -> None:
        """Speak ``schema`` from now on (after version negotiation)."""
        self.schema = schema
        self.by_handler = {m.handler: m for m in schema.outgoing.values()}
        self.tracer = _telemetry.tracer()
        self.handlers = {}
        self.receipts = {}

    def handler_for(self, method: MethodSpec) -> Handler | None:
        """The coroutine function answering ``method`` (``None``: -32601)."""
        try:
            return self.handlers[method.name]
        except KeyError:
            handler: Handler | None = _handlers.resolve_handler(
                self.handler_obj, method.handler
            )
            if handler is not None and self.tracer is not None:
                handler = _telemetry.traced_handler(
                    self.tracer,
                    handler,
                    method.name,
                    self.rules.side,
                    method.result is not None,
                )
            self.handlers[method.name] = handler
            return handler

    def send(self, line: bytes) -> None:
        """Queue a line the engine built (dropped once closed)."""
        if not self.closed:
            self.outbox.append(line)
            self.outbox_bytes += len(line)

    def reply_error(
        self,
        ident: Id,
        code: int,
        message: str,
        batch: Batch | None = None,
        data: Any = msgspec.UNSET,
    ) -> None:
        """Answer ``ident`` with an error (within ``batch``'s array, if any).

        Built from the peer's input (method names, tags, paths): bounded by
        ``max_error_text``.
        """
        limit = self.limits.max_error_text
        message = clip(message, limit)
        if data is not msgspec.UNSET:
            data = clip_data(data, limit)
        line = encode_error(encode_id(ident), code, message, data)
        if batch is not None:
            done = batch.add(line)
            if done is not None:
                self.send(done)
        else:
            self.send(line)

    def bad_input(self, what: str, line: bytes | None = None) -> None:
        """Log bad input from the peer: one WARNING line, bounded (LogThrottle)."""
        throttle = self.bad_input_log
        level = logging.WARNING if throttle.allow() else logging.DEBUG
        if not log.isEnabledFor(level):
            return
        limit = self.limits.max_error_text
        text = f"bad input from the peer (#{throttle.count}): {clip(what, limit)}"
        if line is not None:
            text += f"; {len(line)} bytes: {clip(repr(line[:limit]), limit)}"
        log.log(level, "%s", text)

    def enqueue(self, item: QueueItem, size: int) -> None:
        """Put ``item`` at the end of the ordered queue."""
        self.backlog += 1
        self.queued_bytes += size
        self.queue.append(item)
