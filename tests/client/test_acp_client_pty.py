"""``acp-client`` in a pseudo-terminal against scripted agents (issue 22):
shell-string terminals, one question per operation, bounded terminals, none
left behind, signals, small reads."""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pty import CLIENT, ECHO, SCRIPTED, Pty, gone


@pytest.fixture
def run(tmp_path: Path) -> Iterator[list[Pty]]:
    started: list[Pty] = []
    yield started
    for p in started:
        p.close()


def client(started: list[Pty], cwd: Path, *options: str, agent: list[str]) -> Pty:
    p = Pty([*CLIENT, *options, "--", *agent], cwd, {"SHELL": "/bin/sh"})
    started.append(p)
    return p


def test_a_command_without_args_runs_through_the_users_shell(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(
        run, tmp_path, "--yes", "--prompt", "shell echo one && echo two", agent=SCRIPTED
    )
    assert p.wait() == 0, p.text()
    assert "run 'echo one && echo two' via /bin/sh -c" in p.text()
    assert "exit 0: one\n" in p.text()  # both commands ran: a shell ran the line


def test_a_command_the_user_allowed_for_its_tool_call_is_asked_once(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(run, tmp_path, "--prompt", "shell echo hi", agent=SCRIPTED)
    p.expect("permission: `echo hi`? [1] Allow [allow_once]")
    p.send("1\n")
    assert p.wait() == 0, p.text()
    assert "allowed for t1" in p.text()
    assert "exit 0: hi" in p.text()
    assert "? [y/N]" not in p.text()  # no second question


def test_a_write_the_user_allowed_for_its_tool_call_is_asked_once(
    tmp_path: Path, run: list[Pty]
) -> None:
    target = tmp_path / "out.txt"
    p = client(run, tmp_path, "--prompt", f"write {target} hello", agent=SCRIPTED)
    p.expect(f"permission: Edit {target}? [1] Allow")
    p.send("1\n")
    assert p.wait() == 0, p.text()
    assert target.read_text() == "hello"
    assert "? [y/N]" not in p.text()
    assert f"write {target} (5 bytes): allowed for t2" in p.text()


def test_a_write_no_permission_covers_is_asked(tmp_path: Path, run: list[Pty]) -> None:
    # the agent asked for another file: this write is asked (once)
    target = tmp_path / "out.txt"
    p = client(run, tmp_path, "--prompt", f"write {target} hello", agent=SCRIPTED)
    p.expect("? [1] Allow")
    p.send("2\n")  # rejected: the agent says so and writes nothing
    assert p.wait() == 0, p.text()
    assert "refused" in p.text()
    assert not target.exists()


def test_terminals_at_once_are_bounded(tmp_path: Path, run: list[Pty]) -> None:
    p = client(run, tmp_path, "--yes", "--prompt", "terminals 20", agent=SCRIPTED)
    assert p.wait() == 0, p.text()
    assert "16 terminals at once at most" in p.text()
    assert "made 16" in p.text()


def test_terminals_created_at_once_are_bounded_when_reserved(
    tmp_path: Path, run: list[Pty]
) -> None:
    # issue 29 item 5: a terminal/create counts from its check on, not from
    # its process started: 40 at once run 16, the rest are refused
    prompt = "terminals_at_once 40"
    p = client(run, tmp_path, "--yes", "--prompt", prompt, agent=SCRIPTED)
    assert p.wait() == 0, p.text()
    assert "made 16, refused 24" in p.text()


def test_a_released_terminal_is_ended_when_the_client_exits(
    tmp_path: Path, run: list[Pty]
) -> None:
    pidfile = tmp_path / "terminal.pid"
    p = client(run, tmp_path, "--yes", "--prompt", f"orphan {pidfile}", agent=SCRIPTED)
    assert p.wait() == 0, p.text()
    assert "released" in p.text()
    # it ignores SIGTERM and the client left within the grace: killed all the same
    assert gone(int(pidfile.read_text())), "the released terminal outlived the client"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_turn_and_the_agent(
    tmp_path: Path, run: list[Pty], signum: int
) -> None:
    pidfile = tmp_path / "agent.pid"
    agent = [*SCRIPTED, "--ignore-eof", "--pidfile", str(pidfile)]
    p = client(run, tmp_path, "--prompt", "hang", agent=agent)
    p.expect("hanging")
    os.kill(p.pid, signum)
    assert p.wait() == 128 + signum, p.text()
    assert gone(int(pidfile.read_text())), "the agent outlived the client"


def test_sigterm_waits_for_the_cancelled_turns_answer(
    tmp_path: Path, run: list[Pty]
) -> None:
    # docs/client.md: session/cancel, up to 1 s for the answer, then leave
    p = client(run, tmp_path, "--yes", "--prompt", "wait", agent=ECHO)
    p.expect("Waiting until you cancel this turn.")
    os.kill(p.pid, signal.SIGTERM)
    assert p.wait() == 128 + signal.SIGTERM, p.text()
    assert "stop reason: cancelled" in p.text()


def test_read_with_line_and_limit_reads_only_the_lines_asked(
    tmp_path: Path, run: list[Pty]
) -> None:
    big = tmp_path / "big.log"
    with open(big, "wb") as f:  # 20 MiB (sparse): more than a whole read takes
        f.write(b"first\nsecond\nthird\n")
        f.truncate(20 * 1024 * 1024)
    p = client(run, tmp_path, "--yes", "--prompt", f"read {big} 2 1", agent=SCRIPTED)
    assert p.wait() == 0, p.text()
    assert "read 7: 'second\\n'" in p.text()


def tee(log: Path, agent: list[str]) -> list[str]:
    """``agent`` with every line the client sends it copied to ``log``."""
    line = " ".join(shlex.quote(a) for a in agent)
    return ["/bin/sh", "-c", f"tee {shlex.quote(str(log))} | {line}"]


def test_leaving_a_turn_sends_no_cancel_request_to_the_agent(
    tmp_path: Path, run: list[Pty]
) -> None:
    # v1 agents do not implement $/cancel_request ("Method not found")
    log = tmp_path / "to-agent.jsonl"
    p = client(run, tmp_path, "--prompt", "stubborn", agent=tee(log, SCRIPTED))
    p.expect("ignoring session/cancel")
    p.send("\x03")  # Ctrl-C: session/cancel, which this agent ignores
    p.expect("Ctrl-C again to quit")
    p.send("\x03")  # the second: leave
    assert p.wait() == 130, p.text()
    sent = log.read_text()
    assert '"session/cancel"' in sent
    assert "$/cancel_request" not in sent


def test_a_timed_out_request_sends_no_cancel_request(
    tmp_path: Path, run: list[Pty]
) -> None:
    log = tmp_path / "to-agent.jsonl"
    agent = tee(log, [*SCRIPTED, "--slow-new"])
    p = client(run, tmp_path, "--timeout", "8", "--prompt", "hi", agent=agent)
    assert p.wait() == 1, p.text()
    assert "session/new: no answer within 8 s (--timeout)" in p.text()
    assert '"session/new"' in log.read_text()
    assert "$/cancel_request" not in log.read_text()


def test_the_prompt_loop_runs_turns_and_commands(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(run, tmp_path, "--yes", agent=ECHO)  # no --prompt, a terminal: a loop
    p.expect("> ")
    p.send("hello there\n")
    p.expect("stop reason: end_turn\n> ")
    p.send("/plan\n")
    p.expect("plan: [completed] Echo the prompt back")
    p.send("/tools\n")
    p.expect("tool call_1: Echo 11 characters [completed]")
    p.send("second turn\n")
    p.expect("You said: second turn")
    p.expect("stop reason: end_turn\n> ")
    p.send("\x1b[A\n")  # up: readline's history gives the last prompt again
    p.expect("You said: second turn")
    p.expect("stop reason: end_turn\n> ")
    p.send("/nope\n")
    p.expect("error: /nope: no such command")
    # Ctrl-D is end of input once readline holds the terminal again: typed
    # between two reads, the tty's line discipline would swallow it.
    p.expect("> ")
    p.send("\x04")  # Ctrl-D: leave
    assert p.wait() == 0, p.text()


def test_the_prompt_loop_switches_mode_and_model_by_config_option(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(run, tmp_path, agent=SCRIPTED)
    p.expect("> ")
    p.send("/options\n")
    p.expect("option model (model): small  [small, large]")
    p.send("/mode code\n")
    p.expect("option mode: code")
    p.send("/model large\n")
    p.expect("option model: large")
    p.send("which\n")
    p.expect("mode=code model=large")
    p.expect("stop reason: end_turn\n> ")
    p.send("/sessions\n")
    p.expect("session s1: one")
    p.send("/quit\n")
    assert p.wait() == 0, p.text()
