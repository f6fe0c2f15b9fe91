"""The agent as a subprocess, without an event loop: how it starts and ends.

Every adapter's ``spawn_agent`` (and acp_inspect's proxy) follows the same
rules; each only waits and reads in its own way:

- :func:`group_options`: the agent leads a process group of its own
  (POSIX), so that everything it starts ends with it;
- :class:`StderrTail`: a captured stderr keeps its last ``STDERR_KEEP`` bytes;
- :class:`ShutdownPlan`: on exit its stdin is closed, it has a grace period
  to exit, then its group gets SIGTERM, another grace period, SIGKILL; it is
  always reaped.  The plan says the next step (a named record) from what
  the adapter saw; the adapter carries it out::

      plan = ShutdownPlan(pgid, grace_period)
      step = plan.next(exited=False)
      while step is not None:
          ...  # CloseInput / AwaitExit / SendSignal, the adapter's way
          step = plan.next(exited=process.returncode is not None)

  or, with the adapter's waits only, ``await plan.carry_out(process,
  await_exit=..., close_input=...)``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ._process_group import group_alive

__all__ = [
    "GROUP_POLL",
    "STDERR_KEEP",
    "AwaitExit",
    "CloseInput",
    "ProcessLike",
    "SendSignal",
    "ShutdownPlan",
    "StderrTail",
    "Step",
    "group_options",
    "signal_group",
]

#: Bytes of captured stderr kept (the most recent ones).
STDERR_KEEP: Final = 1024 * 1024
#: How often the agent's process group is checked while its members are
#: given their grace after SIGTERM (seconds): no event tells the exit of a
#: process that is not our child.
GROUP_POLL: Final = 0.02


def group_options(start_new_session: bool = False) -> dict[str, Any]:
    """Keyword arguments of ``subprocess.Popen`` (and the adapters' process
    openers) that make the child lead a process group of its own (POSIX).

    ``start_new_session=True`` makes it a new session too (detached from
    the controlling terminal); Python 3.10 has no ``process_group``, so
    there it always is.  Empty off POSIX: no group to signal.
    """
    if os.name != "posix":
        return {}
    if start_new_session or sys.version_info < (3, 11):
        return {"start_new_session": True}
    return {"process_group": 0}  # setpgid(0, 0) in the child


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to process group ``pgid``; nothing if it is gone already
    or only members we may not signal (setuid) are left."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class ProcessLike(Protocol):
    """What :meth:`ShutdownPlan.carry_out` needs of a process object."""

    @property
    def returncode(self) -> int | None:
        """``None`` until the process was reaped."""
        ...

    def terminate(self) -> None:
        """Ask it to end (SIGTERM)."""
        ...

    def kill(self) -> None:
        """End it (SIGKILL)."""
        ...


class StderrTail:
    """A captured stderr: the last ``keep`` bytes of what was fed, in ``into``."""

    def __init__(self, into: bytearray, keep: int = STDERR_KEEP) -> None:
        self.into = into
        self.keep = keep

    def feed(self, data: bytes | bytearray) -> None:
        """Append ``data``; trimmed when twice ``keep`` (amortised, not per chunk)."""
        into = self.into
        into += data
        if len(into) > 2 * self.keep:
            del into[: -self.keep]

    def close(self) -> None:
        """The stream ended: keep exactly the last ``keep`` bytes."""
        if len(self.into) > self.keep:
            del self.into[: -self.keep]


@dataclass(frozen=True)
class CloseInput:
    """Close the agent's stdin (EOF: the polite way to ask it to exit)."""


@dataclass(frozen=True)
class AwaitExit:
    """Wait until the agent exited, at most ``timeout`` seconds (``None``: no limit).

    With ``group``, also until no member of its group is left (polled every
    ``GROUP_POLL`` seconds with :func:`~acp_host.group_alive`).
    """

    timeout: float | None
    group: bool = False


@dataclass(frozen=True)
class SendSignal:
    """Send ``signal`` to the agent's process group (``group``) or to the agent.

    To the group: :func:`signal_group`; to the agent alone: its process
    object's ``terminate()`` or, when ``kill``, ``kill()`` (they know whether
    it was reaped already, and what ends a process off POSIX).
    """

    signal: int
    group: bool

    @property
    def kill(self) -> bool:
        """Whether this is the last resort (SIGKILL), not a request (SIGTERM)."""
        return self.signal != signal.SIGTERM


# off POSIX there is no SIGKILL: SendSignal.kill tells the adapter to kill()
_SIGKILL: Final[int] = getattr(signal, "SIGKILL", 9)

#: One step of a :class:`ShutdownPlan`.
Step = CloseInput | AwaitExit | SendSignal


class ShutdownPlan:
    """The steps that end an agent process and everything in its group.

    ``pgid``: the agent's process group (it leads it: its pid), ``None``
    when it has none (off POSIX).  :meth:`next` takes whether the agent has
    exited (been reaped) by now and returns the next step, ``None`` once the
    agent was reaped and nothing of its group is left to signal.  The
    escalation: stdin closed, ``grace_period`` to exit; then (unless it
    exited leaving nothing behind) SIGTERM to the group, ``kill_after``
    (default: ``grace_period``) for the agent and its group to go; SIGKILL
    to the group if anything is left; the agent is always reaped (the last
    step waits without limit).  Without a group, the same with the agent
    alone.  ``polite=False`` starts at the SIGTERM (the process must end
    now: our own SIGTERM).  Every child a runtime package starts is ended
    by this plan (adapters, acp_inspect, acp_http's command agents), each
    event loop carrying it out with its own waits.
    """

    def __init__(
        self,
        pgid: int | None,
        grace_period: float,
        *,
        kill_after: float | None = None,
        polite: bool = True,
        group_alive: Callable[[int], bool] = group_alive,
    ) -> None:
        self.pgid = pgid
        self.grace_period = grace_period
        self.kill_after = grace_period if kill_after is None else kill_after
        self.polite = polite
        #: whether a step sent a signal (the process did not end on EOF)
        self.signalled = False
        self._alive = group_alive
        self._exited = False
        self._steps = self._plan()

    def next(self, exited: bool) -> Step | None:
        """The next step, given whether the agent has exited by now."""
        self._exited = exited
        step = next(self._steps, None)
        if isinstance(step, SendSignal):
            self.signalled = True
        return step

    async def carry_out(
        self,
        process: ProcessLike,
        *,
        await_exit: Callable[[AwaitExit], Awaitable[object]],
        close_input: Callable[[], Awaitable[object]] | None = None,
    ) -> bool:
        """Take every step on ``process`` (a ``trio.Process``, an
        ``asyncio.subprocess.Process``, an ``anyio`` process): the adapter
        gives the two waits.  Whether it had to signal.

        ``await_exit(step)`` waits as the step says (its own timer, and
        :func:`~acp_host.group_alive` polled every ``GROUP_POLL`` seconds
        when ``step.group``); ``close_input()`` closes the agent's stdin
        (``None``: the connection closed it already).  Signals go to the
        group with :func:`signal_group`, to the agent alone with its
        ``terminate()`` / ``kill()``.
        """
        step = self.next(exited=False)
        while step is not None:
            if isinstance(step, CloseInput):
                if close_input is not None:
                    await close_input()
            elif isinstance(step, AwaitExit):
                await await_exit(step)
            elif step.group:
                assert self.pgid is not None
                signal_group(self.pgid, step.signal)
            elif step.kill:
                process.kill()
            else:
                process.terminate()
            step = self.next(exited=process.returncode is not None)
        return self.signalled

    def _left(self) -> bool:
        """Whether anything of the agent is left to signal."""
        pgid = self.pgid
        if pgid is None:
            return not self._exited
        return not self._exited or self._alive(pgid)

    def _plan(self) -> Iterator[Step]:
        group = self.pgid is not None
        if self.polite:
            yield CloseInput()
            yield AwaitExit(self.grace_period)
            if not self._left():
                return  # the usual case: it exited on EOF and left nothing behind
        yield SendSignal(signal.SIGTERM, group)
        yield AwaitExit(self.kill_after, group)
        if self._left():
            yield SendSignal(_SIGKILL, group)
            if group:
                # a SIGKILL is delivered, not done: its members are gone only
                # once the kernel ran them (a loaded machine takes a while)
                yield AwaitExit(self.kill_after, group)
        if not self._exited:
            yield AwaitExit(None)  # reaped, always
