"""``acp-client`` (``python -m acp_client``) as a client for real agents (issue 11).

Every test runs the client as a process against an agent process: the echo
agent, agents written with the official Python SDK (``sdk_tool_agent.py``,
``tests/interop/official_agent.py``), or a small agent of ours that repeats
itself (``repeat_agent.py``).  Where the client asks the user, the test gives
it a pseudo-terminal as its controlling terminal and answers there.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import termios
from pathlib import Path

import pytest
import trio
from _example_helpers import (
    CLIENT,
    OFFICIAL_AGENT,
    PYTHON,
    REPEAT_AGENT,
    SDK_TOOL_AGENT,
    TIMEOUT,
    child_env,
    run_client,
)

KEY = {"SDK_AGENT_KEY": "secret"}
TOOL_AGENT = [PYTHON, SDK_TOOL_AGENT]


def one_line_error(status: int, err: str, expected_status: int = 1) -> str:
    """The error line, after checking it is the only output and no traceback."""
    assert status == expected_status, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("acp-client: ")
    return lines[0]


async def tool_turn(
    prompt: str, cwd: Path, *options: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """One turn of the SDK tool agent (protocol v1, authenticated with ``key``)."""
    return await run_client(
        "--protocol",
        "1",
        "--auth",
        "key",
        *options,
        "--prompt",
        prompt,
        agent=TOOL_AGENT,
        cwd=cwd,
        env=KEY | (env or {}),
    )


def reply(out: str) -> str:
    """The agent's text of the turn (lines after ``agent: `` joined)."""
    lines = out.splitlines()
    you = next(i for i, line in enumerate(lines) if line.startswith("you: "))
    start = next(
        i for i, line in enumerate(lines) if i > you and line.startswith("agent: ")
    )
    end = next(i for i, line in enumerate(lines) if line.startswith("stop reason:"))
    return "\n".join(line.strip() for line in lines[start:end])[len("agent: ") :]


# -- one-line errors ------------------------------------------------------------------


async def test_a_command_not_found_is_one_line_error() -> None:
    status, out, err = await run_client("--prompt", "hi", agent=["no-such-agent-x"])
    assert (
        one_line_error(status, err) == "acp-client: no-such-agent-x: command not found"
    )
    assert out == ""


async def test_an_agent_that_exits_is_reported_with_its_status_and_last_stderr_lines() -> (
    None
):
    code = (
        "import sys\n"
        "for n in range(20): print(f'log line {n}', file=sys.stderr)\n"
        "print('fatal: no config \\x1b[2J', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    status, _, err = await run_client("--prompt", "hi", agent=[PYTHON, "-c", code])
    assert status == 1 and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == "acp-client: the agent exited with status 3 (initialize)"
    assert lines[1] == "agent stderr:"
    assert lines[-1] == "  | fatal: no config \\x1b[2J"
    assert lines[2] == "  | log line 13"  # the last 8 lines
    assert len(lines) == 10


async def test_an_agent_killed_by_a_signal_is_reported() -> None:
    code = "import os, sys; sys.stdin.readline(); os.kill(os.getpid(), 9)"
    status, _, err = await run_client("--prompt", "hi", agent=[PYTHON, "-c", code])
    assert (
        one_line_error(status, err)
        == "acp-client: the agent was killed by SIGKILL (initialize)"
    )


async def test_a_protocol_version_the_agent_refuses_is_one_line_error() -> None:
    status, _, err = await run_client(
        "--protocol", "2", "--prompt", "hi", agent=[PYTHON, OFFICIAL_AGENT]
    )
    assert status == 1 and "Traceback" not in err
    assert err.splitlines()[0] == "acp-client: the agent refused protocol v2"
    assert "protocol version 1" in err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--mcp", "nope"], "argument --mcp: 'nope' is not NAME=COMMAND or NAME=URL"),
        (["--mcp", "x=run 'open"], 'argument --mcp: "x=run \'open": No closing'),
        (["--timeout", "-1"], "argument --timeout: '-1' is not a positive number"),
        (["--timeout", "soon"], "argument --timeout: 'soon' is not a positive"),
        (["--add-dir", "/no/such/dir"], "argument --add-dir: '/no/such/dir' is not a"),
        (["--protocol", "3"], "argument --protocol: invalid choice: 3"),
    ],
)
async def test_a_bad_option_value_is_one_line_error(
    options: list[str], message: str
) -> None:
    status, out, err = await run_client(*options, "--prompt", "hi")
    line = one_line_error(status, err, expected_status=2)
    assert line.startswith(f"acp-client: error: {message}"), line
    assert line.endswith("(see --help)") and out == ""


async def test_a_missing_agent_command_is_one_line_error() -> None:
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            [*CLIENT, "--prompt", "hi"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=child_env(),
        )
    line = one_line_error(done.returncode, done.stderr.decode(), expected_status=2)
    assert "the agent command is missing" in line


async def test_a_request_over_the_timeout_is_one_line_error() -> None:
    silent = [PYTHON, "-c", "import time; time.sleep(60)"]
    status, _, err = await run_client(
        "--timeout", "0.5", "--prompt", "hi", agent=silent
    )
    assert (
        one_line_error(status, err)
        == "acp-client: initialize: no answer within 0.5 s (--timeout)"
    )


async def test_a_request_the_agent_fails_is_one_line_error(tmp_path: Path) -> None:
    status, _, err = await run_client("--load", "sess_nope", agent=agent_args(tmp_path))
    assert one_line_error(status, err).startswith(
        "acp-client: session/load failed: Resource not found (-32002)"
    )


def agent_args(state: Path) -> list[str]:
    from _example_helpers import ECHO_AGENT

    return [*ECHO_AGENT, "--chunk-delay", "0", "--state-dir", str(state)]


# -- authentication ------------------------------------------------------------------


async def test_authentication_required_lists_the_agents_methods(tmp_path: Path) -> None:
    status, _, err = await run_client("--prompt", "hi", agent=TOOL_AGENT, cwd=tmp_path)
    assert status == 1 and "Traceback" not in err
    assert err.splitlines() == [
        "acp-client: the agent requires authentication: run again with --auth ID",
        "the agent's methods:",
        "  --auth key  API key [agent]: Reads SDK_AGENT_KEY",
        "  --auth token  Token [agent]: Never works",
        "  --auth env  Environment [env_var] (needs SDK_AGENT_KEY)",
    ]


@pytest.mark.parametrize("protocol", [[], ["--protocol", "1"]], ids=["offer", "v1"])
async def test_a_v1_agents_env_var_method_runs_when_its_variable_is_set(
    protocol: list[str], tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("the file")
    status, out, err = await run_client(
        *protocol,
        "--auth",
        "env",
        "--prompt",
        f"read {tmp_path}/f.txt",
        agent=TOOL_AGENT,
        cwd=tmp_path,
        env=KEY,
    )
    assert status == 0, err
    assert out.splitlines()[1] == "auth: Environment"
    assert reply(out) == "read: the file"


async def test_a_v1_agents_env_var_method_without_its_variable_is_one_line_error(
    tmp_path: Path,
) -> None:
    status, _, err = await run_client(
        "--auth", "env", "--prompt", "hi", agent=TOOL_AGENT, cwd=tmp_path
    )
    assert one_line_error(status, err) == (
        "acp-client: --auth env needs SDK_AGENT_KEY set in the environment"
    )


@pytest.mark.parametrize("protocol", [[], ["--protocol", "1"]], ids=["offer", "v1"])
async def test_auth_runs_the_chosen_method_which_reads_an_env_var(
    protocol: list[str], tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("the file")
    status, out, err = await run_client(
        *protocol,
        "--auth",
        "key",
        "--prompt",
        f"read {tmp_path}/f.txt",
        agent=TOOL_AGENT,
        cwd=tmp_path,
        env=KEY,
    )
    assert status == 0, err
    assert out.splitlines()[:3] == [
        "agent: sdk-tool-agent 0.12.1, protocol v1",
        "auth: API key",
        "session: sess_tool",
    ]
    assert reply(out) == "read: the file"


async def test_a_failed_authentication_is_one_line_error(tmp_path: Path) -> None:
    status, _, err = await run_client(
        "--auth", "key", "--prompt", "hi", agent=TOOL_AGENT, cwd=tmp_path
    )  # SDK_AGENT_KEY not set: the agent refuses
    assert one_line_error(status, err) == (
        "acp-client: authenticate failed: Authentication required (-32000):"
        ' {"reason":"key failed"}'  # compact JSON, not a Python repr
    )


async def test_an_auth_id_the_agent_does_not_offer_is_one_line_error(
    tmp_path: Path,
) -> None:
    status, _, err = await run_client(
        "--auth", "nope", "--prompt", "hi", agent=TOOL_AGENT, cwd=tmp_path
    )
    assert one_line_error(status, err) == (
        "acp-client: --auth nope: not a method of the agent (it offers: key, token, env)"
    )


# -- a controlling terminal for the client ------------------------------------------


def make_controlling_terminal() -> None:  # runs in the child before exec
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


async def run_client_on_a_terminal(
    *options: str,
    agent: list[str],
    cwd: Path,
    env: dict[str, str],
    answers: dict[bytes, bytes],
    typed: bytes = b"",
) -> tuple[int, str, str]:
    """The client with a pseudo-terminal as stdin and controlling terminal;
    each question seen there (a key of ``answers``) is answered; ``typed`` is
    typed ahead (read by the first reader of the terminal).  Returns
    (status, stdout, what the terminal showed)."""
    master, slave = os.openpty()
    os.write(master, typed)
    with trio.fail_after(TIMEOUT):
        process = await trio.lowlevel.open_process(
            [*CLIENT, *options, "--", *agent],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=child_env() | env,
            preexec_fn=make_controlling_terminal,
        )
        os.close(slave)
        shown = bytearray()
        out = bytearray()
        pending = dict(answers)

        async def terminal() -> None:
            tty = trio.lowlevel.FdStream(master)
            while True:
                try:
                    data = await tty.receive_some()
                except trio.BrokenResourceError:  # EIO: nobody has it open now
                    return
                if not data:
                    return
                shown.extend(data)
                for question, answer in list(pending.items()):
                    if question in shown:
                        del pending[question]
                        await tty.send_all(answer)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(terminal)
            assert process.stdout is not None
            while data := await process.stdout.receive_some():
                out.extend(data)
            status = await process.wait()
            nursery.cancel_scope.cancel()
    return status, out.decode(), shown.decode(errors="replace")


async def test_a_terminal_login_runs_the_agent_command_then_starts_over(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "logged-in"
    status, out, _ = await run_client_on_a_terminal(
        "--protocol",
        "1",
        "--auth",
        "login",
        "--prompt",
        f"read {tmp_path}/logged-in",
        agent=TOOL_AGENT,
        cwd=tmp_path,
        env={"SDK_AGENT_LOGIN": str(marker)},
        answers={},
    )
    assert status == 0, out
    lines = out.splitlines()
    assert lines[:3] == [
        "agent: sdk-tool-agent 0.12.1, protocol v1",
        "auth: Log in: running the agent's login",
        "login: done",  # the login process ran on this terminal's stdout
    ]
    assert lines[3] == "agent: sdk-tool-agent 0.12.1, protocol v1"  # reconnected
    assert reply(out) == "read: logged in"


async def test_a_terminal_login_runs_on_the_users_terminal(tmp_path: Path) -> None:
    # an interactive login reads what the user types: it inherits the terminal
    marker = tmp_path / "logged-in"
    status, out, _ = await run_client_on_a_terminal(
        "--protocol",
        "1",
        "--auth",
        "login",
        "--prompt",
        f"read {marker}",
        agent=TOOL_AGENT,
        cwd=tmp_path,
        env={"SDK_AGENT_LOGIN": str(marker), "SDK_AGENT_LOGIN_ASKS": "1"},
        answers={},
        typed=b"1234\n",  # its prompt goes to stdout (a pipe here): typed ahead
    )
    assert status == 0, out
    assert "login code: " in out
    assert marker.read_text() == "logged in with 1234\n"


# -- files ------------------------------------------------------------------------------


async def test_fs_reads_files_inside_the_cwd_and_the_added_directories(
    tmp_path: Path,
) -> None:
    cwd, extra = tmp_path / "cwd", tmp_path / "extra"
    cwd.mkdir()
    extra.mkdir()
    (cwd / "a.txt").write_text("one\ntwo\nthree\n")
    (extra / "b.txt").write_text("bee")
    status, out, err = await tool_turn(f"read {cwd}/a.txt", cwd)
    assert status == 0, err
    assert reply(out) == "read: one\ntwo\nthree"
    status, out, err = await tool_turn(
        f"read {extra}/b.txt", cwd, "--add-dir", str(extra)
    )
    assert status == 0, err
    # this agent does not take additionalDirectories: the client serves them anyway
    assert "note: the agent takes no additional directories (--add-dir)" in out
    assert reply(out) == "read: bee"


@pytest.mark.parametrize("target", ["outside", "traversal", "symlink", "relative"])
async def test_fs_refuses_paths_outside_the_sessions_directories(
    target: str, tmp_path: Path
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (cwd / "link.txt").symlink_to(tmp_path / "secret.txt")
    path = {
        "outside": f"{tmp_path}/secret.txt",
        "traversal": f"{cwd}/../secret.txt",
        "symlink": f"{cwd}/link.txt",
        "relative": "secret.txt",
    }[target]
    for command in (f"read {path}", f"write {path} overwritten"):
        status, out, err = await tool_turn(command, cwd, "--yes")
        assert status == 0, err
        assert reply(out).startswith("error: "), out
        assert "secret" not in reply(out)
    assert (tmp_path / "secret.txt").read_text() == "secret"


async def test_fs_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    status, out, err = await tool_turn(f"read {tmp_path}/pipe", tmp_path)
    assert status == 0, err
    assert reply(out) == "error: Invalid params: not a regular file"


async def test_fs_write_with_yes_is_allowed_once_and_creates_the_file(
    tmp_path: Path,
) -> None:
    status, out, err = await tool_turn(
        f"write {tmp_path}/new/dir/f.txt hello there", tmp_path, "--yes"
    )
    assert status == 0, err
    assert f"allow: write {tmp_path}/new/dir/f.txt (11 bytes) (--yes)" in out
    assert reply(out) == "wrote"
    assert (tmp_path / "new" / "dir" / "f.txt").read_text() == "hello there"


async def test_fs_write_without_yes_and_without_a_terminal_is_refused(
    tmp_path: Path,
) -> None:
    status, out, err = await tool_turn(f"write {tmp_path}/f.txt hello", tmp_path)
    assert status == 0, err
    assert (
        f"allow: write {tmp_path}/f.txt (5 bytes): no terminal to ask, refused" in out
    )
    assert reply(out) == "error: Permission denied by the user"
    assert not (tmp_path / "f.txt").exists()


@pytest.mark.parametrize(("answer", "written"), [(b"y\n", True), (b"n\n", False)])
async def test_fs_write_asks_the_user_on_the_terminal(
    answer: bytes, written: bool, tmp_path: Path
) -> None:
    status, out, shown = await run_client_on_a_terminal(
        "--protocol",
        "1",
        "--auth",
        "key",
        "--prompt",
        f"write {tmp_path}/f.txt hello",
        agent=TOOL_AGENT,
        cwd=tmp_path,
        env=KEY,
        answers={b"[y/N] > ": answer},
    )
    assert status == 0, out
    assert f"allow: write {tmp_path}/f.txt (5 bytes)? [y/N] > " in shown
    assert (tmp_path / "f.txt").exists() == written
    assert reply(out) == (
        "wrote" if written else "error: Permission denied by the user"
    )


# -- terminals --------------------------------------------------------------------------


async def test_terminal_runs_the_command_with_bounded_output_and_its_exit_status(
    tmp_path: Path,
) -> None:
    status, out, err = await tool_turn(
        "run sh -c 'seq 1 100; exit 3'", tmp_path, "--yes"
    )
    assert status == 0, err
    assert f"allow: run sh -c 'seq 1 100; exit 3' (in {tmp_path}) (--yes)" in out
    head, _, output = reply(out).partition(": ")
    assert head == "exit 3 signal None truncated True"
    # the last 64 bytes the agent asked for, cut at a line start here
    assert output.split() == [str(n) for n in range(80, 101)]


async def test_terminal_output_is_cut_at_a_character_boundary(tmp_path: Path) -> None:
    status, out, err = await tool_turn(
        'run python3 -c \'print("é" * 100, end="")\'', tmp_path, "--yes"
    )
    assert status == 0, err
    assert reply(out) == "exit 0 signal None truncated True: " + "é" * 32


async def test_terminal_without_yes_and_without_a_terminal_is_refused(
    tmp_path: Path,
) -> None:
    status, out, err = await tool_turn(f"run touch {tmp_path}/ran", tmp_path)
    assert status == 0, err
    assert reply(out) == "error: Permission denied by the user"
    assert not (tmp_path / "ran").exists()


async def test_terminal_kill_ends_the_command(tmp_path: Path) -> None:
    status, out, err = await tool_turn("kill sleep 30", tmp_path, "--yes")
    assert status == 0, err
    assert reply(out) == "killed: exit None signal SIGTERM"


def alive(pid: int) -> bool:
    """Running, not merely a zombie nobody reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_a_terminal_left_running_is_killed_with_its_group_when_the_client_exits(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $$ $! > {pids}; echo ready; wait"
    status, out, err = await tool_turn(f"start sh -c '{script}'", tmp_path, "--yes")
    assert status == 0, err
    assert reply(out).startswith("started term_") and reply(out).endswith(": ready")
    shell, child = (int(p) for p in pids.read_text().split())
    assert not alive(shell) and not alive(child)


# -- permissions and repeated output ----------------------------------------------------


async def test_yes_never_picks_allow_always(tmp_path: Path) -> None:
    status, out, err = await tool_turn("tool", tmp_path, "--yes")
    assert status == 0, err
    assert "permission: Risky tool: No [reject_once] (--yes)" in out.splitlines()
    assert "'optionId': 'no'" in reply(out)


async def test_repeated_tool_call_lines_and_an_echoed_prompt_are_printed_once() -> None:
    status, out, err = await run_client(
        "--prompt", "build it please", agent=[PYTHON, REPEAT_AGENT]
    )
    assert status == 0, err
    assert out.splitlines() == [
        "agent: repeat-agent 1, protocol v1",
        "session: s1",
        "you: build it please",
        "agent: Working.",
        "tool c1: Build [pending]",
        "tool c1: Build [in_progress]",
        "tool c1: Build [completed]",
        "    built",
        "you: a real user message",
        "stop reason: end_turn",
    ]


async def test_a_turn_of_the_official_sdk_agent(tmp_path: Path) -> None:
    status, out, err = await run_client(
        "--yes", "--prompt", "hello sdk", agent=[PYTHON, OFFICIAL_AGENT], cwd=tmp_path
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "agent: official-sdk-agent 0.12.1, protocol v1"
    assert "agent: You said: hello sdk" in lines
    assert "permission: Echo tool: Allow [allow_once] (--yes)" in lines
    assert "tool call_1: Echo tool [completed]" in lines
    assert "usage: 42/1000 tokens (4.2%), cost 0.500000 EUR" in lines
    assert lines[-1] == "stop reason: end_turn"


async def test_ctrl_c_cancels_a_turn_of_the_official_sdk_agent() -> None:
    with trio.fail_after(TIMEOUT):
        process = await trio.lowlevel.open_process(
            [*CLIENT, "--prompt", "wait", "--", PYTHON, OFFICIAL_AGENT],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=child_env(),
            start_new_session=True,
        )
        assert process.stdout is not None
        out = bytearray()
        try:
            while b"agent: waiting" not in out:
                out += await process.stdout.receive_some()
            os.killpg(process.pid, signal.SIGINT)
            while data := await process.stdout.receive_some():
                out += data
            status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert out.decode().splitlines()[-2:] == [
        "^C: cancelling (Ctrl-C again to quit)",
        "stop reason: cancelled",
    ]
    assert status == 130
