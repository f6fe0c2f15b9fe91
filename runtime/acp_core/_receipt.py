"""Requests and notifications at receipt: the method's rules, its params, its place.

One path per kind.  A request or a notification is looked up by its wire
name in the connection's receipts (:class:`Receipt`: the method, its row of
the rules table (:mod:`acp_core._table`), its params decoder and handler,
built once per schema and handler object), then, in this order:

1. the gate (``rules.refuse``: initialize, advertised capabilities);
2. for a request: a duplicate id; the agent's ``initialize`` negotiates
   the version here (``rules.negotiate``) and waits for its handler object
   (``VersionChosen``, then :func:`resume_initialize`);
3. the params decoded into the method's type, then the receiver check
   (``rule.check``); a failure answers -32602 (a notification is dropped);
4. a watched notification is shown to the rules (``rule.watched``:
   ``session/cancel`` acts at once); ``$/cancel_request`` cancels here;
5. a notification is queued (``_ordering``); a request is admitted: it
   starts now, or waits in the queue behind notifications, behind
   ``initialize``, or for a slot (``_requests.must_wait``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

import msgspec

from ._calls import validation_data
from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RequestError,
)
from ._jsonrpc import Envelope, Id, clip
from ._ordering import resolve_at_start
from ._records import (
    Batch,
    ExtMethod,
    Handler,
    IncomingRequest,
    QueuedNotification,
    Running,
    VersionChosen,
)
from ._requests import finish, internal_error, must_wait, start
from ._schema import MethodSpec, Schema, other_draft
from ._state import EMPTY_OBJECT, AwaitingHandler, EngineState, log, size_of
from ._table import MethodRule

__all__ = [
    "Receipt",
    "decode_params",
    "on_notification",
    "on_request",
    "receipt_of",
    "resume_initialize",
]

_UNKNOWN: Final[Any] = object()


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


def receipt_of(state: EngineState, name: str) -> Receipt | None:
    """The receipt of wire name ``name`` (``None``: not a method of the schema)."""
    receipt = state.receipts.get(name)
    if receipt is not None:
        return receipt  # type: ignore[no-any-return]
    schema = state.schema
    method = schema.incoming.get(name)
    if method is None:
        return None
    note_type = method.params
    if method.result is not None:
        note_type = getattr(method, "notification", None) or note_type
    receipt = Receipt(
        method,
        state.rules.rule(method.handler),
        method.params,
        note_type,
        schema.decoder(method.params),
        schema.decoder(note_type),
        state.handler_for(method),
    )
    state.receipts[name] = receipt
    return receipt


def _decode(
    state: EngineState,
    receipt: Receipt,
    raw: msgspec.Raw | msgspec.UnsetType,
    notification: bool,
) -> Any:
    """The params of one message, decoded and checked (raises as ``decode_params``)."""
    data = EMPTY_OBJECT if raw is msgspec.UNSET else raw
    if notification:
        decode, type_ = receipt.notification_decode, receipt.notification_type
    else:
        decode, type_ = receipt.request_decode, receipt.request_type
    try:
        params = decode(data)
    except Exception:  # the lenient rules may accept it, else the error
        params = state.schema.decode(data, type_)
    if receipt.rule.check:
        state.rules.check_received(state.schema, receipt.method, params)
    return params


def decode_params(
    state: EngineState,
    method: MethodSpec,
    raw: msgspec.Raw | msgspec.UnsetType,
    *,
    notification: bool = False,
) -> Any:
    """Decode ``raw`` params into the method's type (absent params read as ``{}``).

    ``notification``: the message had no id; a request that the schema also
    defines as a notification (``mcp/message``) then decodes into that
    form's type.  The side's receiver rules (absolute paths, elicitation
    modes) raise :class:`RequestError` -32602.
    """
    receipt = receipt_of(state, method.name)
    if receipt is None or receipt.method is not method:
        type_ = method.params
        if notification and method.result is not None:
            type_ = getattr(method, "notification", None) or type_
        schema = state.schema
        params = schema.decode(EMPTY_OBJECT if raw is msgspec.UNSET else raw, type_)
        if state.rules.rule(method.handler).check:
            state.rules.check_received(schema, method, params)
        return params
    return _decode(state, receipt, raw, notification)


# -- notifications -------------------------------------------------------------


def on_notification(state: EngineState, env: Envelope) -> None:
    """A notification: gate, params, watched, queued (or dropped, logged)."""
    name: str = env.method  # type: ignore[assignment]
    try:
        rules = state.rules
        if not rules.serving or name in rules.refusals:
            refusal = rules.refuse(name, False)
            if refusal is not None:
                log.warning("dropping notification %s: %s", name, refusal.message)
                return
        receipt = state.receipts.get(name) or receipt_of(state, name)
        if receipt is None:
            _not_in_schema(state, name, env.params)
            return
        raw = env.params
        data: bytes | msgspec.Raw
        if raw is msgspec.UNSET:
            data, size = EMPTY_OBJECT, 0
        else:
            data, size = raw, len(raw)
        rule, decode = receipt.rule, receipt.notification_decode
        try:  # _decode, written out: it runs once per session/update
            try:
                params = decode(data)
            except Exception:  # the lenient rules may accept it, else the error
                params = state.schema.decode(data, receipt.notification_type)
            if rule.check:
                rules.check_received(state.schema, receipt.method, params)
        except Exception as exc:  # msgspec's, RequestError, RecursionError
            state.bad_input(f"notification {name} dropped, invalid params: {exc}")
            return
        if rule.watched:
            rules.notification_received(receipt.method, params)
        handler = receipt.handler
        if handler is None:
            log.debug("no handler for notification %s", name)
            return
        state.backlog += 1
        state.queued_bytes += size
        state.queue.append(QueuedNotification(name, handler, params, size))
    except Exception:
        log.exception("dropping notification %s", name[:64])


def _not_in_schema(
    state: EngineState, name: str, raw: msgspec.Raw | msgspec.UnsetType
) -> None:
    """``$/cancel_request``, an extension notification, or an unknown one (ignored)."""
    cancel = state.schema.cancel_request
    if cancel is not None and name == cancel.name:
        _cancel_request(state, cancel, raw)
        return
    if name.startswith("_"):
        ext = getattr(state.handler_obj, "ext_notification", None)
        if ext is not None:
            params = msgspec.json.decode(EMPTY_OBJECT if raw is msgspec.UNSET else raw)
            size = size_of(raw)
            note = QueuedNotification(name, functools.partial(ext, name), params, size)
            state.enqueue(note, size)
            return
    log.debug(
        "ignoring unknown notification %s", clip(name, state.limits.max_error_text)
    )


def _cancel_request(
    state: EngineState, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
) -> None:
    """``$/cancel_request``: cancel the running (or waiting) request it names."""
    try:
        params = state.schema.decode(
            EMPTY_OBJECT if raw is msgspec.UNSET else raw, method.params
        )
    except Exception as exc:
        state.bad_input(f"{method.name} dropped, invalid params: {exc}")
        return
    running = state.running.get(params.request_id)
    if running is None:
        log.debug("%s for unknown request id %r", method.name, params.request_id)
        return
    running.cancel("request")


# -- requests --------------------------------------------------------------------


def on_request(state: EngineState, env: Envelope, batch: Batch | None) -> None:
    """A request: answered here (refused, bad params) or admitted."""
    ident: Id = env.id  # type: ignore[assignment]
    name: str = env.method  # type: ignore[assignment]
    if state.waits_in_requests and state.gate.refuse_request(
        len(state.running) - state.waiting, state.waits_in_requests
    ):  # at the bound, handlers wait for us: one waiting could wait for ever
        limit = state.limits.max_concurrent_requests
        log.warning("refused %s: %d requests running", clip(name, 64), limit)
        state.reply_error(
            ident,
            INTERNAL_ERROR,
            "Too many concurrent requests",
            batch,
            {"maxConcurrentRequests": limit},
        )
        return
    try:
        _accept(state, ident, name, env.params, batch)
    except Exception:
        log.exception("failed to handle request %s", name[:64])
        state.reply_error(ident, INTERNAL_ERROR, "Internal error", batch)


def _accept(
    state: EngineState,
    ident: Id,
    name: str,
    raw: msgspec.Raw | msgspec.UnsetType,
    batch: Batch | None,
) -> None:
    rules = state.rules
    refusal = rules.refuse(name, True)
    if refusal is not None:
        state.reply_error(ident, refusal.code, refusal.message, batch, refusal.data)
        return
    receipt = receipt_of(state, name)
    if receipt is None:
        if name.startswith("_"):
            _accept_ext(state, ident, name, raw, batch)
        else:
            state.reply_error(
                ident, METHOD_NOT_FOUND, f"Method not found: {name}", batch
            )
        return
    if ident in state.running:
        state.reply_error(
            ident, INVALID_REQUEST, "Invalid request: duplicate id", batch
        )
        return
    version = rules.negotiate(receipt.method, raw)
    if version is not None:
        spoken = _speak(state, version, name, raw, receipt)
        if isinstance(spoken, str):  # another draft of the version: refused
            message = f"Invalid params: {spoken}"
            state.reply_error(ident, INVALID_PARAMS, message, batch)
            return
        receipt = spoken
    params = _params_or_reply(state, ident, receipt, raw, batch)
    if params is _UNKNOWN:
        return
    method = receipt.method
    if version is not None:
        rules.begin_initialize(version, params)
        state.awaiting_handler = AwaitingHandler(
            ident, method, params, batch, size_of(raw)
        )
        state.events.append(VersionChosen(version))
        return
    # held (behind initialize): its handler object may come later (a batch)
    handler = resolve_at_start if rules.holds(method) else receipt.handler
    if handler is None:
        state.reply_error(ident, METHOD_NOT_FOUND, f"Method not found: {name}", batch)
        return
    admit(state, ident, method, params, handler, batch, size_of(raw))


def _speak(
    state: EngineState,
    version: int,
    name: str,
    raw: msgspec.Raw | msgspec.UnsetType,
    receipt: Receipt,
) -> Receipt | str:
    """The initialize step: speak the version chosen; its receipt in that version.

    Two drafts of one version both say ``protocolVersion: 2``: a peer
    speaking the other one is refused here (why, as text), not misread later.
    """
    if version != state.schema.version:
        draft = state.rules.offer.drafts.get(version)
        state.bind(Schema.load(version, "agent", unstable=state.unstable, draft=draft))
    other = other_draft(state.schema.module, "params", raw)
    if other is not None:
        state.bad_input(f"initialize: {other}")
        return other
    return receipt_of(state, name) or receipt


def _params_or_reply(
    state: EngineState,
    ident: Id,
    receipt: Receipt,
    raw: msgspec.Raw | msgspec.UnsetType,
    batch: Batch | None,
) -> Any:
    """The request's params, or ``_UNKNOWN`` once it was answered with why not."""
    name = receipt.method.name
    try:
        return _decode(state, receipt, raw, False)
    except msgspec.ValidationError as exc:
        state.bad_input(f"invalid params for {name}: {exc}")
        data = validation_data(exc, "$.params", state.limits.max_error_text)
        state.reply_error(ident, INVALID_PARAMS, "Invalid params", batch, data)
    except msgspec.DecodeError:
        state.bad_input(f"params of {name} are not JSON")
        state.reply_error(ident, PARSE_ERROR, "Parse error", batch)
    except RequestError as exc:
        state.bad_input(f"params of {name} refused: {exc.message}")
        state.reply_error(ident, exc.code, exc.message, batch, exc.data)
    except RecursionError:  # a decoder that let it out: nested too deep
        state.bad_input(f"params of {name} nested too deep")
        message = "Invalid request: params nested too deep"
        state.reply_error(ident, INVALID_REQUEST, message, batch)
    return _UNKNOWN


def _accept_ext(
    state: EngineState,
    ident: Id,
    name: str,
    raw: msgspec.Raw | msgspec.UnsetType,
    batch: Batch | None,
) -> None:
    ext = getattr(state.handler_obj, "ext_method", None)
    if ext is None:
        state.reply_error(ident, METHOD_NOT_FOUND, f"Method not found: {name}", batch)
        return
    params = msgspec.json.decode(EMPTY_OBJECT if raw is msgspec.UNSET else raw)
    handler = functools.partial(ext, name)
    admit(state, ident, ExtMethod(name), params, handler, batch, size_of(raw))


def admit(
    state: EngineState,
    ident: Id,
    method: MethodSpec,
    params: Any,
    handler: Handler,
    batch: Batch | None,
    size: int,
    *,
    first: bool = False,
) -> None:
    """Run an accepted request now, or queue it (``first``: ahead of the queue)."""
    running = Running(method, getattr(params, "session_id", None))
    request = IncomingRequest(ident, running, handler, params, batch, size)
    state.running[ident] = running
    try:
        state.rules.request_received(running)
    except Exception:
        log.exception("failed to handle request %s", method.name[:64])
        finish(state, request, internal_error(ident))
        return
    if (first or state.backlog == 0) and not must_wait(state, request, 1):
        start(state, request)
    else:  # once what came before it was handled, and it may start (must_wait)
        state.waiting += 1
        state.enqueue(request, size)


def resume_initialize(state: EngineState, failure: str | None) -> None:
    """The handler object was given after ``VersionChosen``: run ``initialize``,
    or answer it -32603 (``failure``: why no handler object) or -32601."""
    awaiting, state.awaiting_handler = state.awaiting_handler, None
    if awaiting is None:
        return
    method = awaiting.method
    handler = None if failure is not None else state.handler_for(method)
    if handler is None:
        state.rules.reset()
        state.handler_obj = None
        state.handlers = {}
        state.receipts = {}
        if failure is not None:
            code, text = INTERNAL_ERROR, f"Internal error: {failure}"
        else:
            code, text = METHOD_NOT_FOUND, f"Method not found: {method.name}"
        text = clip(" ".join(text.split()), state.limits.max_error_text)
        state.reply_error(awaiting.id, code, text, awaiting.batch)
        return
    # received before whatever was queued since: it goes first
    admit(
        state,
        awaiting.id,
        method,
        awaiting.params,
        handler,
        awaiting.batch,
        awaiting.size,
        first=True,
    )
