"""An incoming request's life once accepted: when it may start, its answer, its end.

The functions take the engine's state (:class:`~acp_core._state.EngineState`)
and are :class:`~acp_core.Engine`'s methods of the same names: an adapter
runs ``await request.handler(request.params)``, turns the outcome into a
line with :func:`answer` / :func:`answer_exception` / :func:`answer_cancelled`,
then gives it to :func:`request_done` for the bytes to write.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ._errors import INTERNAL_ERROR, REQUEST_CANCELLED, RequestError, method_not_found
from ._jsonrpc import clip, encode_error, encode_id, encode_result
from ._outgoing import check_outgoing_message
from ._records import ExtMethod, IncomingRequest, resolve_at_start
from ._state import EngineState, internal_error, log

__all__ = [
    "answer",
    "answer_cancelled",
    "answer_exception",
    "finish",
    "must_wait",
    "refuse_too_many",
    "request_done",
    "start",
    "started",
]


def must_wait(state: EngineState, request: IncomingRequest, new: int = 0) -> bool:
    """Whether ``request`` (accepted, in ``running``) may not start yet.

    It waits while the rules hold it (the agent's ``initialize`` runs) and
    while ``max_concurrent_requests`` others run; not when one of those
    waits for the peer (``ReadGate.refuse_request``: it is refused at its
    start, the answer awaited may be behind it).  ``new``: 1 when it is not
    counted in ``waiting`` yet.
    """
    if state.rules.holds(request.running.method):
        return True
    others = len(state.running) - state.queue.waiting - new
    return others >= state.gate.max_requests and not state.calls.in_requests


def start(state: EngineState, request: IncomingRequest) -> None:
    """``request`` may run now: the next event (unless the rules refuse it)."""
    if started(state, request):
        state.emit(request)


def started(state: EngineState, request: IncomingRequest) -> bool:
    """The side's rules at a request's start, and its handler if it was held
    before the handler object was set (``False``: answered already)."""
    try:
        running = request.running
        state.rules.request_started(running)
        if request.handler is resolve_at_start:
            handler = state.handler_for(running.method)
            if handler is None:
                raise method_not_found(running.method.name)
            request.handler = handler
    except RequestError as exc:  # not initialized after all, or no handler
        line = encode_error(encode_id(request.id), exc.code, exc.message, exc.data)
        finish(state, request, line)
        return False
    except Exception:
        log.exception("failed to start request %s", request.running.method.name)
        finish(state, request, internal_error(request.id))
        return False
    return True


def refuse_too_many(state: EngineState, request: IncomingRequest) -> None:
    """Answer ``request`` -32603: at the bound while a handler waits for the peer."""
    limit = state.limits.max_concurrent_requests
    name = request.running.method.name
    log.warning("refused %s: %d requests running", clip(name, 64), limit)
    line = encode_error(
        encode_id(request.id),
        INTERNAL_ERROR,
        "Too many concurrent requests",
        {"maxConcurrentRequests": limit},
    )
    finish(state, request, line)


def answer(state: EngineState, request: IncomingRequest, result: Any) -> bytes:
    """The line answering ``request`` whose handler returned ``result``.

    The result is checked against the method's result type (a mismatch is
    answered -32603 and logged); a session-cancelled request that returned
    normally is answered as cancelled, its other fields kept.
    """
    running = request.running
    eid = encode_id(request.id)
    try:
        data = (
            state.rules.cancelled_result(state.schema, running, result)
            if running.cancel_reason == "session"
            else None
        )
        if data is None:
            method = running.method
            if isinstance(method, ExtMethod):
                data = msgspec.json.encode(result)
            else:
                data = state.schema.encode(state.rules.answer(method, result))
                if state.check_outgoing:
                    check_outgoing_message(
                        state.schema, method.result, data, method.name, "result"
                    )
        return encode_result(eid, data)
    except Exception as exc:
        return answer_exception(state, request, exc)


def answer_exception(
    state: EngineState, request: IncomingRequest, exc: BaseException
) -> bytes:
    """The line answering ``request`` whose handler raised ``exc``.

    A :class:`RequestError` is sent as is; anything else is logged and
    answered -32603 without its text; a cancelled request is answered as
    cancelled whatever its handler raised.
    """
    running = request.running
    if running.cancel_reason is not None:
        return answer_cancelled(state, request)
    eid = encode_id(request.id)
    if isinstance(exc, RequestError):
        try:
            return encode_error(eid, exc.code, exc.message, exc.data)
        except Exception:
            log.exception("unencodable RequestError from %s", running.method.name)
    else:
        log.error("handler for %s failed", running.method.name, exc_info=exc)
    return encode_error(eid, INTERNAL_ERROR, "Internal error")


def answer_cancelled(state: EngineState, request: IncomingRequest) -> bytes:
    """The line answering a cancelled ``request`` (-32800, or the session-cancel result)."""
    running = request.running
    eid = encode_id(request.id)
    data = (
        state.rules.cancelled_result(state.schema, running)
        if running.cancel_reason == "session"
        else None
    )
    if data is not None:
        return encode_result(eid, data)
    code = state.schema.request_cancelled_code or REQUEST_CANCELLED
    return encode_error(eid, code, "Request cancelled")


def request_done(
    state: EngineState, request: IncomingRequest, line: bytes | None
) -> bytes | None:
    """Forget ``request``; the bytes to write for ``line`` (its answer), if any.

    ``line`` ``None``: no answer (the connection is closing).  A batch
    member's answer is held until the whole batch's array is complete.
    """
    running = request.running
    state.running.remove(request.id, running)
    try:
        state.rules.request_finished(running)
    except Exception:
        log.exception("request_finished failed for %s", running.method.name)
    if line is None or state.closed:
        return None
    batch = request.batch
    if batch is not None:
        return batch.add(line)
    return line


def finish(state: EngineState, request: IncomingRequest, line: bytes) -> None:
    """:func:`request_done` for an answer the engine built: to the outbox."""
    out = request_done(state, request, line)
    if out is not None:
        state.send(out)
