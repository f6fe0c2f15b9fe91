"""A wake-up for tasks that wait for a state to change, with no memory while nobody waits.

The outboxes, their budget and the seam's ends each say "something changed"
to whoever waits (a reader, a putter); the waiter checks its state again.
:class:`Signal` holds something only while some task waits on it, and every
waiter of the moment is woken.  An idle connection has a few waiters at all
times (each SSE reader, its pump), so what one wait holds counts: under
asyncio it is one future of the loop (an ``anyio.Event`` is an
``asyncio.Event`` and its waiters' deque, about 1.5 KiB a waiter with the
wait's own future); under trio it is an ``anyio.Event``, a ``trio.Event``
(its parking lot: a few hundred bytes).  Either way the waiter is cancelled
by anyio's cancel scopes as at any await.
"""

from __future__ import annotations

import asyncio

import anyio
import sniffio

__all__ = ["Signal"]


class Signal:
    """Wakes every task waiting at the time of :meth:`wake` (nothing sticks:
    a waiter checks its state before it waits, with no await between)."""

    __slots__ = ("_event", "_futures")

    def __init__(self) -> None:
        self._event: anyio.Event | None = None  # trio's waiters
        self._futures: list[asyncio.Future[None]] | None = None  # asyncio's

    async def wait(self) -> None:
        """Until the next :meth:`wake`."""
        if sniffio.current_async_library() != "asyncio":
            event = self._event
            if event is None:
                event = self._event = anyio.Event()
            await event.wait()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        futures = self._futures
        if futures is None:
            futures = self._futures = []
        futures.append(future)
        try:
            await future
        finally:
            if not future.done() or future.cancelled():
                # cancelled: the list may still hold it (not woken yet)
                if self._futures is futures and future in futures:
                    futures.remove(future)
                    if not futures:
                        self._futures = None

    def wake(self) -> None:
        """Wake the tasks waiting now (none: nothing to do)."""
        event = self._event
        if event is not None:
            self._event = None
            event.set()
        futures = self._futures
        if futures is not None:
            self._futures = None
            for future in futures:
                if not future.done():
                    future.set_result(None)
