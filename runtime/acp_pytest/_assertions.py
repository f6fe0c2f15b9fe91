"""Assertions over what a session said, failing with a readable diff.

A :class:`~acp_core.SessionTranscript` is rendered as text, one line per
thing a user would see (:func:`render_transcript`)::

    user: hello
    agent: You said: hello
    plan: [completed] Read the prompt
    tool call_1 completed: Echo 5 characters
      | hello
    usage: 21 / 200000

and :func:`assert_transcript` compares that text with the expected one: on
a difference the test fails with a unified diff (``-`` expected, ``+``
actual).  ``exact=False`` asks only that the expected lines appear, in that
order (others may come between).  :func:`assert_calls` does the same for the
methods a fake recorded.
"""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, cast

from acp_core import SessionTranscript

from ._schema_calls import RecordedCall

__all__ = [
    "MAX_DIFF_LINES",
    "assert_calls",
    "assert_transcript",
    "render_transcript",
]

#: Lines of diff shown in a failure message (the rest is counted, not shown):
#: ``max_diff_lines=`` of the assertions.
MAX_DIFF_LINES: Final = 200


def _tag(obj: object) -> str:
    """A variant's tag (its ``type`` or ``sessionUpdate``), however it is kept."""
    config = getattr(obj.__class__, "__struct_config__", None)
    tag = getattr(config, "tag", None)
    if isinstance(tag, str):
        return tag
    if isinstance(obj, Mapping):
        raw: Mapping[str, object] = cast("Mapping[str, object]", obj)
        return str(raw.get("type", raw.get("sessionUpdate", "?")))
    return type(obj).__name__


def _block(block: Any) -> str:
    """A content block as the user sees it: its text, or its kind and name."""
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    kind = _tag(block)
    for attr in ("uri", "name"):
        value = getattr(block, attr, None)
        if isinstance(value, str):
            return f"[{kind} {value}]"
    return f"[{kind}]"


def _indented(head: str, text: str) -> list[str]:
    """``head`` then ``text``; its further lines indented under it."""
    first, *rest = text.split("\n") if text else [""]
    return [f"{head}{first}".rstrip(), *(f"  {line}".rstrip() for line in rest)]


def _tool_content(item: Any) -> str:
    tag = _tag(item)
    if tag == "content":
        return _block(item.content)
    if tag == "diff":
        return f"[diff {item.path}]"
    if tag == "terminal":
        return f"[terminal {item.terminal_id}]"
    return f"[{tag}]"


def render_transcript(transcript: SessionTranscript) -> str:
    """The transcript as text: messages, plan, tool calls, usage, the rest.

    Messages in order of first appearance (``user:``, ``agent:``,
    ``thought:``), then the current plan's entries, the tool calls (id,
    status, title; their content indented with ``|``), the mode, the title,
    the commands, the usage, and the updates the transcript keeps aside
    (unknown and ``_`` ones) by their tag.
    """
    lines: list[str] = []
    for message in transcript.messages:
        text = "".join(_block(block) for block in message.content)
        lines += _indented(f"{message.role}: ", text)
    for entry in transcript.plan:
        lines.append(f"plan: [{entry.status}] {entry.content}")
    for call in transcript.tool_calls.values():
        lines.append(
            f"tool {call.tool_call_id} {call.status}: {call.title or ''}".rstrip()
        )
        for item in call.content:
            lines += _indented("  | ", _tool_content(item))
    if transcript.current_mode_id is not None:
        lines.append(f"mode: {transcript.current_mode_id}")
    if transcript.session_info.title is not None:
        lines.append(f"title: {transcript.session_info.title}")
    if transcript.available_commands:
        names = ", ".join(
            str(getattr(command, "name", _tag(command)))
            for command in transcript.available_commands
        )
        lines.append(f"commands: {names}")
    usage = transcript.usage
    if usage is not None:
        lines.append(f"usage: {usage.used} / {usage.size}")
    for update in transcript.other_updates:
        lines.append(f"other: {_tag(update)}")
    return "\n".join(lines)


def _expected_lines(expected: str | Iterable[str]) -> list[str]:
    if isinstance(expected, str):
        return textwrap.dedent(expected).strip("\n").split("\n")
    return list(expected)


def _in_order(wanted: Sequence[str], actual: Sequence[str]) -> bool:
    """Whether ``wanted`` is a subsequence of ``actual``."""
    remaining = iter(actual)
    return all(line in remaining for line in wanted)


def _diff(heading: str, wanted: list[str], actual: list[str], limit: int) -> str:
    diff = list(
        difflib.unified_diff(wanted, actual, "expected", "actual", lineterm="", n=3)
    )[2:]
    if len(diff) > limit:
        diff = [*diff[:limit], f"... {len(diff) - limit} more lines"]
    return "\n".join([f"{heading} (- expected, + actual):", *diff])


def assert_transcript(
    transcript: SessionTranscript,
    expected: str | Iterable[str],
    *,
    exact: bool = True,
    max_diff_lines: int = MAX_DIFF_LINES,
) -> None:
    """Assert that ``render_transcript(transcript)`` is ``expected``.

    ``expected`` is text (dedented, surrounding blank lines ignored) or its
    lines.  ``exact=False``: the expected lines appear in this order, others
    may come between.  Fails with a unified diff of the two renderings, cut
    at ``max_diff_lines``.
    """
    __tracebackhide__ = True
    wanted = _expected_lines(expected)
    actual = render_transcript(transcript).split("\n")
    if actual == wanted or (not exact and _in_order(wanted, actual)):
        return
    heading = (
        "the transcript differs from the expected one"
        if exact
        else "the transcript lacks the expected lines, in this order"
    )
    raise AssertionError(_diff(heading, wanted, actual, max_diff_lines))


def assert_calls(
    calls: Sequence[RecordedCall],
    expected: Iterable[str],
    *,
    exact: bool = True,
    max_diff_lines: int = MAX_DIFF_LINES,
) -> None:
    """Assert that the methods of ``calls`` (a fake's records) are ``expected``.

    ``exact=False``: the expected methods appear in this order, others may
    come between.  Fails with a unified diff of the two lists.
    """
    __tracebackhide__ = True
    wanted = list(expected)
    actual = [call.method for call in calls]
    if actual == wanted or (not exact and _in_order(wanted, actual)):
        return
    heading = (
        "the calls differ from the expected ones"
        if exact
        else "the calls lack the expected ones, in this order"
    )
    raise AssertionError(_diff(heading, wanted, actual, max_diff_lines))
