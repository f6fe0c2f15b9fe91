"""Wire order: the ordered queue of notifications and what waits behind them.

A request runs, and a response is released to its caller, only after every
notification received before it was handled; a released caller resumes
before the notifications after its response (``ResumeOrder``); calls made by
the notification handler are exempt (it would wait for itself).  Requests
past ``max_concurrent_requests``, or behind a running ``initialize``, wait
here too.  The adapter's one consumer takes the items with
:class:`~acp_core.Engine`'s ``next_queued`` (``OrderedQueue.next``: a
notification is taken there, any other head by :func:`ordered_head`).
"""

from __future__ import annotations

from ._records import HeldResponse, IncomingRequest, QueuedNotification
from ._state import EngineState, log

__all__ = [
    "abandon_queued",
    "notification_done",
    "ordered_head",
    "queue_blocked",
]


def ordered_head(state: EngineState) -> QueuedNotification | IncomingRequest | None:
    """The queue's head is a request or a held response (``OrderedQueue.next``).

    A held response is released here (its caller's waiter set) and what
    follows it is taken, until an item for the consumer: a request that may
    start (run like one ``next_event`` returned) or a notification.
    ``None`` when the queue is empty, held (a caller released before it has
    not resumed yet: ``ResumeOrder``), or its head is a request that may not
    start yet (:func:`must_wait`).
    """
    queue = state.queue
    items, order = queue.items, state.order
    while items and not order.held:
        head = items[0]
        if type(head) is IncomingRequest and state.must_wait(head):
            return None  # a request finishing, or initialize, lets it go
        item = queue.take()
        if type(item) is QueuedNotification:
            return item
        try:
            if type(item) is HeldResponse:
                state.release(item.call, item.envelope)
                continue
            assert type(item) is IncomingRequest
            if _start_queued(state, item):
                return item
        except Exception:  # a bug: lose this item, keep the connection
            log.exception("failed to handle a queued message")
    return None


def _start_queued(state: EngineState, request: IncomingRequest) -> bool:
    """A request leaving the queue: may it run (``False``: answered here)."""
    if state.gate.refuse_request(
        len(state.running) - state.queue.waiting - 1, state.calls.in_requests
    ):
        state.refuse_too_many(request)
        return False
    return state.started(request)


def notification_done(state: EngineState, item: QueuedNotification) -> None:
    """The handler of ``item`` (from ``next_queued``) returned or failed."""
    state.queue.done()


def queue_blocked(state: EngineState) -> bool:
    """The queue waits: for a released caller to resume (ResumeOrder), or its
    first item is a request that may not start yet (:func:`must_wait`)."""
    if state.order.held > 0:
        return True
    head = state.queue.head()
    return type(head) is IncomingRequest and state.must_wait(head)


def abandon_queued(state: EngineState) -> None:
    """Answer, as cancelled, the requests still queued (a half-closed peer reads)."""
    for item in state.queue.clear():
        if type(item) is IncomingRequest:
            state.finish(item, state.answer_cancelled(item))
