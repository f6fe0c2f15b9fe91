"""One connection's protocol state: bytes in, events out; calls in, bytes out.

:class:`Engine` never awaits and never does I/O.  An adapter (``acp_trio``,
``acp_asyncio``) reads bytes and hands them over, runs the handlers the
events name, writes the bytes the engine builds, and waits.  The rules kept
here:

- framing (:class:`~acp_core.LineBuffer`, the size limit), the envelope,
  batches (``max_batch_members``), errors answering bad input (bounded by
  ``max_error_text``, logged at WARNING through a throttle);
- correlation: ids of outgoing calls, their answers decoded into the
  method's result type, failures when the peer goes away;
- order: a request runs, and a response is released to its caller, only
  after every notification received before it was handled; a released
  caller resumes before the notifications after its response
  (:class:`~acp_core._flow.ResumeOrder`); calls made by the notification
  handler are exempt (it would wait for itself);
- the side's rules (:mod:`acp_core._rules`): initialize, version,
  capabilities, paths, session cancel; and ``$/cancel_request``;
- the bounds of :class:`~acp_core.Limits` (:class:`~acp_core._flow.ReadGate`).

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

import collections
import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import msgspec

from . import _handlers, _telemetry
from ._errors import (
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
from ._flow import LogThrottle, ReadGate, ResumeOrder
from ._framing import LineBuffer, Oversized, sniff_oversized
from ._jsonrpc import (
    BatchTooLong,
    Envelope,
    Id,
    InvalidMessage,
    check_envelope,
    clip,
    clip_data,
    decode_envelope,
    decode_error,
    encode_error,
    encode_id,
    encode_notification,
    encode_request,
    encode_result,
    envelope_decoder,
    split_batch,
)
from ._limits import Limits
from ._outgoing import check_outgoing_default, check_outgoing_message
from ._records import (
    END_OF_INPUT,
    NEED_DATA,
    ORIGIN_USER,
    PAUSED,
    Batch,
    Call,
    CloseConnection,
    ExtMethod,
    Handler,
    HeldResponse,
    IncomingRequest,
    QueuedNotification,
    Running,
    Settable,
    VersionChosen,
)
from ._rules import AgentRules, ClientRules, peek_protocol_version
from ._schema import MethodSpec, Schema, other_draft

__all__ = ["Engine", "peek_protocol_version", "validation_data"]

log = logging.getLogger("acp_core")

_NULL: Final = b"null"
_EMPTY_OBJECT: Final = b"{}"
_UNKNOWN: Final[Any] = object()
_UNSET: Final = msgspec.UNSET
_decode_envelope: Final = envelope_decoder.decode

Rules = AgentRules | ClientRules


async def _resolve_at_start(params: Any) -> Any:
    """The handler of a request held before its handler object was set."""
    raise AssertionError("resolved by next_queued before the request starts")


QueueItem = QueuedNotification | IncomingRequest | HeldResponse


class _Route(msgspec.Struct, frozen=True):
    """How a notification needing no rule is received: decode, then queue.

    Kept per wire name (``Engine._routes``) once the long way found the
    method a plain notification (no receiver check, not watched by the
    rules) with a handler; forgotten when the schema or handler object
    changes.  ``serving`` and ``refusals`` are still asked per message.

    ``fused`` (when the params decoder is a plain msgspec decoder) decodes
    a whole line written ``prefix`` + params + ``}`` in one pass, the
    envelope and the typed params at once (:func:`_fused_decoder`); the
    engine tries it on lines that start with ``prefix`` when this is the
    route it took last (a turn streams one method).
    """

    name: str
    decode: Callable[[Any], Any]  # the params type's strict decoder
    handler: Handler
    prefix: bytes = b""  # b'{"jsonrpc":"2.0","method":"<name>","params":'
    fused: Callable[[Any], Any] | None = None  # line -> a record with .params
    skip: int = 0  # len(prefix) + 1: the bytes of a line that are not params


def _fused_decoder(
    name: str, decode: Callable[[Any], Any]
) -> Callable[[Any], Any] | None:
    """One msgspec pass for a line of notification ``name`` (``None``: not fusable).

    Its Struct has exactly the members of a notification: ``jsonrpc`` must
    be ``"2.0"``, ``method`` must be ``name``, ``params`` is decoded with
    the same type and options as ``decode``; anything else (an ``id``, an
    unknown member, a duplicate with another value) fails it, and the line
    goes the usual way.  So what it accepts is what the envelope decoder
    and ``decode`` together would accept, decoded the same.
    """
    strict = getattr(decode, "__self__", None)
    if type(strict) is not msgspec.json.Decoder or decode != strict.decode:
        return None  # a lenient walk, or not msgspec's: keep the two steps
    literal: Any = Literal  # Literal[value] of a run-time value
    params_type: Any = strict.type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    record = msgspec.defstruct(
        "_Fused",
        [
            ("jsonrpc", literal["2.0"]),
            ("method", literal[name]),
            ("params", params_type),
        ],
        forbid_unknown_fields=True,
    )
    return msgspec.json.Decoder(
        record,
        strict=strict.strict,
        dec_hook=strict.dec_hook,
        float_hook=strict.float_hook,
    ).decode


def _route(name: str, decode: Callable[[Any], Any], handler: Handler) -> _Route:
    prefix = b'{"jsonrpc":"2.0","method":%s,"params":' % msgspec.json.encode(name)
    fused = _fused_decoder(name, decode)
    if fused is None:
        return _Route(name, decode, handler)
    return _Route(name, decode, handler, prefix, fused, len(prefix) + 1)


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


def _size(raw: msgspec.Raw | msgspec.UnsetType) -> int:
    return 0 if raw is msgspec.UNSET else len(raw)


class Engine:
    """The protocol state of one connection (see the module)."""

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
        self._lines = LineBuffer(max_message_size=limits.max_message_size)
        self._incoming: collections.deque[bytes | Oversized] = collections.deque()
        self._eof_reported = False
        self._bad_input_log = LogThrottle()
        #: Bytes to send that the engine built (answers, errors, batch arrays).
        self.outbox: list[bytes] = []
        self.outbox_bytes = 0  # what outbox holds
        #: What :meth:`next_event` returns next (filled while a line is handled).
        self.events: collections.deque[Any] = collections.deque()
        #: Outgoing calls waiting for their answer, by id.
        self.pending: dict[Id, Call] = {}
        #: Incoming requests accepted and not answered yet, by id.
        self.running: dict[Id, Running] = {}
        self._next_id = 0
        self._handlers: dict[str, Handler | None] = {}
        self._routes: dict[Any, _Route] = {}  # the notifications' hot path
        self._hot: _Route | None = None  # the route taken last
        self._handler_obj: object | None = None
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
        # initialize accepted, its handler object not given yet (VersionChosen)
        self._awaiting_handler: tuple[Id, MethodSpec, Any, Batch | None, int] | None = (
            None
        )
        self.schema = schema or Schema.load(
            rules.offer.latest,
            rules.side,
            unstable=unstable,
            draft=rules.offer.drafts.get(rules.offer.latest),
        )
        self.by_handler: dict[str, MethodSpec] = {}
        self.bind(self.schema)

    # -- configuration -----------------------------------------------------------

    def bind(self, schema: Schema) -> None:
        """Speak ``schema`` from now on (after version negotiation)."""
        self.schema = schema
        self.by_handler = {m.handler: m for m in schema.outgoing.values()}
        #: Where spans go (``_telemetry``), or ``None``: handlers called as they are.
        self.tracer = _telemetry.tracer()
        self._handlers = {}
        self._routes = {}
        self._hot = None

    def set_handler(self, obj: object | None, *, failure: str | None = None) -> None:
        """Route incoming methods to ``obj``'s methods named by the table's handler names.

        Public methods of ``obj`` that no method reaches are logged.  After a
        :class:`~acp_core.VersionChosen` event, this is the step that lets
        the ``initialize`` request run, or answers it: -32603 with
        ``failure`` (one line: why no handler object could be built, cut at
        ``max_error_text``) when given, else -32601 if ``obj`` has no
        ``initialize``.
        """
        self._handler_obj = obj
        self._handlers = {}
        self._routes = {}
        self._hot = None
        _handlers.warn_unmatched(obj, self.schema)
        awaiting, self._awaiting_handler = self._awaiting_handler, None
        if awaiting is not None:
            ident, method, params, batch, size = awaiting
            handler = None if failure is not None else self.handler_for(method)
            if handler is None:
                self.rules.reset()
                self.set_handler(None)
                if failure is not None:
                    code = INTERNAL_ERROR
                    text = f"Internal error: {failure}"
                else:
                    code, text = METHOD_NOT_FOUND, f"Method not found: {method.name}"
                text = clip(" ".join(text.split()), self.limits.max_error_text)
                self._reply_error(ident, code, text, batch, counted=True)
                return
            # received before whatever was queued since: it goes first
            self._admit(ident, method, params, handler, batch, size, first=True)

    def handler_for(self, method: MethodSpec) -> Handler | None:
        """The coroutine function answering ``method`` (``None``: -32601)."""
        try:
            return self._handlers[method.name]
        except KeyError:
            handler: Handler | None = _handlers.resolve_handler(
                self._handler_obj, method.handler
            )
            if handler is not None and self.tracer is not None:
                handler = _telemetry.traced_handler(
                    self.tracer,
                    handler,
                    method.name,
                    self.rules.side,
                    method.result is not None,
                )
            self._handlers[method.name] = handler
            return handler

    @property
    def handler_object(self) -> object | None:
        return self._handler_obj

    # -- input ---------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray) -> None:
        """Bytes read from the peer (``b""``: end of input)."""
        lines = self._lines.feed(data) if data else self._lines.feed_eof()
        self._incoming.extend(lines)

    def receive_eof(self) -> None:
        """The peer closed its end (same as ``receive_data(b"")``)."""
        self.receive_data(b"")

    def next_event(self, write_queued: int = 0) -> Any:
        """Handle the buffered lines up to the next event for the adapter.

        ``write_queued``: bytes the adapter has queued for the peer (the
        write budget is one of the bounds, checked before every line).
        Returns ``NEED_DATA``, ``PAUSED``, ``END_OF_INPUT`` or an event
        record; see core-api.  Lines that only queue notifications or build
        replies produce no event: the loop goes on to the next one.
        """
        events = self.events
        incoming = self._incoming
        queue = self.queue
        gate = self.gate
        max_items, max_bytes, max_write = gate.max_items, gate.max_bytes, gate.max_write
        while True:
            if events:
                return events.popleft()
            # ReadGate.full, its common "no" decided inline (it runs per line);
            # what the outbox holds counts as written: a chunk of bad lines
            # cannot build more answers than the write bound
            written = write_queued + self.outbox_bytes
            if (
                written >= max_write
                or len(queue) >= max_items
                or self.queued_bytes >= max_bytes
            ) and gate.full(
                written, len(queue), self.queued_bytes, self.waits_in_notifications
            ):
                self.pause_reason = gate.reason(
                    write_queued=written,
                    queued=len(queue),
                    queued_bytes=self.queued_bytes,
                    notifications_wait=self.waits_in_notifications,
                )
                return PAUSED
            if not incoming:
                self.pause_reason = None
                if self._lines.eof and not self._eof_reported:
                    self._eof_reported = True
                    self.end_of_input()
                    return END_OF_INPUT
                return NEED_DATA
            line: Any = incoming.popleft()  # bytes | Oversized; None: handled
            hot, rules = self._hot, self.rules
            if hot is not None and rules.serving and hot.name not in rules.refusals:
                # The hot path for a run of lines of the route taken
                # last.  Nothing in the run changes the rules, the events, the
                # requests or the write budget: per line, only the bounds the
                # run grows are checked (the full check above when one is near).
                prefix, fused, name, handler, skip = (
                    hot.prefix,
                    hot.fused,
                    hot.name,
                    hot.handler,
                    hot.skip,
                )
                n = len(prefix)
                backlog, queued_bytes = self.backlog, self.queued_bytes
                try:
                    while line[:n] == prefix:  # an Oversized raises TypeError
                        note = fused(line)  # type: ignore[misc]
                        size = len(line) - skip
                        backlog += 1
                        queued_bytes += size
                        queue.append(
                            QueuedNotification(name, handler, note.params, size)
                        )
                        if (
                            not incoming
                            or len(queue) >= max_items
                            or queued_bytes >= max_bytes
                        ):
                            line = None
                            break
                        line = incoming.popleft()
                except Exception:  # Oversized, or not in one pass: the usual way
                    pass
                self.backlog, self.queued_bytes = backlog, queued_bytes
                if line is None:
                    continue
            self._receive_usual(line)

    def read_gate(self, write_queued: int) -> str | None:
        """Why not to read now (``WRITE_BUFFER``, ``NOTIFICATIONS`` of
        ``acp_core.adapter``), or ``None``: read."""
        return self.gate.reason(
            write_queued=write_queued + self.outbox_bytes,
            queued=len(self.queue),
            queued_bytes=self.queued_bytes,
            notifications_wait=self.waits_in_notifications,
        )

    def take_outbox(self) -> list[bytes]:
        """The bytes built since the last call, to be written in order."""
        out, self.outbox = self.outbox, []
        self.outbox_bytes = 0
        return out

    def _receive_usual(self, line: bytes | Oversized) -> None:
        """One line, not of the route taken last (or failing its one-pass decode).

        A notification with a known route is decoded here in two steps
        (envelope, then params), and its route becomes the one taken last;
        anything else goes the long way (:meth:`_on_line`).
        """
        try:
            if type(line) is not bytes:
                self._on_oversized(line)  # type: ignore[arg-type]
                return
            try:
                env = _decode_envelope(line)
            except Exception:  # not a message (or a batch): the long way says which
                self._on_line(line, None)
                return
            if env.id is _UNSET and env.jsonrpc == "2.0":  # a notification (or none)
                route = self._routes.get(env.method)
                if route is not None:
                    if route.fused is not None:
                        self._hot = route
                    rules = self.rules
                    if rules.serving and route.name not in rules.refusals:
                        raw = env.params
                        try:
                            if raw is _UNSET:
                                params, size = route.decode(_EMPTY_OBJECT), 0
                            else:
                                params, size = route.decode(raw), len(raw)
                        except Exception:  # the long way logs why it is dropped
                            self._on_notification(env)
                            return
                        self.backlog += 1
                        self.queued_bytes += size
                        self.queue.append(
                            QueuedNotification(route.name, route.handler, params, size)
                        )
                        return
            self._on_line(line, None, env)
        except Exception:  # a bug: lose this message, keep the connection
            log.exception("failed to handle an incoming message")

    def _on_line(
        self, line: bytes, batch: Batch | None, env: Envelope | None = None
    ) -> None:
        """Handle one message (``env``: its envelope, decoded without the rules)."""
        try:
            env = decode_envelope(line) if env is None else check_envelope(env)
        except InvalidMessage as exc:
            if batch is None and not exc.response and line.lstrip()[:1] == b"[":
                self._on_batch(line)
                return
            self._on_invalid(exc, line, batch)
            return
        if env.method is msgspec.UNSET:
            self._on_response(env)
        elif env.id is msgspec.UNSET:
            self._on_notification(env)
        else:
            self._on_request(env, batch)

    def _on_invalid(
        self, exc: InvalidMessage, line: bytes, batch: Batch | None
    ) -> None:
        """Answer (or, for a response, not answer) a line that is no valid message.

        A response-shaped one is answered with ``id: null``, never its own id
        (the peer may take it for the answer to its request), and fails the
        call of ours it was meant to answer.
        """
        self.bad_input(exc.message, line)
        ident = exc.ident
        if exc.response:
            call = self.pending.pop(ident, None)
            if call is not None:
                call.fail(
                    RequestError(
                        INVALID_REQUEST,
                        clip(
                            f"Invalid response from peer: {exc.message}",
                            self.limits.max_error_text,
                        ),
                    )
                )
            ident = None
        self._reply_error(ident, exc.code, exc.message, batch)

    def bad_input(self, what: str, line: bytes | None = None) -> None:
        """Log bad input from the peer: one WARNING line, bounded (LogThrottle)."""
        throttle = self._bad_input_log
        level = logging.WARNING if throttle.allow() else logging.DEBUG
        if not log.isEnabledFor(level):
            return
        limit = self.limits.max_error_text
        text = f"bad input from the peer (#{throttle.count}): {clip(what, limit)}"
        if line is not None:
            text += f"; {len(line)} bytes: {clip(repr(line[:limit]), limit)}"
        log.log(level, "%s", text)

    def _on_batch(self, line: bytes) -> None:
        limit = self.limits.max_batch_members
        try:
            members = split_batch(line, limit)
        except BatchTooLong:
            self.bad_input(f"a batch of more than {limit} members", line)
            self._reply_error(
                None,
                INVALID_REQUEST,
                f"Invalid request: a batch may have at most {limit} members",
                data={"maxBatchMembers": limit},
            )
            return
        except msgspec.ValidationError:
            self.bad_input("a batch that is not an array", line)
            self._reply_error(None, INVALID_REQUEST, "Invalid request")
            return
        except msgspec.DecodeError:
            self.bad_input("a line that is not JSON", line)
            self._reply_error(None, PARSE_ERROR, "Parse error")
            return
        except Exception:  # RecursionError: a member nested too deep
            self.bad_input("a batch that could not be decoded", line)
            self._reply_error(None, INVALID_REQUEST, "Invalid request")
            return
        if not members:
            self.bad_input("an empty batch")
            self._reply_error(None, INVALID_REQUEST, "Invalid request: empty batch")
            return
        batch = Batch()
        for member in members:
            self._on_line(bytes(member), batch)
        batch.sealed = True
        done = batch.complete()
        if done is not None:
            self._send(done)

    def _on_oversized(self, line: Oversized) -> None:
        ident, method, is_response = sniff_oversized(line)
        limit = self.limits.max_message_size
        self.bad_input(
            f"discarded a {line.size}-byte message (limit {limit},"
            f" id={clip(repr(ident), self.limits.max_error_text)})"
        )
        if ident is None:
            return
        message = f"Message of {line.size} bytes exceeds the limit of {limit} bytes"
        # A response (or, shape unknown, what matches a call of ours) is never
        # answered with its own id: it fails that call instead.
        if is_response or (method is None and ident in self.pending):
            call = self.pending.pop(ident, None)
            if call is not None:
                call.fail(RequestError(INVALID_REQUEST, message))
            return
        self._reply_error(
            ident, INVALID_REQUEST, message, data={"maxMessageSize": limit}
        )

    # -- incoming requests ---------------------------------------------------------

    def _on_request(self, env: Envelope, batch: Batch | None) -> None:
        ident: Id = env.id  # type: ignore[assignment]
        name: str = env.method  # type: ignore[assignment]
        if batch is not None:
            batch.expected += 1
        if self.waits_in_requests and self.gate.refuse_request(
            len(self.running) - self.waiting, self.waits_in_requests
        ):  # at the bound, handlers wait for us: one waiting could wait for ever
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
            self._accept_request(ident, name, env.params, batch)
        except Exception:
            log.exception("failed to handle request %s", name[:64])
            self._reply_error(
                ident, INTERNAL_ERROR, "Internal error", batch, counted=True
            )

    def _accept_request(
        self,
        ident: Id,
        name: str,
        raw: msgspec.Raw | msgspec.UnsetType,
        batch: Batch | None,
    ) -> None:
        rules = self.rules
        refusal = rules.refuse(name, True)
        if refusal is not None:
            self._reply_error(
                ident, refusal.code, refusal.message, batch, refusal.data, counted=True
            )
            return
        method = self.schema.incoming.get(name)
        if method is None:
            if name.startswith("_"):
                self._accept_ext_request(ident, name, raw, batch)
            else:
                self._reply_error(
                    ident,
                    METHOD_NOT_FOUND,
                    f"Method not found: {name}",
                    batch,
                    counted=True,
                )
            return
        if ident in self.running:
            self._reply_error(
                ident,
                INVALID_REQUEST,
                "Invalid request: duplicate id",
                batch,
                counted=True,
            )
            return
        version = rules.negotiate(method, raw)
        if version is not None:
            # The initialize step: speak the version chosen, decode in it.
            if version != self.schema.version:
                draft = rules.offer.drafts.get(version)
                self.bind(
                    Schema.load(version, "agent", unstable=self.unstable, draft=draft)
                )
            method = self.schema.incoming.get(name, method)
            # Two drafts of one version both say `protocolVersion: 2`: a peer
            # speaking the other one is refused here, not misread later.
            other = other_draft(self.schema.module, "params", raw)
            if other is not None:
                self.bad_input(f"initialize: {other}")
                message = clip(f"Invalid params: {other}", self.limits.max_error_text)
                self._reply_error(ident, INVALID_PARAMS, message, batch, counted=True)
                return
        params = self._decode_params_or_reply(ident, method, raw, batch, False)
        if params is _UNKNOWN:
            return
        if version is not None:
            rules.begin_initialize(version, params)
            self._awaiting_handler = (ident, method, params, batch, _size(raw))
            self.events.append(VersionChosen(version))
            return
        if rules.holds(method):  # its handler object may come later (a batch)
            handler: Handler | None = _resolve_at_start
        else:
            handler = self.handler_for(method)
        if handler is None:
            self._reply_error(
                ident,
                METHOD_NOT_FOUND,
                f"Method not found: {name}",
                batch,
                counted=True,
            )
            return
        self._admit(ident, method, params, handler, batch, _size(raw))

    def _decode_params_or_reply(
        self,
        ident: Id,
        method: MethodSpec,
        raw: msgspec.Raw | msgspec.UnsetType,
        batch: Batch | None,
        notification: bool,
    ) -> Any:
        name = method.name
        try:
            return self.decode_params(method, raw, notification=notification)
        except msgspec.ValidationError as exc:
            self.bad_input(f"invalid params for {name}: {exc}")
            self._reply_error(
                ident,
                INVALID_PARAMS,
                "Invalid params",
                batch,
                validation_data(exc, "$.params", self.limits.max_error_text),
                counted=True,
            )
        except msgspec.DecodeError:
            self.bad_input(f"params of {name} are not JSON")
            self._reply_error(ident, PARSE_ERROR, "Parse error", batch, counted=True)
        except RequestError as exc:
            self.bad_input(f"params of {name} refused: {exc.message}")
            self._reply_error(
                ident, exc.code, exc.message, batch, exc.data, counted=True
            )
        except RecursionError:  # a decoder that let it out: nested too deep
            self.bad_input(f"params of {name} nested too deep")
            self._reply_error(
                ident,
                INVALID_REQUEST,
                "Invalid request: params nested too deep",
                batch,
                counted=True,
            )
        return _UNKNOWN

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
        that form's type.  The side's receiver rules (absolute paths,
        elicitation modes) raise :class:`RequestError` -32602.
        """
        type_ = method.params
        if notification and method.result is not None:
            type_ = getattr(method, "notification", None) or type_
        params = self.schema.decode(
            _EMPTY_OBJECT if raw is msgspec.UNSET else raw, type_
        )
        self.rules.check_received(self.schema, method, params)
        return params

    def _admit(
        self,
        ident: Id,
        method: MethodSpec,
        params: Any,
        handler: Handler,
        batch: Batch | None,
        size: int,
        *,
        first: bool = False,
    ) -> None:
        running = Running(method, getattr(params, "session_id", None))
        request = IncomingRequest(ident, running, handler, params, batch, size)
        self.running[ident] = running
        try:
            self.rules.request_received(running)
        except Exception:
            log.exception("failed to handle request %s", method.name[:64])
            self._finish(request, self._internal_error(ident))
            return
        if (first or self.backlog == 0) and not self._must_wait(request, 1):
            self._start(request)
        else:  # once what came before it was handled, and it may start (_must_wait)
            self.waiting += 1
            self._enqueue(request, size)

    def _must_wait(self, request: IncomingRequest, new: int = 0) -> bool:
        """Whether ``request`` (accepted, in :attr:`running`) may not start yet.

        It waits while the rules hold it (the agent's ``initialize`` runs)
        and while ``max_concurrent_requests`` others run; not when one of
        those waits for the peer (``ReadGate.refuse_request``: it is refused
        at its start, the answer awaited may be behind it).  ``new``: 1 when it is
        not counted in :attr:`waiting` yet.
        """
        if self.rules.holds(request.running.method):
            return True
        others = len(self.running) - self.waiting - new
        return others >= self.gate.max_requests and not self.waits_in_requests

    def _start(self, request: IncomingRequest) -> None:
        try:
            self.rules.request_started(request.running)
        except Exception:
            log.exception("failed to start request %s", request.running.method.name)
            self._finish(request, self._internal_error(request.id))
            return
        self.events.append(request)

    def _accept_ext_request(
        self,
        ident: Id,
        name: str,
        raw: msgspec.Raw | msgspec.UnsetType,
        batch: Batch | None,
    ) -> None:
        ext = getattr(self._handler_obj, "ext_method", None)
        if ext is None:
            self._reply_error(
                ident,
                METHOD_NOT_FOUND,
                f"Method not found: {name}",
                batch,
                counted=True,
            )
            return
        params = msgspec.json.decode(_EMPTY_OBJECT if raw is msgspec.UNSET else raw)
        self._admit(
            ident,
            ExtMethod(name),
            params,
            functools.partial(ext, name),
            batch,
            _size(raw),
        )

    # -- answers -------------------------------------------------------------------

    def answer(self, request: IncomingRequest, result: Any) -> bytes:
        """The line answering ``request`` whose handler returned ``result``.

        The result is checked against the method's result type (a mismatch
        is answered -32603 and logged); a session-cancelled request that
        returned normally is answered as cancelled, its other fields kept.
        """
        running = request.running
        eid = encode_id(request.id)
        try:
            answer = (
                self.rules.cancelled_result(self.schema, running, result)
                if running.cancel_reason == "session"
                else None
            )
            if answer is None:
                if isinstance(running.method, ExtMethod):
                    answer = msgspec.json.encode(result)
                else:
                    answer = self.schema.encode(
                        self.rules.answer(running.method, result)
                    )
                    if self.check_outgoing:
                        self._check_outgoing(running.method, answer, "result")
            return encode_result(eid, answer)
        except Exception as exc:
            return self.answer_exception(request, exc)

    def answer_exception(self, request: IncomingRequest, exc: BaseException) -> bytes:
        """The line answering ``request`` whose handler raised ``exc``.

        A :class:`RequestError` is sent as is; anything else is logged and
        answered -32603 without its text; a cancelled request is answered
        as cancelled whatever its handler raised.
        """
        running = request.running
        if running.cancel_reason is not None:
            return self.answer_cancelled(request)
        eid = encode_id(request.id)
        if isinstance(exc, RequestError):
            try:
                return encode_error(eid, exc.code, exc.message, exc.data)
            except Exception:
                log.exception("unencodable RequestError from %s", running.method.name)
        else:
            log.error("handler for %s failed", running.method.name, exc_info=exc)
        return encode_error(eid, INTERNAL_ERROR, "Internal error")

    def answer_cancelled(self, request: IncomingRequest) -> bytes:
        """The line answering a cancelled ``request`` (-32800, or the session-cancel result)."""
        running = request.running
        eid = encode_id(request.id)
        answer = (
            self.rules.cancelled_result(self.schema, running)
            if running.cancel_reason == "session"
            else None
        )
        if answer is not None:
            return encode_result(eid, answer)
        code = self.schema.request_cancelled_code or REQUEST_CANCELLED
        return encode_error(eid, code, "Request cancelled")

    def request_done(
        self, request: IncomingRequest, line: bytes | None
    ) -> bytes | None:
        """Forget ``request``; the bytes to write for ``line`` (its answer), if any.

        ``line`` ``None``: no answer (the connection is closing).  A batch
        member's answer is held until the whole batch's array is complete.
        """
        ident, running = request.id, request.running
        if self.running.get(ident) is running:
            del self.running[ident]
        try:
            self.rules.request_finished(running)
        except Exception:
            log.exception("request_finished failed for %s", running.method.name)
        if line is None or self.closed:
            return None
        batch = request.batch
        if batch is not None:
            return batch.add(line)
        return line

    def _finish(self, request: IncomingRequest, line: bytes) -> None:
        out = self.request_done(request, line)
        if out is not None:
            self.outbox.append(out)
            self.outbox_bytes += len(out)

    def _internal_error(self, ident: Id) -> bytes:
        return encode_error(encode_id(ident), INTERNAL_ERROR, "Internal error")

    # -- incoming notifications ----------------------------------------------------

    def _on_notification(self, env: Envelope) -> None:
        try:
            self._accept_notification(env)
        except Exception:
            log.exception("dropping notification %s", str(env.method)[:64])

    def _accept_notification(self, env: Envelope) -> None:
        name: str = env.method  # type: ignore[assignment]
        rules = self.rules
        if not rules.serving or name in rules.refusals:
            refusal = rules.refuse(name, False)
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
                    self._enqueue(
                        QueuedNotification(
                            name,
                            functools.partial(ext, name),
                            params,
                            _size(env.params),
                        ),
                        _size(env.params),
                    )
                    return
            log.debug(
                "ignoring unknown notification %s",
                clip(name, self.limits.max_error_text),
            )
            return
        raw = env.params
        try:
            if method.result is None:  # decode_params, inlined (once per update)
                params = schema.decode(
                    _EMPTY_OBJECT if raw is msgspec.UNSET else raw, method.params
                )
                if method.handler in rules.checked:
                    rules.check_received(schema, method, params)
            else:
                params = self.decode_params(method, raw, notification=True)
        except Exception as exc:  # msgspec's, RequestError, RecursionError
            self.bad_input(f"notification {name} dropped, invalid params: {exc}")
            return
        watched = method.handler in rules.watched_notifications
        if watched:
            rules.notification_received(method, params)
        handler = self._handlers.get(method.name, _UNKNOWN)
        if handler is _UNKNOWN:
            handler = self.handler_for(method)
        if handler is None:
            log.debug("no handler for notification %s", name)
            return
        if (
            method.result is None
            and not watched
            and method.handler not in rules.checked
        ):  # no rule looks at it: the next ones take the hot path
            route = _route(name, schema.decoder(method.params), handler)
            self._routes[name] = route
            if route.fused is not None:
                self._hot = route
        size = 0 if raw is msgspec.UNSET else len(raw)
        self.backlog += 1
        self.queued_bytes += size
        self.queue.append(QueuedNotification(name, handler, params, size))

    def _on_cancel_request(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> None:
        try:
            params = self.decode_params(method, raw)
        except Exception as exc:
            self.bad_input(f"{method.name} dropped, invalid params: {exc}")
            return
        running = self.running.get(params.request_id)
        if running is None:
            log.debug("%s for unknown request id %r", method.name, params.request_id)
            return
        running.cancel("request")

    def _enqueue(self, item: QueueItem, size: int) -> None:
        self.backlog += 1
        self.queued_bytes += size
        self.queue.append(item)

    # -- the ordered queue ---------------------------------------------------------

    def next_queued(
        self, done: QueuedNotification | None = None
    ) -> QueuedNotification | IncomingRequest | None:
        """The next item of the ordered queue for the adapter's one consumer.

        ``None`` when the queue is empty or held (:attr:`queue_blocked`: a
        caller released before it has not resumed yet).  A held response is
        released here (its caller's waiter set) and the next item returned.
        A :class:`QueuedNotification` is handled by the consumer, which then
        calls :meth:`notification_done`, or passes it here as ``done`` when
        it asks for the next item (the same, one call less per notification);
        an :class:`IncomingRequest` is run like one :meth:`next_event`
        returned.
        """
        if done is not None:
            self.backlog -= 1
        queue = self.queue
        while queue and not self.order.held:
            item = queue[0]
            if type(item) is IncomingRequest and self._must_wait(item):
                return None  # a request finishing, or initialize, lets it go
            queue.popleft()
            self.queued_bytes -= item.size
            if type(item) is QueuedNotification:
                return item
            self.backlog -= 1
            try:
                if type(item) is HeldResponse:
                    self.release(item.call, item.envelope)
                    continue
                assert type(item) is IncomingRequest
                self.waiting -= 1
                if self.gate.refuse_request(
                    len(self.running) - self.waiting - 1, self.waits_in_requests
                ):
                    self._refuse_too_many(item)
                    continue
                if item.handler is _resolve_at_start:
                    handler = self.handler_for(item.running.method)
                    if handler is None:
                        line = encode_error(
                            encode_id(item.id),
                            METHOD_NOT_FOUND,
                            clip(
                                f"Method not found: {item.running.method.name}",
                                self.limits.max_error_text,
                            ),
                        )
                        self._finish(item, line)
                        continue
                    item.handler = handler
                if self.rules_start(item):
                    return item
            except Exception:  # a bug: lose this item, keep the connection
                log.exception("failed to handle a queued message")
        return None

    def rules_start(self, request: IncomingRequest) -> bool:
        """A request held in the queue is about to run (``False``: answered already)."""
        try:
            self.rules.request_started(request.running)
        except RequestError as exc:  # not initialized after all
            line = encode_error(encode_id(request.id), exc.code, exc.message, exc.data)
            self._finish(request, line)
            return False
        except Exception:
            log.exception("failed to start request %s", request.running.method.name)
            self._finish(request, self._internal_error(request.id))
            return False
        return True

    def _refuse_too_many(self, request: IncomingRequest) -> None:
        limit = self.limits.max_concurrent_requests
        name = request.running.method.name
        log.warning("refused %s: %d requests running", clip(name, 64), limit)
        line = encode_error(
            encode_id(request.id),
            INTERNAL_ERROR,
            "Too many concurrent requests",
            {"maxConcurrentRequests": limit},
        )
        self._finish(request, line)

    def notification_done(self, item: QueuedNotification) -> None:
        """The handler of ``item`` (from :meth:`next_queued`) returned or failed."""
        self.backlog -= 1

    @property
    def queue_blocked(self) -> bool:
        """The queue waits: for a released caller to resume (ResumeOrder), or
        its first item is a request that may not start yet (``_must_wait``)."""
        if self.order.held > 0:
            return True
        queue = self.queue
        if queue:
            head = queue[0]
            return type(head) is IncomingRequest and self._must_wait(head)
        return False

    @property
    def calls_pending(self) -> int:
        """Calls of ours waiting for the peer's answer."""
        return len(self.pending)

    @property
    def queue_ready(self) -> bool:
        """:meth:`next_queued` has something for the consumer now: wake it."""
        return bool(self.queue) and not self.queue_blocked

    def abandon_queued(self) -> None:
        """Answer, as cancelled, the requests still queued (a half-closed peer reads)."""
        self.waiting = 0
        for item in self.queue:
            if type(item) is IncomingRequest:
                self._finish(item, self.answer_cancelled(item))
        self.queue.clear()

    # -- responses -----------------------------------------------------------------

    def _on_response(self, env: Envelope) -> None:
        ident = env.id
        call = (
            None
            if isinstance(ident, msgspec.UnsetType)
            else self.pending.pop(ident, None)
        )
        if call is None:  # a call cancelled here, or a peer's mistake
            log.info(
                "dropping response to unknown request id %s",
                clip(repr(env.id), self.limits.max_error_text),
            )
            return
        if env.result is not msgspec.UNSET:
            try:
                version = self.rules.response_received(self.schema, call, env.result)
            except ProtocolVersionError as exc:
                call.fail(exc)
                self.events.append(CloseConnection(str(exc)))
                return
            except Exception:
                log.exception("failed to handle the response to %s", call.method.name)
                call.fail(RequestError(INTERNAL_ERROR, "Internal error"))
                return
            if version is not None and version != self.schema.version:
                draft = self.rules.offer.drafts.get(version)
                self.bind(
                    Schema.load(
                        version, self.rules.side, unstable=self.unstable, draft=draft
                    )
                )
                call.method = self.schema.outgoing[call.method.name]
                self.rules.advertised(self.schema)
                self.events.append(VersionChosen(version))
        if self.backlog == 0 or call.exempt:
            self.release(call, env)
        else:
            raw = env.result if env.error is msgspec.UNSET else env.error
            self._enqueue(HeldResponse(call, env, _size(raw)), _size(raw))

    def release(self, call: Call, env: Envelope) -> None:
        """Decode the answer to ``call`` and wake its caller."""
        if call.answered:
            return
        try:
            if env.error is not msgspec.UNSET:
                call.failure = decode_error(env.error)
            else:
                call.value, call.failure = self._decode_result(
                    call.method,
                    env.result,  # type: ignore[arg-type]
                )
        except Exception:
            log.exception("failed to decode the response to %s", call.method.name)
            call.value, call.failure = (
                None,
                RequestError(INTERNAL_ERROR, "Internal error"),
            )
        call.answered = True
        try:
            self.rules.call_released(call)
        except Exception:
            log.exception("failed to apply the response to %s", call.method.name)
        call.waiter.set()
        if call.waiting and not call.exempt:  # its caller runs before what came after
            call.held = True
            self.order.hold()

    def _decode_result(
        self, method: MethodSpec, raw: msgspec.Raw
    ) -> tuple[Any, BaseException | None]:
        result_type = method.result
        if result_type is None or isinstance(method, ExtMethod):
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
                validation_data(exc, "$.result", self.limits.max_error_text),
            )
            self.bad_input(f"invalid result for {method.name}: {exc}")
            return None, err

    # -- replies -------------------------------------------------------------------

    def _reply_error(
        self,
        ident: Id,
        code: int,
        message: str,
        batch: Batch | None = None,
        data: Any = msgspec.UNSET,
        *,
        counted: bool = False,
    ) -> None:
        if batch is not None and not counted:
            batch.expected += 1
        # Built from the peer's input (method names, tags, paths): bounded.
        limit = self.limits.max_error_text
        message = clip(message, limit)
        if data is not msgspec.UNSET:
            data = clip_data(data, limit)
        line = encode_error(encode_id(ident), code, message, data)
        if batch is not None:
            done = batch.add(line)
            if done is not None:
                self._send(done)
        else:
            self._send(line)

    def _send(self, line: bytes) -> None:
        if not self.closed:
            self.outbox.append(line)
            self.outbox_bytes += len(line)

    # -- outgoing ------------------------------------------------------------------

    def start_call(
        self,
        method: MethodSpec,
        params: Any,
        waiter: Settable,
        origin: int = ORIGIN_USER,
    ) -> Call:
        """Register an outgoing request; ``call.line`` is its frame to write.

        Raises :class:`~acp_core.CapabilityError` (the peer did not advertise
        it) or :class:`~acp_core.ConnectionClosed`, nothing registered.
        The side's bookkeeping of sent calls runs here: write ``call.line``
        right away (after waiting for write space, if any).
        """
        if self.closed or self.eof:
            raise ConnectionClosed("connection closed")
        schema = self.schema
        self.rules.check_outgoing(schema, method, params)
        data = schema.encode(params)
        if self.check_outgoing:
            self._check_outgoing(method, data, "params")
        ident = self._next_id
        self._next_id += 1
        line = encode_request(ident, schema.wire_names[method.name], data)
        call = Call(ident, method, params, line, waiter, origin)
        self._register(call)
        self.rules.sent(schema, method, params)
        return call

    def start_ext_call(
        self, name: str, params: Any, waiter: Settable, origin: int = ORIGIN_USER
    ) -> Call:
        """:meth:`start_call` for a ``_``-prefixed extension method (result as builtins)."""
        if not name.startswith("_"):
            raise ValueError("extension method names start with '_'")
        if self.closed or self.eof:
            raise ConnectionClosed("connection closed")
        ident = self._next_id
        self._next_id += 1
        line = encode_request(
            ident, msgspec.json.encode(name), self.schema.encode(params)
        )
        call = Call(ident, ExtMethod(name), params, line, waiter, origin)
        self._register(call)
        return call

    def _register(self, call: Call) -> None:
        self.pending[call.id] = call
        if call.exempt:
            self.waits_in_notifications += 1
        elif call.in_request:
            self.waits_in_requests += 1

    def call_finished(self, call: Call) -> bytes | None:
        """The caller of ``call`` resumed (answered) or left (cancelled, failed).

        Returns the ``$/cancel_request`` line to write when it left before
        its answer and this version has one.  Afterwards
        :attr:`queue_blocked` may have turned false: wake the consumer.
        """
        line = None
        if self.pending.pop(call.id, None) is not None:  # left before its answer
            line = self._cancel_request_line(call.id)
        if call.exempt:
            self.waits_in_notifications -= 1
        elif call.in_request:
            self.waits_in_requests -= 1
        call.waiting = False
        if call.held:  # released: what came after it may be handled now
            call.held = False
            self.order.resume()
        try:
            self.rules.call_finished(call)
        except Exception:
            log.exception("call_finished failed for %s", call.method.name)
        return line

    def _cancel_request_line(self, ident: int) -> bytes | None:
        cancel = self.schema.cancel_request
        if cancel is None or self.closed:
            return None
        params = self.schema.decode(b'{"requestId":%d}' % ident, cancel.params)
        wire = self.schema.wire_names[cancel.name]
        return encode_notification(wire, self.schema.encode(params))

    def notification(self, method: MethodSpec, params: Any) -> bytes:
        """The frame of the notification ``method``; write it right away.

        Raises :class:`~acp_core.CapabilityError` or
        :class:`~acp_core.ConnectionClosed`.
        """
        if self.closed:
            raise ConnectionClosed("connection closed")
        schema = self.schema
        self.rules.check_outgoing(schema, method, params)
        data = schema.encode(params)
        if self.check_outgoing:
            self._check_outgoing(method, data, "params")
        line = encode_notification(schema.wire_names[method.name], data)
        self.rules.sent(schema, method, params)
        return line

    def _check_outgoing(self, method: MethodSpec, data: bytes, part: str) -> None:
        """The opt-in schema check of an outgoing message (``_outgoing``)."""
        expected = method.params if part == "params" else method.result
        check_outgoing_message(self.schema, expected, data, method.name, part)

    def ext_notification(self, name: str, params: Any) -> bytes:
        """The frame of the ``_``-prefixed extension notification ``name``."""
        if not name.startswith("_"):
            raise ValueError("extension notification names start with '_'")
        if self.closed:
            raise ConnectionClosed("connection closed")
        return encode_notification(
            msgspec.json.encode(name), self.schema.encode(params)
        )

    # -- the end -------------------------------------------------------------------

    def end_of_input(self) -> None:
        """The peer closed its end: every pending call fails now, and every later one."""
        self.eof = True
        self._fail_pending(ConnectionClosed("the peer closed the connection"))

    def close(self) -> None:
        """The connection is over: pending calls (held ones too) fail, nothing more is sent."""
        if self.closed:
            return
        self.closed = True
        self.outbox.clear()
        self.outbox_bytes = 0
        error = ConnectionClosed("connection closed")
        self._fail_pending(error)
        for item in self.queue:
            if type(item) is HeldResponse:
                item.call.fail(error)

    def _fail_pending(self, error: BaseException) -> None:
        pending, self.pending = self.pending, {}
        for call in pending.values():
            call.fail(error)

    def running_requests(self) -> Mapping[Id, Running]:
        """Incoming requests currently being handled, by id."""
        return self.running
