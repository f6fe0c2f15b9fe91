"""``acp-client``'s prompt loop in a pseudo-terminal against the reference
agent ``acp_echo`` (real processes): leaving, and the session commands
(issue 30)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _pty import CLIENT, ECHO, Pty


@pytest.fixture
def run() -> Iterator[list[Pty]]:
    started: list[Pty] = []
    yield started
    for p in started:
        p.close()


def loop(started: list[Pty], cwd: Path, *options: str) -> Pty:
    """The client's prompt loop (a terminal, no --prompt) against acp_echo."""
    p = Pty([*CLIENT, *options, "--", *ECHO], cwd, {"SHELL": "/bin/sh"})
    started.append(p)
    p.expect("> ")
    return p


def test_quit_after_a_cancelled_turn_exits_0(tmp_path: Path, run: list[Pty]) -> None:
    p = loop(run, tmp_path, "--yes")
    p.send("please wait\n")
    p.expect("Waiting until you cancel this turn.")
    p.send("\x03")  # Ctrl-C: the turn is cancelled, the loop goes on
    p.expect("stop reason: cancelled\n> ")
    p.send("/quit\n")
    assert p.wait() == 0, p.text()


@pytest.mark.parametrize("protocol", ["1", "2"])
def test_sessions_lists_the_agents_sessions_with_their_titles(
    tmp_path: Path, run: list[Pty], protocol: str
) -> None:
    p = loop(run, tmp_path, "--yes", "--protocol", protocol)
    p.send("the first prompt\n")
    p.expect("stop reason: end_turn\n> ")
    p.send("/sessions\n")
    p.expect("session sess_")
    p.expect(": the first prompt\n")
    p.send("/quit\n")
    assert p.wait() == 0, p.text()


@pytest.mark.parametrize("protocol", ["1", "2"])
def test_mode_switches_the_agents_mode(
    tmp_path: Path, run: list[Pty], protocol: str
) -> None:
    p = loop(run, tmp_path, "--protocol", protocol)
    p.send("/options\n")
    p.expect("option mode (mode): ask  [ask, code]")
    p.send("/mode code\n")
    p.expect("option mode: code")
    p.send("/options\n")
    p.expect("option mode (mode): code  [ask, code]")
    p.send("/quit\n")
    assert p.wait() == 0, p.text()


@pytest.mark.parametrize("protocol", ["1", "2"])
def test_set_sets_a_config_option_the_agent_then_uses(
    tmp_path: Path, run: list[Pty], protocol: str
) -> None:
    p = loop(run, tmp_path, "--yes", "--protocol", protocol)
    p.send("/set model shout\n")
    p.expect("option model: shout")
    p.send("hello there\n")
    p.expect("You said: HELLO THERE")
    p.expect("stop reason: end_turn\n> ")
    p.send("/set model whisper\n")  # not one of its values: the agent says so
    p.expect("error: session/set_config_option: Invalid params (-32602)")
    p.send("/quit\n")
    assert p.wait() == 0, p.text()
