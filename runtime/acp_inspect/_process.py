"""The agent as a subprocess in a process group of its own, and its ending.

The agent leads a process group (``acp_host.group_options``), so whatever it starts
ends with it.  It is ended in two steps with two delays of their own, so
that both the polite and the prompt way fit inside an editor's schedule
(``acp_trio.spawn_agent`` closes the agent's stdin, waits 2 s, SIGTERMs it,
waits 2 s, SIGKILLs it; here "the agent" is the proxy):

- :func:`reap`: its stdin is closed, it has ``eof_grace`` seconds to exit
  (:data:`DEFAULT_EOF_GRACE`), then :func:`terminate`;
- :func:`terminate`: SIGTERM to the group, ``kill_after`` seconds
  (:data:`DEFAULT_KILL_AFTER`) for the agent and its group to go, SIGKILL
  to the group; the agent is always reaped.

With the defaults an agent that ignores everything is gone 3 s after the
proxy's stdin closed, and 1 s after the proxy's own SIGTERM: before the
editor's SIGKILL (4 s) could leave it behind.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from math import inf

import trio
from acp_host import (
    GROUP_POLL,
    AwaitExit,
    ShutdownPlan,
    group_alive,
    group_options,
)

__all__ = [
    "DEFAULT_EOF_GRACE",
    "DEFAULT_KILL_AFTER",
    "GROUP_POLL",
    "group_alive",
    "open_agent",
    "reap",
    "terminate",
    "wait_gone",
]

#: Seconds the agent has to exit after its stdin closed, before SIGTERM.
DEFAULT_EOF_GRACE = 2.0
#: Seconds between SIGTERM to the agent's group and SIGKILL.
DEFAULT_KILL_AFTER = 1.0


async def open_agent(
    command: Sequence[str],
    *,
    stderr: int | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> trio.Process:
    """Start ``command`` with piped stdin/stdout as the leader of a new
    process group (POSIX)."""
    return await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
        env=env,
        **group_options(),
    )


def _pgid(process: trio.Process) -> int | None:
    return process.pid if group_options() else None


async def wait_gone(process: trio.Process, within: float) -> bool:
    """Wait until the agent exited and nothing is left in its group, at most
    ``within`` seconds; whether it is all gone."""
    pgid = _pgid(process)
    with trio.move_on_after(within):
        await process.wait()
        # polled: no event tells the exit of a process not our child
        while pgid is not None and group_alive(pgid):  # noqa: ASYNC110
            await trio.sleep(GROUP_POLL)
        return True
    return False


async def _carry_out(plan: ShutdownPlan, process: trio.Process) -> bool:
    """:class:`acp_host.ShutdownPlan` with trio's waits (as ``acp_trio.spawn_agent``);
    shielded from cancellation.  Whether it had to signal."""
    pgid = plan.pgid

    async def close_input() -> None:
        if process.stdin is not None:
            await trio.aclose_forcefully(process.stdin)

    async def await_exit(step: AwaitExit) -> None:
        with trio.move_on_after(inf if step.timeout is None else step.timeout):
            await process.wait()
            # polled: no event tells the exit of a process not our child
            while step.group and pgid is not None and group_alive(pgid):  # noqa: ASYNC110
                await trio.sleep(GROUP_POLL)

    signalled = False
    with trio.CancelScope(shield=True):
        signalled = await plan.carry_out(
            process, await_exit=await_exit, close_input=close_input
        )
    return signalled


async def terminate(process: trio.Process, kill_after: float) -> None:
    """SIGTERM to the agent's group, ``kill_after`` seconds, SIGKILL; reaped
    (the shutdown plan from its SIGTERM on).  Shielded from cancellation."""
    plan = ShutdownPlan(_pgid(process), kill_after, polite=False)
    await _carry_out(plan, process)


async def reap(
    process: trio.Process,
    eof_grace: float = DEFAULT_EOF_GRACE,
    kill_after: float = DEFAULT_KILL_AFTER,
) -> bool:
    """End the agent and everything in its group by the shutdown plan
    (``acp_host.ShutdownPlan``, as every runtime package ends its children);
    shielded from cancellation.

    Its stdin is closed; it has ``eof_grace`` seconds to exit; then SIGTERM
    to the group, ``kill_after`` seconds, SIGKILL.  Whether it had to be
    signalled.
    """
    plan = ShutdownPlan(_pgid(process), eof_grace, kill_after=kill_after)
    return await _carry_out(plan, process)
