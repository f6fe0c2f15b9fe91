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
