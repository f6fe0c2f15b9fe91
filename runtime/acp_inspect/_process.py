"""The agent as a subprocess in a process group of its own, and its reaping.

The same rules as ``acp_trio.spawn_agent`` (``acp_host.group_options``, and
``acp_host.ShutdownPlan``: stdin closed, grace, SIGTERM to the group, grace,
SIGKILL to the group, always reaped), carried out with trio's waits.
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

    async def close_input() -> None:
        if process.stdin is not None:
            await trio.aclose_forcefully(process.stdin)

    async def await_exit(step: AwaitExit) -> None:
        with trio.move_on_after(inf if step.timeout is None else step.timeout):
            await process.wait()
            # polled: no event tells the exit of a process not our child
            while step.group and pgid is not None and group_alive(pgid):  # noqa: ASYNC110
                await trio.sleep(GROUP_POLL)

    with trio.CancelScope(shield=True):
        await ShutdownPlan(pgid, grace_period).carry_out(
            process, await_exit=await_exit, close_input=close_input
        )
