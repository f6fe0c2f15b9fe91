"""Wire order: the ordered queue of notifications and what waits behind them.

A request runs, and a response is released to its caller, only after every
notification received before it was handled; a released caller resumes
before the notifications after its response (``ResumeOrder``); calls made by
the notification handler are exempt (it would wait for itself).  Requests
past ``max_concurrent_requests``, or behind a running ``initialize``, wait
here too.  The adapter's one consumer takes the items with
:func:`next_queued` (:class:`~acp_core.Engine`'s method of that name).
"""

from __future__ import annotations

from ._calls import release
from ._errors import METHOD_NOT_FOUND
from ._jsonrpc import clip, encode_error, encode_id
from ._records import HeldResponse, IncomingRequest, QueuedNotification
from ._requests import answer_cancelled, finish, must_wait, refuse_too_many, started
from ._state import EngineState, log

__all__ = [
    "abandon_queued",
    "next_queued",
    "notification_done",
    "queue_blocked",
    "resolve_at_start",
]


async def resolve_at_start(params: object) -> object:
    """The handler of a request accepted before its handler object was set."""
    raise AssertionError("resolved by next_queued before the request starts")


def next_queued(
    state: EngineState, done: QueuedNotification | None = None
) -> QueuedNotification | IncomingRequest | None:
    """The next item of the ordered queue for the adapter's one consumer.

    ``None`` when the queue is empty or held (``queue_blocked``: a caller
    released before it has not resumed yet).  A held response is released
    here (its caller's waiter set) and the next item returned.  A
    :class:`QueuedNotification` is handled by the consumer, which then calls
    :func:`notification_done`, or passes it here as ``done`` when it asks for
    the next item (the same, one call less per notification); an
    :class:`IncomingRequest` is run like one ``next_event`` returned.
    """
    if done is not None:
        state.backlog -= 1
    queue = state.queue
    while queue and not state.order.held:
        item = queue.popleft()
        if type(item) is QueuedNotification:
            state.queued_bytes -= item.size
            return item
        if type(item) is IncomingRequest and must_wait(state, item):
            queue.appendleft(item)  # a request finishing, or initialize, lets it go
            return None
        state.queued_bytes -= item.size
        state.backlog -= 1
        try:
            if type(item) is HeldResponse:
                release(state, item.call, item.envelope)
                continue
            assert type(item) is IncomingRequest
            state.waiting -= 1
            if _start_queued(state, item):
                return item
        except Exception:  # a bug: lose this item, keep the connection
            log.exception("failed to handle a queued message")
    return None


def _start_queued(state: EngineState, request: IncomingRequest) -> bool:
    """A request leaving the queue: may it run (``False``: answered here)."""
    if state.gate.refuse_request(
        len(state.running) - state.waiting - 1, state.waits_in_requests
    ):
        refuse_too_many(state, request)
        return False
    if request.handler is resolve_at_start:
        method = request.running.method
        handler = state.handler_for(method)
        if handler is None:
            message = clip(
                f"Method not found: {method.name}", state.limits.max_error_text
            )
            line = encode_error(encode_id(request.id), METHOD_NOT_FOUND, message)
            finish(state, request, line)
            return False
        request.handler = handler
    return started(state, request)


def notification_done(state: EngineState, item: QueuedNotification) -> None:
    """The handler of ``item`` (from :func:`next_queued`) returned or failed."""
    state.backlog -= 1


def queue_blocked(state: EngineState) -> bool:
    """The queue waits: for a released caller to resume (ResumeOrder), or its
    first item is a request that may not start yet (:func:`must_wait`)."""
    if state.order.held > 0:
        return True
    queue = state.queue
    if queue:
        head = queue[0]
        return type(head) is IncomingRequest and must_wait(state, head)
    return False


def abandon_queued(state: EngineState) -> None:
    """Answer, as cancelled, the requests still queued (a half-closed peer reads)."""
    state.waiting = 0
    for item in state.queue:
        if type(item) is IncomingRequest:
            finish(state, item, answer_cancelled(state, item))
    state.queue.clear()
