"""``acp_host.protocol_stdio``: the agent's stdio taken for the protocol and
given back, in a real process with real pipes (no event loop)."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import os, sys
from acp_host import protocol_stdio

with protocol_stdio() as fds:
    os.write(fds.output, b"protocol\\n")   # the real stdout
    print("stray print", flush=True)         # fd 1: now stderr
    os.set_blocking(0, False)                 # as an event loop does
    os.set_blocking(1, False)
    os.close(fds.input)
    os.close(fds.output)
print("after", flush=True)                    # fd 1 is stdout again
print(os.get_blocking(0), os.get_blocking(1), file=sys.stderr, flush=True)
"""


def test_protocol_stdio_sends_stray_output_to_stderr_and_gives_stdio_back() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        stdin=subprocess.PIPE,
        capture_output=True,
        env=env,
        timeout=30,
        check=True,
    )
    assert done.stdout == b"protocol\nafter\n"
    # the blocking modes it found (pipes: blocking) are restored on exit
    assert done.stderr.decode().splitlines()[-2:] == ["stray print", "True True"]
