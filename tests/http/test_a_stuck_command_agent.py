"""The same stuck child in acp_http's server as in every tool (one plan,
``acp_host.ShutdownPlan``: stdin closed, the grace, SIGTERM to the group, the
grace, SIGKILL; tests/host/test_every_child_ends_by_the_plan.py): a command
agent deaf to the end of its input and to SIGTERM, with a grandchild in its
group, is killed with its whole group after ``close_grace_seconds`` once its
client ended the connection.  A real server, a real process, over HTTP."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import acp_http
import trio
from _servers import serving
from acp_host import group_alive
from acp_schema import v1

HERE = Path(__file__).resolve().parent
GRACE = 0.3


class Client:
    def __init__(self, conn: object) -> None:
        pass


async def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_in_the_http_server(
    tmp_path: Path,
) -> None:
    pids_file = tmp_path / "pids.json"
    command = f"{sys.executable} {HERE / 'stuck_agent.py'} {pids_file}"
    limits = json.dumps({"close_grace_seconds": GRACE})
    with serving(
        "hypercorn-trio", env={"ACP_HTTP_AGENT": command, "ACP_HTTP_LIMITS": limits}
    ) as url:
        with trio.fail_after(60):
            async with acp_http.connect_http(url, Client) as conn:
                await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            # the connection is deleted: the server ends its agent by the plan
            pids = json.loads(pids_file.read_text())
            # only SIGKILL ends it; the grandchild is in its group: the group
            # has no live member left (a hang guard only, no timing asserted)
            started = time.monotonic()
            while group_alive(pids["agent"]):
                assert time.monotonic() - started < 30, "the group outlived the plan"
                await trio.sleep(0.05)
