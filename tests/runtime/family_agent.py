"""An agent that starts a child of its own: ``python family_agent.py MODE PIDFILE``.

Before serving, it starts a grandchild (of the client) that sleeps for
1,000 s holding the agent's stdout and stderr, and writes
``{"agent": pid, "grandchild": pid}`` to PIDFILE.  Modes: ``leave`` (the
agent exits on stdin EOF, as agents do, leaving its child running) and
``stubborn`` (agent and child ignore SIGTERM; the agent also ignores stdin
EOF).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import acp_trio
import trio
from _acp_helpers import EchoAgent

MODE, PIDFILE = sys.argv[1], sys.argv[2]

CHILD = "import signal, time\n"
if MODE == "stubborn":
    CHILD += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
CHILD += "time.sleep(1000)\n"

if __name__ == "__main__":
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", CHILD])  # inherits fds 1 and 2
    with open(PIDFILE + ".tmp", "w") as f:
        json.dump({"agent": os.getpid(), "grandchild": child.pid}, f)
    os.replace(PIDFILE + ".tmp", PIDFILE)
    trio.run(acp_trio.serve_agent_stdio, EchoAgent)
    if MODE == "stubborn":
        time.sleep(1000)
