"""The agent as a subprocess in a process group of its own (acp_trio's way)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import trio

# acp_trio's reaping (stdin closed, grace, SIGTERM to the group, grace,
# SIGKILL to the group, always reaped), reused rather than copied
from acp_trio._subprocess import _reap  # pyright: ignore[reportPrivateUsage]

__all__ = ["open_agent", "reap"]


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
    """End the agent and everything in its group; shielded from cancellation."""
    pgid = process.pid if os.name == "posix" else None
    with trio.CancelScope(shield=True):
        await _reap(process, pgid, grace_period)
