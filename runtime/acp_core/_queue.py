"""The ordered queue: notifications, and the requests and responses held behind them.

:class:`OrderedQueue` owns the queue and its counts, and keeps them in step
(its invariants, held by its methods alone):

- ``size`` is the JSON bytes of the params (or answers) of the items queued;
- ``waiting`` is the number of requests queued (accepted, not started);
- ``backlog`` is the items queued plus the notifications taken and not
  ``done`` yet (their handler runs): ``idle`` when it is zero.

Which item may leave, and when, is the engine's rule (``_ordering``); this
record only keeps the counts true (h11's ``ConnectionState`` is the model:
one object per piece of state).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from typing import Protocol

from ._flow import ResumeOrder
from ._records import HeldResponse, IncomingRequest, QueuedNotification

__all__ = ["NextQueued", "OrderedQueue", "QueueItem", "Taken"]

QueueItem = QueuedNotification | IncomingRequest | HeldResponse
Taken = QueuedNotification | IncomingRequest | None


class NextQueued(Protocol):
    """The type of ``Engine.next_queued`` (:meth:`OrderedQueue.next`)."""

    def __call__(self, done: QueuedNotification | None = None) -> Taken: ...


class OrderedQueue:
    """What waits for its turn in wire order, and its counts (see the module)."""

    __slots__ = ("backlog", "items", "order", "ordered_head", "size", "waiting")

    def __init__(self, order: ResumeOrder, ordered_head: Callable[[], Taken]) -> None:
        self.items: collections.deque[QueueItem] = collections.deque()
        self.size = 0
        self.backlog = 0
        self.waiting = 0
        #: Callers released and not resumed yet: the queue waits for them.
        self.order = order
        #: The engine's rule for a head that is no notification (a request
        #: that may start, a response to release): ``_ordering.ordered_head``.
        self.ordered_head = ordered_head

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[QueueItem]:
        return iter(self.items)

    @property
    def idle(self) -> bool:
        """Nothing queued and no notification handler running."""
        return self.backlog == 0

    def push(self, item: QueuedNotification | HeldResponse) -> None:
        """Put a notification or a held response at the end."""
        self.backlog += 1
        self.size += item.size
        self.items.append(item)

    def push_request(self, request: IncomingRequest) -> None:
        """Put an accepted request that may not start yet at the end."""
        self.backlog += 1
        self.waiting += 1
        self.size += request.size
        self.items.append(request)

    def next(self, done: QueuedNotification | None = None) -> Taken:
        """``Engine.next_queued``: the next item for the adapter's one consumer.

        ``done``: the notification it took last, its handler finished (as
        :meth:`done`).  A notification at the head is taken here; any other
        head goes to the engine's ordering rule (``ordered_head``).  ``None``:
        empty, or held (a released caller has not resumed yet).
        """
        if done is not None:
            self.backlog -= 1
        items = self.items
        if not items or self.order.held:
            return None
        head = items.popleft()
        if type(head) is QueuedNotification:
            self.size -= head.size
            return head
        items.appendleft(head)  # the engine's rule takes it, or keeps it
        return self.ordered_head()

    def head(self) -> QueueItem | None:
        """The item :meth:`take` would give, or ``None``."""
        items = self.items
        return items[0] if items else None

    def take(self) -> QueueItem:
        """Take the head (the queue is not empty).

        A notification stays in the backlog until :meth:`done`; a request
        or a held response leaves it now.
        """
        item = self.items.popleft()
        self.size -= item.size
        kind = type(item)
        if kind is not QueuedNotification:
            self.backlog -= 1
            if kind is IncomingRequest:
                self.waiting -= 1
        return item

    def done(self) -> None:
        """The handler of a notification :meth:`take` gave returned or failed."""
        self.backlog -= 1

    def clear(self) -> list[QueueItem]:
        """Empty the queue; what it held, in order."""
        items = list(self.items)
        self.items.clear()
        self.backlog -= len(items)
        self.size = 0
        self.waiting = 0
        return items
