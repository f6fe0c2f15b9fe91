"""The transcript as text (one line per thing a user sees) and the assertions'
diffs, without a connection."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_core import (
    SessionTranscript,
    agent_text,
    plan,
    plan_entry,
    tool_call,
    tool_content,
    usage_update,
    user_text,
)
from acp_pytest import (
    MAX_DIFF_LINES,
    RecordedCall,
    assert_calls,
    assert_transcript,
    render_transcript,
)
from acp_schema import v1

#: docs/testing.md shows this rendering
DOCUMENTED = """\
user: hello
agent: You said: hello
  Working in /work
plan: [completed] Read the prompt
tool call_1 completed: Echo 5 characters
  | hello
mode: code
title: Fix the build
commands: test, build
usage: 15 / 200000
other: _vendor_update"""


def everything() -> SessionTranscript:
    transcript = SessionTranscript(version=v1)
    for update in (
        user_text("hello", message_id="u1"),
        agent_text("You said: hello\nWorking in /work", message_id="m1"),
        plan([plan_entry("Read the prompt", status="completed")]),
        tool_call(
            "call_1",
            "Echo 5 characters",
            status="completed",
            content=[tool_content("hello")],
        ),
        v1.CurrentModeUpdate(current_mode_id="code"),
        v1.SessionInfoUpdate(title="Fix the build"),
        v1.AvailableCommandsUpdate(
            available_commands=[
                v1.AvailableCommand(name="test", description="Run the tests"),
                v1.AvailableCommand(name="build", description="Build"),
            ]
        ),
        usage_update(15, 200_000),
    ):
        transcript.apply(update)
    transcript.apply({"sessionUpdate": "_vendor_update", "x": 1})
    return transcript


def test_the_transcript_renders_one_line_per_thing_a_user_sees() -> None:
    assert render_transcript(everything()) == DOCUMENTED


def test_the_documented_rendering_is_the_one_on_the_docs_page() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
    assert f"```text\n{DOCUMENTED}\n```" in page.read_text(encoding="utf-8")


def test_the_expected_text_is_dedented_and_its_blank_edges_ignored() -> None:
    assert_transcript(
        everything(),
        """
            user: hello
            agent: You said: hello
              Working in /work
            plan: [completed] Read the prompt
            tool call_1 completed: Echo 5 characters
              | hello
            mode: code
            title: Fix the build
            commands: test, build
            usage: 15 / 200000
            other: _vendor_update
        """,
    )


def test_not_exact_the_expected_lines_must_appear_in_order_among_others() -> None:
    assert_transcript(everything(), ["user: hello", "mode: code"], exact=False)
    with pytest.raises(AssertionError) as failed:
        assert_transcript(everything(), ["mode: code", "user: hello"], exact=False)
    assert str(failed.value).startswith(
        "the transcript lacks the expected lines, in this order (- expected, + actual):"
    )


def test_a_difference_fails_with_a_unified_diff() -> None:
    with pytest.raises(AssertionError) as failed:
        assert_transcript(everything(), DOCUMENTED.replace("mode: code", "mode: ask"))
    lines = str(failed.value).split("\n")
    assert lines[0] == (
        "the transcript differs from the expected one (- expected, + actual):"
    )
    assert "-mode: ask" in lines and "+mode: code" in lines


def test_a_long_diff_is_cut_at_max_diff_lines() -> None:
    calls = [RecordedCall("session/update", None)] * (MAX_DIFF_LINES * 2)
    with pytest.raises(AssertionError) as failed:
        assert_calls(calls, [])
    lines = str(failed.value).split("\n")
    assert len(lines) == 1 + MAX_DIFF_LINES + 1
    # a hunk header and one line per call: all but MAX_DIFF_LINES counted
    assert lines[-1] == f"... {MAX_DIFF_LINES + 1} more lines"
