"""The schedule point that ends every send, cheap when nothing else could run.

Every trio ``await`` is a checkpoint: it raises ``Cancelled`` if the task's
scope was cancelled, and it is a schedule point, where every other runnable
task gets to run and trio notices I/O that became ready and deadlines that
passed.  ``await conn.client.session_update(...)`` must be one too, or a
handler streaming updates starves every other task, including the one that
would read the peer's ``session/cancel``.

A real schedule point (``trio.lowlevel.cancel_shielded_checkpoint``) costs
one pass of trio's run loop, as much as the rest of sending an update.
:class:`SchedulePoint` skips the pass when it would change nothing, that is
when the pass would resume this very task at once:

- no other task is runnable: this task was alone in its batch and no task
  became runnable since the batch formed (:class:`BatchWatch`, a public
  :class:`trio.abc.Instrument`, counts the tasks trio schedules);
- this task has not run long since trio's loop last looked at I/O and
  deadlines: after ``IO_POLL_INTERVAL`` (200 us) of wall time without a
  pass, the thread's CPU time starts to be counted, and once it too passed
  ``IO_POLL_INTERVAL`` the next schedule point makes a pass.  Ready I/O (the
  peer's ``session/cancel`` included) and deadlines that pass during the batch are
  noticed that late at most, as trio itself notices them only between
  batches.  CPU time, not wall time: on a loaded machine the process may
  be descheduled for milliseconds mid-step; that is no reason to yield.
  A deadline that passed before the batch formed wakes its task (counted)
  or cancels this one (the send's ``checkpoint_if_cancelled`` raises).

Only trio's public API: the instrument hooks and ``trio.lowlevel``
checkpoints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

import trio

__all__ = ["IO_POLL_INTERVAL", "BatchWatch", "SchedulePoint"]

#: Skipped schedule points make a pass of trio's loop once this long passed
#: since the last one, in wall time and then in the thread's CPU time.
IO_POLL_INTERVAL: Final = 0.0002

_perf_counter = time.perf_counter
_thread_time = time.thread_time


class BatchWatch(trio.abc.Instrument):
    """What one trio run's batches look like, from trio's public hooks.

    ``scheduled`` counts every task trio made runnable (``task_scheduled``);
    at each pass of the loop (``after_io_wait``, when the run queue holds
    the next batch) ``size`` is how many were made runnable since the last
    pass (an upper bound on the batch: none of them can have run yet but
    the last batch's own deadline wakeups are counted again, which is
    harmless) and ``mark`` the count then: ``scheduled != mark`` while the
    batch runs means another task became runnable.  ``until`` is when the
    wall-time bound is looked at next, ``cpu`` the thread's CPU time when
    counting started (negative: not yet, in this batch).
    """

    __slots__ = ("cpu", "mark", "scheduled", "size", "until")

    def __init__(self) -> None:
        self.scheduled = 0
        self.mark = 0
        self.size = 2  # unknown until the next pass: not alone
        self.until = 0.0
        self.cpu = 0.0  # a real pass first

    def task_scheduled(self, task: trio.lowlevel.Task) -> None:
        # Called for every task trio makes runnable: one addition.
        self.scheduled += 1

    def after_io_wait(self, timeout: float) -> None:
        # Called once per pass of trio's loop: kept to a few operations.
        scheduled = self.scheduled
        self.size = scheduled - self.mark
        self.mark = scheduled
        self.until = _perf_counter() + IO_POLL_INTERVAL
        self.cpu = -1.0

    def needed(self) -> bool:
        """Whether a schedule point in the running task must make a real pass."""
        if self.scheduled != self.mark or self.size > 1:
            return True  # another task can run
        now = _perf_counter()
        if now < self.until:
            return False
        self.until = now + IO_POLL_INTERVAL  # a system call at most that often
        cpu = _thread_time()
        if self.cpu < 0:
            self.cpu = cpu  # count from here
            return False
        return cpu - self.cpu >= IO_POLL_INTERVAL


_WATCH: trio.lowlevel.RunVar[BatchWatch | None] = trio.lowlevel.RunVar(
    "acp_trio_batch_watch"
)


def batch_watch() -> BatchWatch:
    """This trio run's :class:`BatchWatch`, installed at the first call."""
    watch = _WATCH.get(None)
    if watch is None:
        watch = BatchWatch()
        trio.lowlevel.add_instrument(watch)
        _WATCH.set(watch)
    return watch


class SchedulePoint:
    """A schedule point for one connection; ``await point()``.

    See the module's docstring for the rule.  ``watch`` is the run's
    :class:`BatchWatch` once the first call (inside ``trio.run``) found it.
    """

    __slots__ = ("needed", "watch")

    def __init__(self) -> None:
        self.watch: BatchWatch | None = None
        #: Whether a real pass must be made now (if so, the caller makes it):
        #: ``if point.needed(): await trio.lowlevel.cancel_shielded_checkpoint()``
        #: is ``await point()`` without a coroutine when none is needed.  The
        #: run's ``BatchWatch.needed`` itself once the first call found it
        #: (one call per send, not two).
        self.needed: Callable[[], bool] = self._first_needed

    async def __call__(self) -> None:
        if self.needed():
            await trio.lowlevel.cancel_shielded_checkpoint()

    def _first_needed(self) -> bool:
        watch = self.watch = batch_watch()
        self.needed = watch.needed
        return watch.needed()
