"""The schedule point that ends every send, cheap when nothing else could run.

Every trio ``await`` is a checkpoint: it raises ``Cancelled`` if the task's
scope was cancelled, and it is a schedule point, where every other runnable
task gets to run and trio notices I/O that became ready and deadlines that
passed.  ``await conn.client.session_update(...)`` must be one too, or a
handler streaming updates starves every other task, including the one that
would read the peer's ``session/cancel``.

A real schedule point (``trio.lowlevel.cancel_shielded_checkpoint``) costs
one pass of trio's run loop: ~8 us on the machine of ``bench/``, as much as
the rest of sending an update.  :class:`SchedulePoint` skips the pass when it
would change nothing, that is when the pass would resume this very task at
once:

- no other task is runnable: none became runnable since the current batch
  of tasks started (trio's run queue is empty), and this task was alone in
  its batch (counted by :class:`BatchWatch`, an instrument, when the batch
  formed: tasks later in the same batch are not in the run queue);
- no deadline has passed (a timeout or ``move_on_after`` must fire);
- no I/O is ready: the I/O manager's own descriptor (epoll / kqueue: it is
  readable when any registered event is, and polling it consumes nothing)
  and ``input_fd``, the connection's input, which no task waits on while the
  reading task runs a handler's first step (``Connection._run_inline``).
  That poll is a system call (~1.3 us), made only when neither trio's loop
  nor another such poll looked in the last ``IO_POLL_INTERVAL`` (200 us):
  ready I/O is noticed that late at most, as trio itself notices it only
  between batches.

Anything else makes a real pass.  This reads trio's private run state
(``trio._core._run``: the run queue, deadlines, I/O manager), read-only;
where it is not what this expects (another trio version, guest mode,
Windows) or the input is no file descriptor, every call is a real pass.
"""

from __future__ import annotations

import select
import time
from typing import Any, Final

import trio

__all__ = [
    "FAST_CANCEL_CHECK",
    "IO_POLL_INTERVAL",
    "BatchWatch",
    "SchedulePoint",
    "cancel_pending",
]

#: Longest time skipped schedule points go without polling for ready I/O.
IO_POLL_INTERVAL: Final = 0.0002

_perf_counter = time.perf_counter


def _run_context() -> Any:
    """trio's private run state (read-only), or None on a trio without it."""
    try:
        from trio._core import _run  # pyright: ignore[reportPrivateUsage]
    except ImportError:  # pragma: no cover (another trio: real passes)
        return None
    return getattr(_run, "GLOBAL_RUN_CONTEXT", None)


_RUN_CONTEXT: Any = _run_context()


def _cancel_check_supported() -> bool:
    """Whether :func:`cancel_pending` can read trio's task state here."""
    try:
        import attrs
        from trio._core._run import (  # pyright: ignore[reportPrivateUsage]
            CancelStatus,
            Runner,
            Task,
        )

        fields = {f.name for f in attrs.fields(Task)}
        runner = {f.name for f in attrs.fields(Runner)}
        status = {f.name for f in attrs.fields(CancelStatus)}
    except Exception:  # pragma: no cover (another trio)
        return False
    return (
        _RUN_CONTEXT is not None
        and {"_cancel_status", "_runner", "_cancel_points"} <= fields
        and "main_task" in runner
        and "effectively_cancelled" in status
    )


#: Whether sends may check for cancellation without a coroutine call.
FAST_CANCEL_CHECK: Final = _cancel_check_supported()


def cancel_pending() -> bool:
    """``checkpoint_if_cancelled``'s test, without its coroutine; counts the checkpoint.

    ``True``: the caller must ``await trio.lowlevel.checkpoint_if_cancelled()``
    (the task is cancelled, or is the main task, which may have a
    KeyboardInterrupt pending: trio decides).  ``False``: not cancelled,
    and the checkpoint is counted as trio counts it.  Only where
    :data:`FAST_CANCEL_CHECK`.
    """
    task = _RUN_CONTEXT.task
    if task._cancel_status.effectively_cancelled or task is task._runner.main_task:
        return True
    task._cancel_points += 1
    return False


class BatchWatch(trio.abc.Instrument):
    """Counts the tasks of each batch as it forms (one per trio run).

    Called after trio's I/O wait, when the run queue holds what the next
    batch will run, less the tasks a deadline passing now wakes: one more
    is counted then, to be safe.
    """

    __slots__ = ("clock", "heap", "polled", "runq", "size")

    def __init__(self, runner: Any) -> None:
        self.runq = runner.runq
        self.heap = runner.deadlines._heap  # (deadline, id, scope); stale ones too
        self.clock = runner.clock
        self.size = 2  # unknown until the next batch: not alone
        self.polled = 0.0  # when I/O was last polled, by trio or a SchedulePoint

    def after_io_wait(self, timeout: float) -> None:
        # Called once per pass of trio's loop: kept to a few operations.
        self.polled = _perf_counter()
        # (a stale head of the heap makes it count one too many: harmless)
        heap = self.heap
        if heap and heap[0][0] <= self.clock.current_time():
            self.size = len(self.runq) + 1
        else:
            self.size = len(self.runq)


_WATCH: trio.lowlevel.RunVar[BatchWatch | None] = trio.lowlevel.RunVar(
    "acp_trio_batch_watch"
)


class SchedulePoint:
    """A schedule point for one connection; ``await point()``.

    ``input_fd``: the descriptor the connection reads, or ``None`` (then
    every call is a real pass).  See the module's docstring for the rule.
    """

    __slots__ = ("_input_fd", "_poller", "watch")

    def __init__(self, input_fd: int | None = None) -> None:
        self._input_fd = input_fd
        self._poller: Any = _UNRESOLVED  # built at the first call, inside trio.run
        #: The run's BatchWatch, once resolved (None: every call is a real pass).
        self.watch: BatchWatch | None = None

    @property
    def fast(self) -> bool:
        """Whether passes can be skipped here (known after the first call)."""
        return self._poller not in (None, _UNRESOLVED)

    async def __call__(self) -> None:
        if self.needed():
            await trio.lowlevel.cancel_shielded_checkpoint()

    def needed(self) -> bool:
        """Whether a real pass must be made now (if so, the caller makes it).

        ``if point.needed(): await trio.lowlevel.cancel_shielded_checkpoint()``
        is ``await point()`` without a coroutine when none is needed.
        """
        watch = self.watch
        if watch is None:
            if self._poller is not _UNRESOLVED or self._resolve() is None:
                return True
            watch = self.watch
            assert watch is not None
        if watch.runq or watch.size > 1:  # another task can run
            return True
        heap = watch.heap  # its head may be stale: then one pass too many
        if heap and heap[0][0] <= watch.clock.current_time():
            return True
        now = _perf_counter()
        if now - watch.polled < IO_POLL_INTERVAL:
            return False
        watch.polled = now
        return bool(self._poller.poll(0))

    def _resolve(self) -> Any:
        self._poller = None
        if self._input_fd is None or not hasattr(select, "poll"):
            return None
        try:
            runner = _RUN_CONTEXT.runner
            if runner.is_guest:
                return None
            manager = runner.io_manager
            selector = getattr(manager, "_epoll", None) or getattr(
                manager, "_kqueue", None
            )
            io_fd = selector.fileno()  # type: ignore[union-attr]
            runner.runq.__len__  # noqa: B018  (what needed() reads)
            runner.deadlines._heap.__len__  # noqa: B018
            runner.clock.current_time  # noqa: B018
        except Exception:  # another trio: real passes
            return None
        watch = _WATCH.get(None)
        if watch is None:
            watch = BatchWatch(runner)
            trio.lowlevel.add_instrument(watch)
            _WATCH.set(watch)
        poller = select.poll()
        poller.register(io_fd, select.POLLIN)
        poller.register(self._input_fd, select.POLLIN)
        self._poller = poller
        self.watch = watch
        return poller


_UNRESOLVED: Final[Any] = object()
