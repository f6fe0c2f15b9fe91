"""Elicitation end to end (issue 30 item 2): ``acp-client`` in a
pseudo-terminal answers ``acp_echo``'s ``elicitation/create`` (a prompt with
"elicit" asks a form, one with "link" a page to open); real processes."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pty import CLIENT, ECHO, TIMEOUT, Pty


@pytest.fixture
def run() -> Iterator[list[Pty]]:
    started: list[Pty] = []
    yield started
    for p in started:
        p.close()


def client(started: list[Pty], cwd: Path, prompt: str, *options: str) -> Pty:
    # v1: the v2 draft both speak (2.0.0-alpha.0) has no elicitation
    p = Pty(
        [*CLIENT, "--protocol", "1", *options, "--prompt", prompt, "--", *ECHO], cwd
    )
    started.append(p)
    return p


NAME = '  Name [string] (default "world", required) - who to greet? > '
TIMES = "  Times [integer 1..3] (default 1)? > "
LOUD = "  Loud [boolean] (default false)? > "
COLOUR = "  Colour [string: red|green|blue] (required)? > "
REVIEW = "? [y]es, [e]dit, [d]ecline, [c]ancel > "


def test_a_form_is_asked_field_by_field_with_its_types_and_defaults(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(run, tmp_path, "elicit")
    p.expect("elicitation: the agent asks: How should I greet you?")
    p.expect(NAME)
    p.send("Ada\n")
    p.expect(TIMES)
    p.send("9\n")  # does not fit: said, asked again
    p.expect("  Times: at most 3")
    p.expect(TIMES)
    p.send("2\n")
    p.expect(LOUD)
    p.send("\n")  # Enter keeps the default
    p.expect(COLOUR)
    p.send("\n")  # required, no default: asked again
    p.expect("  Colour: required")
    p.expect(COLOUR)
    p.send("green\n")
    p.expect(
        'elicitation: send {"name": "Ada", "times": 2, "loud": false, "colour": "green"}'
    )
    p.expect(REVIEW)
    p.send("y\n")
    p.expect("Hello, Ada! Hello, Ada! (in green)")
    assert p.wait() == 0, p.text()


def test_a_form_is_reviewed_and_edited_before_it_is_sent(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(run, tmp_path, "elicit")
    for question, answer in ((NAME, "Ada"), (TIMES, ""), (LOUD, ""), (COLOUR, "red")):
        p.expect(question)
        p.send(answer + "\n")
    p.expect(REVIEW)
    p.send("e\n")  # each question again, the values given as defaults
    p.expect('  Name [string] (default "Ada", required)')
    p.send("\n")
    p.expect(TIMES)
    p.send("\n")
    p.expect(LOUD)
    p.send("y\n")
    p.expect('  Colour [string: red|green|blue] (default "red", required)? > ')
    p.send("\n")
    p.expect(REVIEW)
    p.send("y\n")
    p.expect("HELLO, ADA! (in red)")
    assert p.wait() == 0, p.text()


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        (["/decline"], "You declined: no greeting."),
        (["/cancel"], "You cancelled: no greeting."),
        (["", "", "", "blue", "d"], "You declined: no greeting."),
        (["", "", "", "blue", "c"], "You cancelled: no greeting."),
    ],
)
def test_a_form_is_declined_or_cancelled_at_any_question(
    tmp_path: Path, run: list[Pty], answers: list[str], said: str
) -> None:
    p = client(run, tmp_path, "elicit")
    for answer in answers:
        p.expect(" > ")
        p.send(answer + "\n")
    p.expect(said)
    assert p.wait() == 0, p.text()


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("y", "You opened the page."),
        ("n", "You declined: no page."),
        ("c", "You cancelled: no page."),
    ],
)
def test_a_url_is_shown_with_its_host_and_opened_only_with_consent(
    tmp_path: Path, run: list[Pty], answer: str, said: str
) -> None:
    p = client(run, tmp_path, "please link")
    p.expect("elicitation: the agent asks you to open a page on example.com:")
    p.expect("  https://example.com/echo-agent/consent?elicitationId=elicit_")
    p.expect("open it (in your browser)? [y]es, [n]o (decline), [c]ancel > ")
    p.send(answer + "\n")
    p.expect(said)
    if answer == "y":  # the agent's elicitation/complete
        assert "elicitation: https://example.com/echo-agent/consent" in p.text()
    assert p.wait() == 0, p.text()


def test_yes_fills_in_no_form_without_every_required_default(
    tmp_path: Path, run: list[Pty]
) -> None:
    p = client(run, tmp_path, "elicit", "--yes")
    p.expect("elicitation: cancelled (--yes fills in no form)")
    p.expect("You cancelled: no greeting.")
    assert p.wait() == 0, p.text()


def test_without_a_terminal_an_elicitation_is_cancelled(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLIENT, "--protocol", "1", "--prompt", "elicit", "--", *ECHO],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=TIMEOUT,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot open
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "You cancelled: no greeting." in done.stdout


def test_the_agent_asks_no_mode_the_client_did_not_advertise(tmp_path: Path) -> None:
    # v2's draft has no elicitation: the agent says so instead of asking
    done = subprocess.run(
        [*CLIENT, "--protocol", "2", "--prompt", "elicit", "--", *ECHO],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=TIMEOUT,
        start_new_session=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Your client takes no form elicitation, so I do not ask." in done.stdout
