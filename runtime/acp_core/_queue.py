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
from collections.abc import Iterator

from ._records import HeldResponse, IncomingRequest, QueuedNotification

__all__ = ["OrderedQueue", "QueueItem"]

QueueItem = QueuedNotification | IncomingRequest | HeldResponse


class OrderedQueue:
    """What waits for its turn in wire order, and its counts (see the module)."""

    __slots__ = ("backlog", "items", "size", "waiting")

    def __init__(self) -> None:
        self.items: collections.deque[QueueItem] = collections.deque()
        self.size = 0
        self.backlog = 0
        self.waiting = 0

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
