"""A wake-up for tasks that wait for a state to change, with no memory while nobody waits.

The outboxes, their budget and the seam's ends each say "something changed"
to whoever waits (a reader, a putter); the waiter checks its state again.
:class:`Signal` holds an ``anyio.Event`` only while some task waits on it (an
asyncio ``Event`` allocates its waiters' deque when made, and an idle
connection holds a dozen of these), and every waiter of the moment is woken.
"""

from __future__ import annotations

import anyio

__all__ = ["Signal"]


class Signal:
    """Wakes every task waiting at the time of :meth:`wake` (nothing sticks:
    a waiter checks its state before it waits, with no await between)."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    async def wait(self) -> None:
        """Until the next :meth:`wake`."""
        event = self._event
        if event is None:
            event = self._event = anyio.Event()
        await event.wait()

    def wake(self) -> None:
        """Wake the tasks waiting now (none: nothing to do)."""
        event = self._event
        if event is not None:
            self._event = None
            event.set()
