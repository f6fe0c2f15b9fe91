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
   (``rule.check``); a failure answers -32602 (a notification is dropped),
   except that a notification naming a variant our schema lacks (a peer on
   a newer spec, :mod:`acp_core._newer`) goes to the handler object's
   ``unknown_variant``, queued as any notification;
4. a watched notification is shown to the rules (``rule.watched``:
   ``session/cancel`` acts at once); ``$/cancel_request`` cancels here;
5. a notification is queued (``_ordering``); a request is admitted: it
   starts now, or waits in the queue behind notifications, behind
   ``initialize``, or for a slot (``_requests.must_wait``).
"""

from __future__ import annotations

import functools
from typing import Any, Final

import msgspec

from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RequestError,
    method_not_found,
)
from ._jsonrpc import Envelope, Id, clip
from ._newer import UNKNOWN_VARIANT_HANDLER, read_unknown_variant, variant_data
from ._records import (
    Batch,
    ExtMethod,
    Handler,
    IncomingRequest,
    QueuedNotification,
    Running,
    VersionChosen,
    resolve_at_start,
)
from ._schema import MethodSpec, other_draft
from ._state import (
    EMPTY_OBJECT,
    AwaitingHandler,
    EngineState,
    Receipt,
    internal_error,
    log,
    size_of,
    validation_data,
)

__all__ = [
    "admit",
    "on_notification",
    "on_request",
    "resume_initialize",
]

_UNKNOWN: Final[Any] = object()
#: The strict decoder refused the params (``_decode``: the lenient rules next).
_REFUSED: Final[Any] = object()


def _decode(
    state: EngineState,
    receipt: Receipt,
    data: bytes | msgspec.Raw,
    notification: bool,
    params: Any = _UNKNOWN,
) -> Any:
    """The params of one message (``data``: ``{}`` when absent), decoded into
    its type and checked: the strict decoder first (``params``: what it gave,
    or ``_REFUSED``, when the caller ran it), the schema's lenient rules if
    it refuses; then
    the side's receiver rules (absolute paths, elicitation modes:
    :class:`RequestError` -32602) where the row says ``check``.
    """
    if notification:
        decode, type_ = receipt.notification_decode, receipt.notification_type
    else:
        decode, type_ = receipt.request_decode, receipt.request_type
    if params is _UNKNOWN:
        try:
            params = decode(data)
        except Exception:
            params = _REFUSED
    if params is _REFUSED:  # the lenient rules may accept it, else the error
        params = state.schema.decode(data, type_)
    if receipt.rule.check:
        state.rules.check_received(state.schema, receipt.method, params)
    return params


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
        receipt = state.receipts.get(name) or state.receipt(name)
        if receipt is None:
            _not_in_schema(state, name, env.params)
            return
        raw = env.params
        try:  # the strict pass (absent params: a TypeError, read as {} below)
            params = receipt.notification_decode(raw)
            size = len(raw)  # type: ignore[arg-type]
        except Exception:
            params, size = _REFUSED, size_of(raw)
        if params is _REFUSED or receipt.rule.check:
            data = EMPTY_OBJECT if raw is msgspec.UNSET else raw
            try:
                params = _decode(state, receipt, data, True, params)
            except Exception as exc:  # msgspec's, RequestError, RecursionError
                type_ = receipt.notification_type
                variant = read_unknown_variant(name, "notification", type_, data, exc)
                if variant is None:
                    state.bad_input(
                        f"notification {name} dropped, invalid params: {exc}"
                    )
                    return
                state.newer_peer(variant)
                newer = getattr(state.handler_obj, UNKNOWN_VARIANT_HANDLER, None)
                if newer is not None:  # in its place among the notifications
                    state.queue.push(QueuedNotification(name, newer, variant, size))
                return
        if receipt.rule.watched:
            rules.notification_received(receipt.method, params)
        handler = receipt.handler
        if handler is None:
            log.debug("no handler for notification %s", name)
            return
        state.queue.push(QueuedNotification(name, handler, params, size))
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
            handler = functools.partial(ext, name)
            state.queue.push(QueuedNotification(name, handler, params, size_of(raw)))
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
    waits = state.calls.in_requests
    if waits and state.gate.refuse_request(
        len(state.running) - state.queue.waiting, waits
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
        state.refuse(ident, refusal, batch)
        return
    receipt = state.receipt(name)
    if receipt is None:
        if name.startswith("_"):
            _accept_ext(state, ident, name, raw, batch)
        else:
            state.refuse(ident, method_not_found(name), batch)
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
        state.await_handler(AwaitingHandler(ident, method, params, batch, size_of(raw)))
        state.emit(VersionChosen(version))
        return
    # held (behind initialize): its handler object may come later (a batch)
    handler = resolve_at_start if rules.holds(method) else receipt.handler
    if handler is None:
        state.refuse(ident, method_not_found(name), batch)
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
        state.speak(version)
    other = other_draft(state.schema.module, "params", raw)
    if other is not None:
        state.bad_input(f"initialize: {other}")
        return other
    return state.receipt(name) or receipt


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
        return _decode(
            state, receipt, EMPTY_OBJECT if raw is msgspec.UNSET else raw, False
        )
    except msgspec.ValidationError as exc:
        limit = state.limits.max_error_text
        body = EMPTY_OBJECT if raw is msgspec.UNSET else raw
        variant = read_unknown_variant(name, "request", receipt.request_type, body, exc)
        if variant is not None:  # a peer on a newer spec: -32602 naming it
            state.newer_peer(variant)
            data: Any = variant_data(variant, "$.params", limit)
        else:
            state.bad_input(f"invalid params for {name}: {exc}")
            data = validation_data(exc, "$.params", limit)
        state.reply_error(ident, INVALID_PARAMS, "Invalid params", batch, data)
    except msgspec.DecodeError:
        state.bad_input(f"params of {name} are not JSON")
        state.reply_error(ident, PARSE_ERROR, "Parse error", batch)
    except RequestError as exc:
        state.bad_input(f"params of {name} refused: {exc.message}")
        state.refuse(ident, exc, batch)
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
        state.refuse(ident, method_not_found(name), batch)
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
    state.running.add(ident, running)
    try:
        state.rules.request_received(running)
    except Exception:
        log.exception("failed to handle request %s", method.name[:64])
        state.finish(request, internal_error(ident))
        return
    if (first or state.queue.idle) and not state.must_wait(request, 1):
        state.start(request)
    else:  # once what came before it was handled, and it may start (must_wait)
        state.queue.push_request(request)


def resume_initialize(state: EngineState, failure: str | None) -> None:
    """The handler object was given after ``VersionChosen``: run ``initialize``,
    or answer it -32603 (``failure``: why no handler object) or -32601."""
    awaiting = state.await_handler(None)
    if awaiting is None:
        return
    method = awaiting.method
    handler = None if failure is not None else state.handler_for(method)
    if handler is None:
        state.rules.reset()
        state.use_handler_object(None)
        if failure is not None:  # one line
            text = " ".join(failure.split())
            error = RequestError(INTERNAL_ERROR, f"Internal error: {text}")
        else:
            error = method_not_found(method.name)
        state.refuse(awaiting.id, error, awaiting.batch)
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
