"""The small examples (``simple_agent.py``, ``simple_client.py``) as real processes,
against each other and against the reference programs, and their typing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
import trio
from _example_helpers import (
    PYTHON,
    ROOT,
    SIMPLE_AGENT,
    SIMPLE_CLIENT,
    TIMEOUT,
    agent_command,
    child_env,
    read_until,
    run_client,
)


async def run_simple_client(prompt: str, agent: list[str]) -> tuple[int, str, str]:
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            [PYTHON, SIMPLE_CLIENT, prompt, *agent],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=child_env(),
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_the_simple_client_runs_a_turn_of_the_simple_agent() -> None:
    status, out, err = await run_simple_client(
        "count these words", [PYTHON, SIMPLE_AGENT]
    )
    assert status == 0, err
    assert out.splitlines() == [
        "count these words ",
        "[tool Count the words: pending]",
        "[permission: Allow]",
        "[tool Count the words: completed]",
        "[end_turn]",
    ]


async def test_the_simple_client_runs_a_turn_of_the_echo_agent() -> None:
    status, out, err = await run_simple_client("hi there", agent_command())
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "You said: hi there"
    assert "[permission: Allow once]" in lines
    assert "[tool Echo 8 characters: completed]" in lines
    assert lines[-2:] == ["Echoed 8 characters.", "[end_turn]"]


async def test_the_cli_client_runs_a_turn_of_the_simple_agent() -> None:
    status, out, err = await run_client(
        "--yes", "--prompt", "two words", agent=[PYTHON, SIMPLE_AGENT]
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "agent: simple-agent 1.0, protocol v1"
    assert "agent: two words " in lines
    assert "permission: Count the words: Allow [allow_once] (--yes)" in lines
    assert "tool count-1: Count the words [completed]" in lines
    assert "    2 words" in lines
    assert lines[-1] == "stop reason: end_turn"


@pytest.mark.parametrize(
    "agent",
    [[PYTHON, SIMPLE_AGENT], agent_command()],
    ids=["simple_agent", "echo_agent"],
)
async def test_ctrl_c_in_the_simple_client_cancels_the_turn(agent: list[str]) -> None:
    prompt = "slow one two three four five six seven eight wait"
    with trio.fail_after(TIMEOUT):
        process = await trio.lowlevel.open_process(
            [PYTHON, SIMPLE_CLIENT, prompt, *agent],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=child_env(),
            start_new_session=True,
        )
        assert process.stdout is not None
        out = bytearray()
        try:
            first = b"slow " if agent[1] == SIMPLE_AGENT else b"Waiting"
            await read_until(process.stdout, out, first)
            os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C
            await read_until(process.stdout, out, b"[cancelled]\n")
            status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert status == 0
    assert b"eight" not in out


async def test_the_in_memory_testing_example_passes() -> None:
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            [PYTHON, str(ROOT / "examples" / "testing_in_memory.py")],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=child_env(),
        )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"ok\n"


# Typed programs: the examples (acp_client and acp_echo are checked with the
# runtime by `nox -s typecheck`).
EXAMPLES = [
    SIMPLE_AGENT,
    SIMPLE_CLIENT,
    str(ROOT / "examples" / "asyncio_echo_agent.py"),
    str(ROOT / "examples" / "testing_in_memory.py"),
]


def test_the_examples_pass_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *EXAMPLES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env() | {"MYPYPATH": child_env()["PYTHONPATH"]},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_examples_pass_pyright_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pyright", *EXAMPLES],
        capture_output=True,
        text=True,
        cwd=ROOT,  # [tool.pyright] in pyproject.toml: strict for examples/
        env=child_env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors" in done.stdout
