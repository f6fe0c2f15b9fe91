"""Handlers run one step at a time: the adapter's one trampoline.

A handler (a coroutine) is stepped by hand rather than awaited, so that its
first step runs in the task that took it from the engine, and so that what it
sends while a step runs is only queued (:attr:`HandlerSteps.stepping`) and
leaves in one write when the step yields to trio or returns: the peer wakes
once per burst.
"""

from __future__ import annotations

import contextvars
import types
from collections.abc import Generator
from typing import Any

from ._framing import LineWriter
from ._pool import RETURNED

__all__ = ["HandlerSteps"]


class HandlerSteps:
    """Steps handlers in their contexts; owns whether one is stepping."""

    __slots__ = ("_writer", "stepping")

    def __init__(self, writer: LineWriter) -> None:
        self._writer = writer
        #: a handler's step is running: its sends are queued, flushed after
        self.stepping = False

    def step(
        self,
        coro: Generator[Any, Any, Any],
        context: contextvars.Context,
        value: Any = None,
        error: BaseException | None = None,
    ) -> Any:
        """Run one step of a handler in its ``context``: what it yields to trio.

        ``StopIteration`` when it returned; but a first step given
        ``RETURNED`` as ``value`` (a notification's: its result is not
        wanted) returns ``RETURNED`` then, as ``next(coro, RETURNED)`` does
        without building an exception for a ``None`` result.  While the step
        runs its sends are only queued (:attr:`stepping`); the caller flushes
        them.
        """
        self.stepping = True
        try:
            if error is not None:
                return context.run(coro.throw, error)
            if value is RETURNED:
                return context.run(next, coro, RETURNED)
            return context.run(coro.send, value)
        finally:
            self.stepping = False

    @types.coroutine
    def drive(
        self, coro: Generator[Any, Any, Any], context: contextvars.Context, trap: Any
    ) -> Generator[Any, Any, Any]:
        """Await the rest of a handler whose step yielded ``trap``.

        The one trampoline: what trio sends or throws goes into ``coro``,
        what ``coro`` yields goes to trio, after the sends of each step
        were flushed.
        """
        writer = self._writer
        while True:
            writer.flush()
            try:
                value, error = (yield trap), None
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # Cancelled and the like: into coro
                value, error = None, exc
            try:
                trap = self.step(coro, context, value, error)
            except StopIteration as done:  # the caller queues the answer, flushes
                return done.value
