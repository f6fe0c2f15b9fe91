"""Whether a process group still has a live member: the one host query that
every adapter's ``spawn_agent`` (and acp_inspect's proxy) needs to end an
agent's whole group. No event loop: the adapters poll it at their own pace."""

from __future__ import annotations

import os

__all__ = ["group_alive"]


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a member that has not exited.

    Zombies do not count: an orphan that exited stays a zombie until init
    reaps it, and in a container whose init does not reap, forever.  On
    Linux ``/proc`` tells them apart; elsewhere any member counts.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # a member exists, just not one we may signal
    if not os.path.isdir("/proc/self"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parens
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False
