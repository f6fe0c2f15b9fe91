"""Shutdown in parallel (issue 29, item 6): ``python -m acp_http serve`` with
20 command agents that ignore the end of their input and SIGTERM ends them all
at once, each by ``acp_host.ShutdownPlan`` (stdin closed, the grace, SIGTERM
to its group, the grace, SIGKILL), so a SIGINT is done within hypercorn's
shutdown timeout (60 s; one after the other they took 20 x 4 s): exit status
0, no agent or grandchild left.  A real server, real processes."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import anyio
import trio
from _raw import INIT, raw_client
from _servers import serve_command
from acp_host import group_alive

HERE = Path(__file__).resolve().parent
AGENTS = 20
TIMEOUT = 150  # a hang guard only: past hypercorn's 60 s shutdown timeout


def agent_groups(folder: Path) -> list[int]:
    """The agents' pids (each leads its group) from the files they left."""
    return [json.loads(f.read_text())["agent"] for f in folder.glob("*.json")]


async def test_sigint_ends_every_stuck_agent_at_once_and_the_server_exits_0(
    tmp_path: Path,
) -> None:
    agent = [sys.executable, str(HERE / "stuck_agent.py"), str(tmp_path)]
    with serve_command(agent) as (url, server), trio.fail_after(TIMEOUT):
        async with raw_client(url, http2=False) as raw:
            statuses: list[int] = []

            async def open_one() -> None:
                statuses.append((await raw.post(INIT)).status_code)

            async with anyio.create_task_group() as tg:
                for _ in range(AGENTS):
                    tg.start_soon(open_one)
        assert statuses == [200] * AGENTS
        groups = agent_groups(tmp_path)
        assert len(groups) == AGENTS
        server.send_signal(signal.SIGINT)
        assert await trio.to_thread.run_sync(server.wait) == 0
        # the grandchild is in its agent's group: no group has a member left
        assert not [group for group in groups if group_alive(group)]
