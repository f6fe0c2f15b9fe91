"""What one connection's engine knows: the shared context and the owners of its state.

:class:`EngineState` is h11's ``ConnectionState`` made for ACP: each piece of
mutable state belongs to one object that keeps its invariants, and the
engine's modules call those objects instead of writing each other's counters:

- :class:`~acp_core._queue.OrderedQueue` (``queue``): notifications and what
  waits behind them, their bytes, the backlog, the requests waiting;
- :class:`~acp_core._pending.PendingCalls` (``calls``): our calls by id, the
  next id, the callers waiting inside handlers;
- :class:`~acp_core._running.RunningRequests` (``running``): the peer's
  requests accepted and not answered;
- :class:`~acp_core._flow.ResumeOrder` (``order``): callers released and not
  resumed yet;
- the side's rules object (``rules``), and this object itself for the rest:
  the schema spoken and the handlers found for it, the outbox, the end.

The read-only context (``limits``, ``gate``, ``unstable``) is set once.  The
concern modules (``_lines``, ``_receipt``, ``_requests``, ``_ordering``,
``_calls``) import none of each other: where one concern's step needs
another's, it calls the step on the state (the methods below that raise
``NotImplementedError``), which :class:`~acp_core.Engine` binds to the
module function; the engine is the one hub, as h11's ``Connection`` is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from . import _handlers, _telemetry
from ._errors import INTERNAL_ERROR, RequestError
from ._flow import LogThrottle, ReadGate, ResumeOrder
from ._jsonrpc import Envelope, Id, clip, clip_data, encode_error, encode_id
from ._limits import Limits
from ._newer import UnknownVariant, VariantLog
from ._outgoing import check_outgoing_default
from ._pending import PendingCalls
from ._queue import NextQueued, OrderedQueue, QueueItem
from ._records import Batch, Call, Handler, IncomingRequest, QueuedNotification
from ._rules import AgentRules, ClientRules
from ._running import RunningRequests
from ._schema import MethodSpec, Schema
from ._table import MethodRule

__all__ = [
    "EMPTY_OBJECT",
    "AwaitingHandler",
    "EngineState",
    "QueueItem",
    "Receipt",
    "Rules",
    "internal_error",
    "log",
    "size_of",
    "validation_data",
]

log = logging.getLogger("acp_core")

#: Absent params read as ``{}``.
EMPTY_OBJECT: Final = b"{}"

Rules = AgentRules | ClientRules


def size_of(raw: msgspec.Raw | msgspec.UnsetType) -> int:
    """Bytes of a payload (``0``: absent)."""
    return 0 if raw is msgspec.UNSET else len(raw)


def validation_data(
    exc: msgspec.ValidationError, root: str, limit: int = 256
) -> dict[str, str]:
    """A bounded ``data`` for -32602: the failing path and a short message."""
    text = str(exc)
    path = "$"
    head, sep, tail = text.rpartition(" - at `")
    if sep and tail.endswith("`"):
        text, path = head, tail[:-1]
    path = root + path[1:]
    return {"path": clip(path, limit), "message": clip(text, limit)}


def internal_error(ident: Id) -> bytes:
    """The -32603 line answering ``ident``."""
    return encode_error(encode_id(ident), INTERNAL_ERROR, "Internal error")


class AwaitingHandler(msgspec.Struct):
    """``initialize`` accepted, its handler object not given yet (``VersionChosen``)."""

    id: Id
    method: MethodSpec
    params: Any
    batch: Batch | None
    size: int


class Receipt(msgspec.Struct, frozen=True):
    """One incoming method as this connection receives it (by wire name)."""

    method: MethodSpec
    rule: MethodRule
    #: The params type of a request, and of the method sent as a
    #: notification (``mcp/message`` is both).
    request_type: Any
    notification_type: Any
    #: Their strict first-pass decoders (``Schema.decoder``).
    request_decode: Callable[[Any], Any]
    notification_decode: Callable[[Any], Any]
    handler: Handler | None


class EngineState:
    """One connection's protocol state: its context and its owners (see the module)."""

    #: The next item of the ordered queue for the adapter's one consumer
    #: (``Engine.next_queued`` of ``acp_core.adapter``): the queue's own
    #: step, :meth:`OrderedQueue.next <acp_core._queue.OrderedQueue.next>`.
    next_queued: NextQueued

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
        self.order = ResumeOrder()
        self.bad_input_log = LogThrottle()
        #: the kinds of unknown variants logged already (``_newer``)
        self.variant_log = VariantLog(limits.max_unknown_variants)
        self.queue = OrderedQueue(self.order, self.ordered_head)
        #: ``Engine.next_queued`` is the queue's own step (one call per item).
        self.next_queued = self.queue.next
        self.calls = PendingCalls()
        self.running = RunningRequests()
        #: Bytes to send that the engine built (answers, errors, batch arrays).
        self.outbox: list[bytes] = []
        self.outbox_bytes = 0  # what outbox holds
        #: What :meth:`next_event` returns next (filled while a line is handled).
        #: (A list: one or a few at a time; a deque holds a block of 64
        #: slots, even empty, for each idle connection.)
        self.events: list[Any] = []
        self.closed = False
        self.eof = False
        self.awaiting_handler: AwaitingHandler | None = None
        #: Incoming methods by wire name, with their rules and decoders.
        self.receipts: dict[str, Receipt] = {}
        self.handlers: dict[str, Handler | None] = {}
        self.handler_obj: object | None = None
        self.schema = schema or Schema.load(
            rules.offer.latest,
            rules.side,
            unstable=unstable,
            draft=rules.offer.drafts.get(rules.offer.latest),
        )
        self.by_handler: Mapping[str, MethodSpec] = {}
        #: Where spans go (``_telemetry``), or ``None``: handlers called as they are.
        self.tracer: Any = None
        self.bind(self.schema)

    # -- the schema spoken and its handlers --------------------------------------

    def bind(self, schema: Schema) -> None:
        """Speak ``schema`` from now on (after version negotiation)."""
        self.schema = schema
        self.by_handler = schema.by_handler  # the schema's, shared
        self.tracer = _telemetry.tracer()
        self.handlers = {}
        self.receipts = {}

    def speak(self, version: int) -> None:
        """Speak ``version`` (the draft this side offers of it), chosen by
        the ``initialize`` step on either side."""
        draft = self.rules.offer.drafts.get(version)
        self.bind(
            Schema.load(version, self.rules.side, unstable=self.unstable, draft=draft)
        )

    def use_handler_object(self, obj: object | None) -> None:
        """Route incoming methods to ``obj`` (``None``: to nothing) from now on."""
        self.handler_obj = obj
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

    def rule_of(self, method: MethodSpec) -> MethodRule:
        """The row of the side's table ``method`` is under."""
        return self.rules.rule(method.handler)

    def receipt(self, name: str) -> Receipt | None:
        """The receipt of wire name ``name`` (``None``: not a method of the schema)."""
        receipt = self.receipts.get(name)
        if receipt is not None:
            return receipt
        schema = self.schema
        method = schema.incoming.get(name)
        if method is None:
            return None
        note_type = method.params
        if method.result is not None:
            note_type = getattr(method, "notification", None) or note_type
        receipt = Receipt(
            method,
            self.rule_of(method),
            method.params,
            note_type,
            schema.decoder(method.params),
            schema.decoder(note_type),
            self.handler_for(method),
        )
        self.receipts[name] = receipt
        return receipt

    def await_handler(self, awaiting: AwaitingHandler | None) -> AwaitingHandler | None:
        """Keep ``initialize`` until the handler object is given; the one kept before."""
        before, self.awaiting_handler = self.awaiting_handler, awaiting
        return before

    # -- bytes out -------------------------------------------------------------------

    def send(self, line: bytes) -> None:
        """Queue a line the engine built (dropped once closed)."""
        if not self.closed:
            self.outbox.append(line)
            self.outbox_bytes += len(line)

    def take_outbox(self) -> list[bytes]:
        """The bytes built since the last call, to be written in order."""
        out, self.outbox = self.outbox, []
        self.outbox_bytes = 0
        return out

    def emit(self, event: object) -> None:
        """An event for :meth:`~acp_core.Engine.next_event` to return."""
        self.events.append(event)

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

    def refuse(
        self, ident: Id, error: RequestError, batch: Batch | None = None
    ) -> None:
        """Answer ``ident`` with ``error`` (as :meth:`reply_error`)."""
        self.reply_error(ident, error.code, error.message, batch, error.data)

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

    def newer_peer(self, variant: UnknownVariant) -> None:
        """Log a message of a peer on a newer spec: each kind once (bounded)."""
        level = logging.WARNING if self.variant_log.first(variant) else logging.DEBUG
        if not log.isEnabledFor(level):
            return
        limit = self.limits.max_error_text
        log.log(
            level,
            "a peer on a newer spec: %s %s has %s at %s, a variant schema %s "
            "lacks (known: %s)",
            variant.where,
            clip(variant.method, limit),
            clip(repr(variant.tag), limit),
            clip(variant.path, limit),
            getattr(self.schema.module, "SCHEMA_VERSION", self.schema.version),
            clip(", ".join(variant.known), limit),
        )

    # -- the end -----------------------------------------------------------------------

    def end_input(self) -> None:
        """The peer closed its end: no call of ours may start."""
        self.eof = True

    def close_output(self) -> bool:
        """Nothing more is sent; whether it was open until now."""
        if self.closed:
            return False
        self.closed = True
        self.outbox.clear()
        self.outbox_bytes = 0
        return True

    # -- the steps of other concerns (bound by Engine: the one hub) -----------------

    def on_notification(self, env: Envelope, /) -> None:
        raise NotImplementedError  # _receipt.on_notification

    def on_request(self, env: Envelope, batch: Batch | None, /) -> None:
        raise NotImplementedError  # _receipt.on_request

    def on_response(self, env: Envelope, /) -> None:
        raise NotImplementedError  # _calls.on_response

    def fail_call(self, ident: Id, message: str, /) -> None:
        raise NotImplementedError  # _calls.fail_call

    def release(self, call: Call, env: Envelope, /) -> None:
        raise NotImplementedError  # _calls.release

    def ordered_head(self, /) -> QueuedNotification | IncomingRequest | None:
        raise NotImplementedError  # _ordering.ordered_head

    def must_wait(self, request: IncomingRequest, new: int = 0, /) -> bool:
        raise NotImplementedError  # _requests.must_wait

    def start(self, request: IncomingRequest, /) -> None:
        raise NotImplementedError  # _requests.start

    def started(self, request: IncomingRequest, /) -> bool:
        raise NotImplementedError  # _requests.started

    def finish(self, request: IncomingRequest, line: bytes, /) -> None:
        raise NotImplementedError  # _requests.finish

    def refuse_too_many(self, request: IncomingRequest, /) -> None:
        raise NotImplementedError  # _requests.refuse_too_many

    def answer_cancelled(self, request: IncomingRequest, /) -> bytes:
        raise NotImplementedError  # _requests.answer_cancelled
