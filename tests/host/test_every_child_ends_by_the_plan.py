"""One process-group shutdown (``acp_host.ShutdownPlan``) for every child a
runtime package starts: the same stuck child (it ignores the end of its input
and SIGTERM, and leaves a grandchild in its group) is killed after the grace and
reaped, nothing of its group left, in every tool: acp_http's command agents,
acp_inspect's agent, acp_client's terminals (the adapters' ``spawn_agent``:
tests/runtime/test_subprocess.py, tests/asyncio_runtime)."""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
from pathlib import Path

import acp_http
import anyio
import pytest
import trio
from acp_client.terminals import Terminal, Terminals
from acp_host import group_alive
from acp_inspect._process import open_agent, reap

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"

#: ignores SIGTERM and its stdin's end; a grandchild (also deaf) in its group
STUCK = r"""
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
os.write(1, b"ready\n")  # one write, whatever the buffering
time.sleep(60)
"""
GRACE = 0.2


async def test_a_stuck_command_agent_of_acp_http_is_killed_after_the_grace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    launcher = acp_http.CommandAgent([sys.executable, "-c", STUCK])
    async with anyio.create_task_group() as task_group:
        handle = await launcher.launch(task_group, GRACE)
        assert await handle.stream.receive() == b"ready\n"
        pid = handle._process.pid  # type: ignore[attr-defined]  # pyright: ignore
        await handle.aclose()
    assert handle._process.returncode == -signal.SIGKILL  # type: ignore[attr-defined]  # pyright: ignore
    assert not group_alive(pid)
    # said in one bounded line, as the inspector says it (its eof-ignored finding)
    [said] = [r.getMessage() for r in caplog.records if r.name == "acp_http"]
    assert f"agent process {pid} did not exit" in said and len(said) < 200


async def test_a_stuck_agent_of_acp_inspect_is_killed_after_the_grace() -> None:
    process = await open_agent([sys.executable, "-c", STUCK])
    assert process.stdout is not None
    assert await process.stdout.receive_some() == b"ready\n"
    assert await reap(
        process, eof_grace=GRACE, kill_after=GRACE
    )  # it had to be signalled
    assert process.returncode == -signal.SIGKILL
    assert not group_alive(process.pid)


async def test_a_stuck_terminal_of_acp_client_is_killed_after_the_grace() -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", STUCK], stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None
    assert await process.stdout.receive_some() == b"ready\n"
    terminal = Terminal("t1", "s1", process, 1024)
    terminals = Terminals.__new__(Terminals)  # kill() needs no workspace

    async def reaped() -> None:
        await process.wait()
        terminal.exited.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reaped)
        await terminals.kill(terminal)
    assert process.returncode == -signal.SIGKILL
    assert not group_alive(process.pid)


def test_no_runtime_package_signals_a_process_group_its_own_way() -> None:
    found = []
    for path in sorted(RUNTIME.rglob("*.py")):
        if path.parent.name == "acp_host":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "killpg"
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ):
                found.append(f"{path.relative_to(RUNTIME)}:{node.lineno}")
    assert found == []
