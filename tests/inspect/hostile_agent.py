"""Agents that are hostile to the process around them: ``python hostile_agent.py MODE PIDFILE``.

``stubborn``: ignores stdin EOF, SIGTERM and SIGHUP (only SIGKILL ends it);
writes ``{"agent": pid}`` to PIDFILE.  ``detach``: starts a child in a
session of its own (out of the agent's process group) that holds the
agent's stdout for 1,000 s, writes ``{"agent": pid, "child": pid}``, and
exits at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

MODE, PIDFILE = sys.argv[1], sys.argv[2]


def write_pids(**pids: int) -> None:
    with open(PIDFILE + ".tmp", "w") as f:
        json.dump(pids, f)
    os.replace(PIDFILE + ".tmp", PIDFILE)


if MODE == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    write_pids(agent=os.getpid())
    sys.stdin.read()  # EOF ignored
    time.sleep(1000)
elif MODE == "detach":
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(1000)"],
        start_new_session=True,  # inherits fd 1: the agent's stdout
    )
    write_pids(agent=os.getpid(), child=child.pid)
