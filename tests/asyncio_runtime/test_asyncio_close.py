"""acp_asyncio's close path is clean: leaving ``spawn_agent`` ends the program
normally, whatever was still queued for the agent, and nothing left behind
(the ``FLUSH_GRACE`` timer) prints a traceback later.

Each case is a program of its own (real agent process, real pipes): its exit
status and its stderr are what a user sees.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENT = str(HERE / "asyncio_agent.py")
TIMEOUT = 60

# An agent that never reads its stdin (nor exits on EOF: the grace ends it).
DEAF_AGENT = "import time; time.sleep(1000)"

QUEUED = """
import asyncio, sys
import acp_asyncio

class Client:
    def __init__(self, conn): pass

async def main():
    async with acp_asyncio.spawn_agent(
        [sys.executable, "-c", sys.argv[1]], client=Client, grace_period=0.3
    ) as conn:
        # Fill the pipe and the write buffer: a send finally waits for space.
        for _ in range(100_000):
            try:
                await asyncio.wait_for(conn.ext_notify("_pad", {"p": "x" * 4096}), 0.2)
            except asyncio.TimeoutError:
                break
        else:
            raise AssertionError("the agent read everything")
    print("left the block", flush=True)

asyncio.run(main())
"""

IDLE_AFTER_CLOSE = """
import asyncio, sys
import acp_asyncio
from acp_asyncio._connection import FLUSH_GRACE

class Client:
    def __init__(self, conn): pass

async def main():
    async with acp_asyncio.spawn_agent([sys.executable, sys.argv[1]], client=Client) as conn:
        await conn.agent.initialize({"protocolVersion": 1})
    await asyncio.sleep(FLUSH_GRACE + 0.5)  # the close timer fires in here
    print("left the block", flush=True)

asyncio.run(main())
"""


def _run(program: str, arg: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", program, arg],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_leaving_spawn_agent_with_data_queued_for_an_agent_that_does_not_read_exits_normally() -> (
    None
):
    done = _run(QUEUED, DEAF_AGENT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "left the block\n"
    assert "Traceback" not in done.stderr, done.stderr


def test_the_close_timer_after_a_normal_close_prints_no_traceback() -> None:
    done = _run(IDLE_AFTER_CLOSE, AGENT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "left the block\n"
    assert "Traceback" not in done.stderr, done.stderr
    assert "Exception in callback" not in done.stderr, done.stderr
