"""``acp-client`` (``python -m acp_client``) against ``acp_echo`` (the reference agent), both real processes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
import trio
from _example_helpers import (
    CLIENT,
    HOSTILE_AGENT,
    PYTHON,
    TIMEOUT,
    agent_command,
    child_env,
    read_until,
    run_client,
    session_id_of,
)

TURN = [
    "you: hello there",
    "plan:",
    "  [~] Read the prompt",
    "  [ ] Ask permission to run the echo tool",
    "  [ ] Echo the prompt back",
    "agent: You said: hello there",
    "plan: [x] Read the prompt",
    "plan: [~] Ask permission to run the echo tool",
    "tool call_1: Echo 11 characters [pending]",
    "permission: Echo 11 characters: Allow once [allow_once] (--yes)",
    "tool call_1: Echo 11 characters [in_progress]",
    "plan: [x] Ask permission to run the echo tool",
    "plan: [~] Echo the prompt back",
    "tool call_1: Echo 11 characters [completed]",
    "    hello there",
    "plan: [x] Echo the prompt back",
    "agent: Echoed 11 characters.",
]


def lines(output: str) -> list[str]:
    return output.splitlines()


@pytest.mark.parametrize("protocol", [1, 2])
async def test_one_prompt_turn_streams_the_whole_transcript(
    protocol: int, tmp_path: Path
) -> None:
    status, out, err = await run_client(
        "--protocol", str(protocol), "--yes", "--prompt", "hello there", cwd=tmp_path
    )
    assert status == 0, err
    got = lines(out)
    assert got[0] == f"agent: acp-msgspec-echo-agent 0.1.0, protocol v{protocol}"
    assert got[1].startswith("session: sess_")
    start = got.index("you: hello there")
    body = got[start:]
    # the agent's first message continues over lines (it says where it works)
    assert body[5] == "agent: You said: hello there"
    assert body[6] == f"       Working in {tmp_path}"
    del body[6]
    assert body[: len(TURN)] == TURN
    assert body[len(TURN)].startswith("usage: ") and "/200000 tokens" in body[-2]
    assert body[-1] == "stop reason: end_turn"


async def test_without_a_protocol_option_v2_is_negotiated() -> None:
    status, out, err = await run_client("--yes", "--prompt", "hi")
    assert status == 0, err
    assert lines(out)[0].endswith("protocol v2")


async def test_session_setup_is_echoed_mcp_servers_and_directories(
    tmp_path: Path,
) -> None:
    status, out, err = await run_client(
        "--yes",
        "--prompt",
        "hi",
        "--add-dir",
        str(tmp_path),
        "--mcp",
        f"tools={PYTHON} -m tools --stdio",
        "--mcp",
        "api=https://mcp.example/api",
    )
    assert status == 0, err
    assert f"(also {tmp_path})" in out
    assert f"MCP server tools (stdio): {PYTHON} -m tools --stdio" in out
    assert "MCP server api (http): https://mcp.example/api" in out


async def test_without_yes_and_without_a_terminal_the_permission_is_rejected() -> None:
    status, out, err = await run_client("--prompt", "hi")
    assert status == 0, err
    assert "permission: Echo 2 characters: no terminal to ask, rejected" in out
    assert "tool call_1: Echo 2 characters [failed]" in out
    assert "    Permission denied" in out
    assert "agent: Okay, I did not run the echo tool." in out


async def test_the_prompt_can_come_from_stdin() -> None:
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            [*CLIENT, "--yes", "--", *agent_command()],
            stdin=b"from standard input\n",
            capture_stdout=True,
            env=child_env(),
        )
    assert "agent: You said: from standard input" in done.stdout.decode()


@pytest.mark.parametrize("protocol", [1, 2])
async def test_load_replays_the_session(protocol: int, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    agent = agent_command("--state-dir", state)
    status, first, err = await run_client(
        "--yes", "--prompt", "first words", agent=agent
    )
    assert status == 0, err
    session_id = session_id_of(first)
    live_usage = next(line for line in lines(first) if line.startswith("usage: "))

    status, out, err = await run_client(
        "--protocol", str(protocol), "--load", session_id, agent=agent
    )
    assert status == 0, err
    assert lines(out)[1:] == [
        f"session: {session_id} (loading)",
        "you: first words",
        "plan:",
        "  [x] Read the prompt",
        "  [x] Ask permission to run the echo tool",
        "  [x] Echo the prompt back",
        "agent: You said: first words",
        f"       Working in {os.getcwd()}",
        "tool call_1: Echo 11 characters [completed]",
        "    first words",
        "agent: Echoed 11 characters.",
        live_usage,
        f"session: {session_id} (loaded)",
    ]


async def test_sessions_on_disk_survive_restarts_and_protocol_changes(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    agent = agent_command("--state-dir", str(state))
    status, out, err = await run_client(
        "--protocol", "1", "--yes", "--prompt", "turn one", agent=agent
    )
    assert status == 0, err
    session_id = session_id_of(out)
    saved = [json.loads(line) for line in (state / f"{session_id}.jsonl").open()]
    assert saved[0]["type"] == "setup" and saved[0]["session_id"] == session_id
    assert [r["type"] for r in saved] == ["setup", "turn"]

    # a new agent process, the other protocol version: the conversation goes on
    status, out, err = await run_client(
        "--protocol",
        "2",
        "--yes",
        "--load",
        session_id,
        "--prompt",
        "turn two",
        agent=agent,
    )
    assert status == 0, err
    assert (
        "you: turn one" in out and "tool call_2: Echo 8 characters [completed]" in out
    )

    status, out, err = await run_client("--load", session_id, agent=agent)
    assert status == 0, err
    assert [line for line in lines(out) if line.startswith("you: ")] == [
        "you: turn one",
        "you: turn two",
    ]
    assert lines(out)[-2].startswith("usage: 3")  # cumulative over both turns


async def test_loading_an_unknown_session_fails_cleanly(tmp_path: Path) -> None:
    agent = agent_command("--state-dir", str(tmp_path))
    status, _out, err = await run_client("--load", "sess_nope", agent=agent)
    assert status == 1
    assert "Resource not found" in err and "Traceback" not in err


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize("whole_group", [False, True], ids=["client", "group"])
async def test_wait_then_ctrl_c_cancels_the_turn(
    protocol: int, whole_group: bool
) -> None:
    """SIGINT to the client (or, as a terminal's Ctrl-C, to its process group)."""
    command = [*CLIENT, "--protocol", str(protocol), "--prompt", "wait"]
    with trio.fail_after(TIMEOUT):
        process = await trio.lowlevel.open_process(
            [*command, "--", *agent_command()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=child_env(),
            start_new_session=True,
        )
        assert process.stdout is not None
        out = bytearray()
        try:
            await read_until(process.stdout, out, b"[in_progress]\n")
            if whole_group:
                os.killpg(process.pid, signal.SIGINT)
            else:
                process.send_signal(signal.SIGINT)
            await read_until(process.stdout, out, b"stop reason:")
            while data := await process.stdout.receive_some():
                out += data
            status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert lines(out.decode())[-5:] == [
        "agent: Waiting until you cancel this turn.",
        "tool call_1: Wait for session/cancel [in_progress]",
        "^C: cancelling (Ctrl-C again to quit)",
        "tool call_1: Wait for session/cancel [cancelled]",
        "stop reason: cancelled",
    ]
    assert status == 130


# Item 11: what the agent says cannot drive the terminal.
UNSAFE_BYTES = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]"
)


async def test_agent_text_with_escape_sequences_is_printed_inert() -> None:
    status, out, err = await run_client(
        "--yes", "--prompt", "hi", agent=[PYTHON, HOSTILE_AGENT]
    )
    assert status == 1 and "Traceback" not in err
    for stream in (out, err):
        assert UNSAFE_BYTES.search(stream.encode()) is None, stream
    # shown as escapes a reader can see
    assert "agent: hostile\\x1b]0;pwned\\x07 1, protocol v1" in out
    assert "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07\\x1b]52;c;" in out
    assert "\\x1b[8mhidden\\x1b[0m\\x9b31m\\u202eevil\\u202cabc\\x08" in out
    assert "  [ ] step\\x1b[2J\\x1b[H" in lines(out)
    assert "commands: /cmd\\x1b]0;pwned\\x07" in lines(out)
    assert "failed\\x1b[2J\\x1b[H\\u202eevil\\u202c" in err
    # tabs and newlines kept (a CRLF is a newline)
    assert " col1\tcol2" in out
    assert "       line two" in lines(out) and "       line three" in lines(out)


async def test_permission_options_are_shown_with_their_kind_and_yes_allows_once() -> (
    None
):
    _, out, _ = await run_client(
        "--yes", "--prompt", "hi", agent=[PYTHON, HOSTILE_AGENT]
    )
    assert (
        "permission: tool\\x1b]52;c;ZWNobyBwd25lZA==\\x07: Once\\x9b31m [allow_once] (--yes)"
        in lines(out)
    )
