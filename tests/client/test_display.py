"""What ``acp-client`` prints of a session (``acp_client.display.Screen``)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import acp_trio
from acp_client.display import Screen


def test_one_line_per_tool_call_state_change() -> None:
    out = io.StringIO()
    screen = Screen(out)
    updates = [
        acp_trio.tool_call("c1", "Read", kind="read"),
        acp_trio.tool_call_update("c1", title="Read a.txt"),  # a title only
        acp_trio.tool_call_update("c1", status="in_progress"),
        acp_trio.tool_call_update("c1", title="Read a.txt (2 KB)"),
        acp_trio.tool_call_update("c1", status="in_progress"),  # no change
        acp_trio.tool_call_update("c1", status="completed"),
    ]
    for update in updates:
        screen.update(acp_trio.notification("s1", update))
    assert out.getvalue().splitlines() == [
        "tool c1: Read [pending]",
        "tool c1: Read a.txt [in_progress]",
        "tool c1: Read a.txt (2 KB) [completed]",
    ]


def test_an_update_of_a_newer_spec_is_shown_as_one_line_not_dropped() -> None:
    agent = Path(__file__).with_name("newer_agent.py")
    client = [sys.executable, "-m", "acp_client", "--yes", "--protocol", "1"]
    done = subprocess.run(
        [*client, "--prompt", "hi", "--", sys.executable, str(agent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "[session/update: a kind this client does not know (hologram_chunk at "
        "$.update.sessionUpdate): the agent speaks a newer spec]"
    ) in done.stdout.splitlines()
    assert "still here" in done.stdout
