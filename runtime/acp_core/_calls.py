"""Calls of ours and their answers: ids, the pending table, correlation, release.

The functions take the engine's state and are :class:`~acp_core.Engine`'s
methods of the same names.  A call is registered with an id
(:func:`start_call`), its answer found by that id (:func:`on_response`),
decoded into the method's result type and released to its caller in wire
order (:func:`release`: held behind notifications received before it; a
released caller resumes before what came after, ``ResumeOrder``); a caller
that leaves early gets the ``$/cancel_request`` line to write
(:func:`call_finished`).  The client's version negotiation runs when the
``initialize`` answer arrives (``ClientRules.response_received``).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    ConnectionClosed,
    ProtocolVersionError,
    RequestError,
)
from ._jsonrpc import (
    Envelope,
    Id,
    clip,
    decode_error,
    encode_notification,
    encode_request,
)
from ._newer import (
    UnknownVariant,
    UnknownVariantError,
    read_unknown_variant,
    variant_data,
)
from ._outgoing import check_outgoing_message
from ._records import (
    ORIGIN_USER,
    Call,
    CloseConnection,
    ExtMethod,
    HeldResponse,
    Settable,
    VersionChosen,
)
from ._schema import MethodSpec
from ._state import EMPTY_OBJECT, EngineState, log, size_of, validation_data

__all__ = [
    "call_finished",
    "ext_notification",
    "fail_call",
    "forward_notification",
    "notification",
    "on_response",
    "release",
    "start_call",
    "start_ext_call",
]

_NULL: Final = b"null"


# -- outgoing ----------------------------------------------------------------------


def _outgoing_params(state: EngineState, method: MethodSpec, params: Any) -> bytes:
    """``params`` encoded for ``method``, after the side's rules on what it may
    send (a :class:`~acp_core.CapabilityError`) and, when on, the schema check
    of what is sent."""
    schema = state.schema
    state.rules.check_outgoing(schema, method, params)
    data = schema.encode(params)
    if state.check_outgoing:
        check_outgoing_message(schema, method.params, data, method.name, "params")
    return data


def start_call(
    state: EngineState,
    method: MethodSpec,
    params: Any,
    waiter: Settable,
    origin: int = ORIGIN_USER,
) -> Call:
    """Register an outgoing request; ``call.line`` is its frame to write.

    Raises :class:`~acp_core.CapabilityError` (the peer did not advertise
    it) or :class:`~acp_core.ConnectionClosed`, nothing registered.  The
    side's bookkeeping of sent calls runs here: write ``call.line`` right
    away (after waiting for write space, if any).
    """
    if state.closed or state.eof:
        raise ConnectionClosed("connection closed")
    schema = state.schema
    data = _outgoing_params(state, method, params)
    ident = state.calls.new_id()
    line = encode_request(ident, schema.wire_names[method.name], data)
    call = Call(ident, method, params, line, waiter, origin)
    state.calls.register(call)
    state.rules.sent(schema, method, params)
    return call


def start_ext_call(
    state: EngineState,
    name: str,
    params: Any,
    waiter: Settable,
    origin: int = ORIGIN_USER,
) -> Call:
    """:func:`start_call` for a ``_``-prefixed extension method (result as builtins)."""
    if not name.startswith("_"):
        raise ValueError("extension method names start with '_'")
    if state.closed or state.eof:
        raise ConnectionClosed("connection closed")
    ident = state.calls.new_id()
    line = encode_request(ident, msgspec.json.encode(name), state.schema.encode(params))
    call = Call(ident, ExtMethod(name), params, line, waiter, origin)
    state.calls.register(call)
    return call


def call_finished(state: EngineState, call: Call) -> bytes | None:
    """The caller of ``call`` resumed (answered) or left (cancelled, failed).

    Returns the ``$/cancel_request`` line to write when it left before its
    answer and this version has one.  Afterwards ``queue_blocked`` may have
    turned false: wake the consumer.
    """
    line = None
    if state.calls.left(call):  # left before its answer
        line = _cancel_request_line(state, call.id)
    if call.resumed():  # released: what came after it may be handled now
        state.order.resume()
    try:
        state.rules.call_finished(call)
    except Exception:
        log.exception("call_finished failed for %s", call.method.name)
    return line


def _cancel_request_line(state: EngineState, ident: int) -> bytes | None:
    schema = state.schema
    cancel = schema.cancel_request
    if cancel is None or state.closed:
        return None
    params = schema.decode(b'{"requestId":%d}' % ident, cancel.params)
    return encode_notification(schema.wire_names[cancel.name], schema.encode(params))


def notification(state: EngineState, method: MethodSpec, params: Any) -> bytes:
    """The frame of the notification ``method``; write it right away.

    Raises :class:`~acp_core.CapabilityError` or
    :class:`~acp_core.ConnectionClosed`.
    """
    if state.closed:
        raise ConnectionClosed("connection closed")
    schema = state.schema
    data = _outgoing_params(state, method, params)
    line = encode_notification(schema.wire_names[method.name], data)
    state.rules.sent(schema, method, params)
    return line


def ext_notification(state: EngineState, name: str, params: Any) -> bytes:
    """The frame of the ``_``-prefixed extension notification ``name``."""
    if not name.startswith("_"):
        raise ValueError("extension notification names start with '_'")
    if state.closed:
        raise ConnectionClosed("connection closed")
    return encode_notification(msgspec.json.encode(name), state.schema.encode(params))


def forward_notification(state: EngineState, variant: UnknownVariant) -> bytes:
    """The frame of a notification received naming an unknown variant (an
    :class:`~acp_core.UnknownVariant`), its params sent on byte for byte.

    Its method must be one this side sends in the version spoken (a proxy
    hands an agent's ``session/update`` on to its client), else
    :class:`ValueError`; :class:`~acp_core.ConnectionClosed` once closed.
    """
    if variant.where != "notification":
        raise ValueError(f"only a notification is forwarded, not a {variant.where}")
    schema = state.schema
    method = schema.outgoing.get(variant.method)
    if method is None or (method.result is not None and method.notification is None):
        raise ValueError(
            f"{clip(variant.method, state.limits.max_error_text)} is no "
            f"notification this side sends in protocol v{schema.version}"
        )
    if state.closed:
        raise ConnectionClosed("connection closed")
    return encode_notification(schema.wire_names[method.name], variant.params)


# -- answers to them -----------------------------------------------------------


def on_response(state: EngineState, env: Envelope) -> None:
    """A response arrived: find its call; release it now or behind the queue."""
    ident = env.id
    call = None if isinstance(ident, msgspec.UnsetType) else state.calls.answered(ident)
    if call is None:  # a call cancelled here, or a peer's mistake
        log.info(
            "dropping response to unknown request id %s",
            clip(repr(env.id), state.limits.max_error_text),
        )
        return
    if env.result is not msgspec.UNSET and not _negotiated(state, call, env.result):
        return
    if call.exempt or state.queue.idle:
        release(state, call, env)
    else:
        size = size_of(env.result if env.error is msgspec.UNSET else env.error)
        state.queue.push(HeldResponse(call, env, size))


def _negotiated(state: EngineState, call: Call, result: msgspec.Raw) -> bool:
    """The rules' version step on a result (``False``: the call failed here)."""
    rules = state.rules
    try:
        version = rules.response_received(state.schema, call, result)
    except ProtocolVersionError as exc:
        call.fail(exc)
        state.emit(CloseConnection(str(exc)))
        return False
    except Exception:
        log.exception("failed to handle the response to %s", call.method.name)
        call.fail(RequestError(INTERNAL_ERROR, "Internal error"))
        return False
    if version is not None and version != state.schema.version:
        state.speak(version)
        call.respoken(state.schema.outgoing[call.method.name])
        rules.advertised(state.schema)
        state.emit(VersionChosen(version))
    return True


def release(state: EngineState, call: Call, env: Envelope) -> None:
    """Decode the answer to ``call`` and wake its caller."""
    if call.answered:
        return
    value: Any = None
    failure: BaseException | None
    try:
        if env.error is not msgspec.UNSET:
            failure = decode_error(env.error)
        else:
            value, failure = _decode_result(
                state,
                call.method,
                env.result,  # type: ignore[arg-type]
            )
    except Exception:
        log.exception("failed to decode the response to %s", call.method.name)
        value, failure = None, RequestError(INTERNAL_ERROR, "Internal error")
    call.settle(value, failure)
    try:
        state.rules.call_released(call)
    except Exception:
        log.exception("failed to apply the response to %s", call.method.name)
    if call.wake():  # its caller runs before what came after
        state.order.hold()


def _decode_result(
    state: EngineState, method: MethodSpec, raw: msgspec.Raw
) -> tuple[Any, BaseException | None]:
    result_type = method.result
    if result_type is None or isinstance(method, ExtMethod):
        return msgspec.json.decode(raw), None
    schema = state.schema
    try:
        return schema.decode(raw, result_type), None
    except msgspec.ValidationError as exc:
        if bytes(raw).strip() == _NULL:  # `"result": null` reads as the empty response
            try:
                return schema.decode(EMPTY_OBJECT, result_type), None
            except msgspec.ValidationError:
                pass
        limit = state.limits.max_error_text
        variant = read_unknown_variant(method.name, "result", result_type, raw, exc)
        if variant is not None:  # a peer on a newer spec
            state.newer_peer(variant)
            data = variant_data(variant, "$.result", limit)
            return None, UnknownVariantError(variant, data)
        err = RequestError(
            INVALID_PARAMS,
            "Invalid result from peer",
            validation_data(exc, "$.result", limit),
        )
        state.bad_input(f"invalid result for {method.name}: {exc}")
        return None, err


def fail_call(state: EngineState, ident: Id, message: str) -> None:
    """Fail the call of ours ``ident`` answers (an answer that was no valid message)."""
    call = state.calls.answered(ident)
    if call is not None:
        call.fail(RequestError(INVALID_REQUEST, message))
