"""The agent as a subprocess in a process group of its own, and its reaping.

The same steps as ``acp_trio.spawn_agent`` takes (stdin closed, grace,
SIGTERM to the group, grace, SIGKILL to the group, always reaped), kept here
because acp_trio exposes no public name for them: a private import would tie
the inspector to acp_trio's internals.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import trio
from acp_core._process_group import group_alive

__all__ = ["GROUP_POLL", "group_alive", "open_agent", "reap"]

#: Seconds between checks that the agent's process group is empty.
GROUP_POLL = 0.02


async def open_agent(
    command: Sequence[str], *, stderr: int | None = None
) -> trio.Process:
    """Start ``command`` with piped stdin/stdout as the leader of a new
    process group (POSIX)."""
    group: dict[str, Any] = {}
    if os.name == "posix":
        if sys.version_info < (3, 11):
            group["start_new_session"] = True
        else:
            group["process_group"] = 0
    return await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        **group,
    )


async def reap(process: trio.Process, grace_period: float) -> None:
    """End the agent and everything in its group; shielded from cancellation.

    Its stdin is closed; it has ``grace_period`` seconds to exit; then its
    group gets SIGTERM, another ``grace_period``, then SIGKILL.  An agent that
    exited leaving nothing in its group is only reaped.
    """
    with trio.CancelScope(shield=True):
        if process.stdin is not None:
            await trio.aclose_forcefully(process.stdin)
        with trio.move_on_after(grace_period):
            await process.wait()
        if os.name != "posix":
            if process.returncode is None:
                process.kill()
            await process.wait()
            return
        pgid = process.pid
        if process.returncode is not None and not group_alive(pgid):
            return  # the usual case: it exited on EOF and left nothing behind
        _signal_group(pgid, signal.SIGTERM)
        with trio.move_on_after(grace_period):
            await process.wait()
            # polled: no event tells the exit of a process that is not our child
            while group_alive(pgid):  # noqa: ASYNC110
                await trio.sleep(GROUP_POLL)
        if process.returncode is None or group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
        await process.wait()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # gone already, or only members we may not signal are left
