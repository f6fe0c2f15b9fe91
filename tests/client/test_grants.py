"""The rule of one question per operation (``acp_client.grants``), as a table."""

from __future__ import annotations

import pytest
from acp_client.grants import MAX_GRANTS, Grants, grant_for

ALLOWED = [
    # (title, locations, rawInput) of the allowed tool call
    ("`ls -la`", [], {"command": "ls -la"}),
    ("Edit /w/a.txt", ["/w/a.txt"], None),
    ("Write", [], {"file_path": "/w/b.txt", "content": "x"}),
]


@pytest.mark.parametrize(
    ("kind", "what", "covered"),
    [
        ("command", "ls -la", True),  # rawInput's command
        ("command", "ls", False),  # not the command allowed
        ("write", "/w/a.txt", True),  # a location
        ("write", "/w/./b.txt", True),  # a rawInput path, normalized
        ("write", "/w/c.txt", False),
        ("write", "x", False),  # a relative string is no path
    ],
)
def test_an_operation_named_by_an_allowed_tool_call_is_not_asked_again(
    kind: str, what: str, covered: bool
) -> None:
    grants = Grants()
    for number, (title, locations, raw) in enumerate(ALLOWED):
        grants.allow(grant_for("s1", f"t{number}", title, locations, raw))
    if kind == "command":
        found = grants.command("s1", [what])
    else:
        found = grants.write("s1", what)
    assert (found is not None) == covered


def test_a_grant_covers_one_operation_in_its_session() -> None:
    grants = Grants()
    grants.allow(grant_for("s1", "t1", None, ["/w/a.txt"], None))
    assert grants.write("s2", "/w/a.txt") is None  # another session
    assert grants.write("s1", "/w/a.txt") == "t1"
    assert grants.write("s1", "/w/a.txt") is None  # used up: asked


def test_grants_are_bounded() -> None:
    grants = Grants()
    for n in range(MAX_GRANTS + 10):
        grants.allow(grant_for("s1", f"t{n}", None, [f"/w/{n}"], None))
    assert len(grants.grants) == MAX_GRANTS
    assert grants.write("s1", "/w/0") is None  # the oldest went first
