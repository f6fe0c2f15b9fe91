"""The agent as a subprocess in a process group of its own, and its reaping.

The same rules as ``acp_trio.spawn_agent`` (``acp_core.group_options``, and
``acp_core.ShutdownPlan``: stdin closed, grace, SIGTERM to the group, grace,
SIGKILL to the group, always reaped), carried out with trio's waits.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

import trio
from acp_core._process_group import group_alive
from acp_core._subprocess import (
    GROUP_POLL,
    AwaitExit,
    CloseInput,
    ShutdownPlan,
    group_options,
    signal_group,
)

__all__ = ["GROUP_POLL", "group_alive", "open_agent", "reap"]


async def open_agent(
    command: Sequence[str], *, stderr: int | None = None
) -> trio.Process:
    """Start ``command`` with piped stdin/stdout as the leader of a new
    process group (POSIX)."""
    return await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        **group_options(),
    )


async def reap(process: trio.Process, grace_period: float) -> None:
    """End the agent and everything in its group; shielded from cancellation.

    Its stdin is closed; it has ``grace_period`` seconds to exit; then its
    group gets SIGTERM, another ``grace_period``, then SIGKILL.  An agent that
    exited leaving nothing in its group is only reaped.
    """
    pgid = process.pid if group_options() else None
    plan = ShutdownPlan(pgid, grace_period)
    with trio.CancelScope(shield=True):
        step = plan.next(exited=False)
        while step is not None:
            if isinstance(step, CloseInput):
                if process.stdin is not None:
                    await trio.aclose_forcefully(process.stdin)
            elif isinstance(step, AwaitExit):
                timeout = float("inf") if step.timeout is None else step.timeout
                with trio.move_on_after(timeout):
                    await process.wait()
                    # polled: no event tells the exit of a process not our child
                    while step.group and pgid is not None and group_alive(pgid):  # noqa: ASYNC110
                        await trio.sleep(GROUP_POLL)
            elif step.group:
                assert pgid is not None
                signal_group(pgid, step.signal)
            elif step.kill:
                process.kill()
            else:
                process.terminate()
            step = plan.next(exited=process.returncode is not None)
