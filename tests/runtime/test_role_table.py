"""acp_trio's header states its roles as a table (issue 27): each role of the
task pool, which task holds it, when it is handed over; and the table names
only methods that exist, so it cannot drift from the code silently."""

from __future__ import annotations

import re

from acp_trio import _connection
from acp_trio._pool import Role


def _role_table() -> list[str]:
    doc = _connection.__doc__ or ""
    rules = [
        i for i, line in enumerate(doc.splitlines()) if re.fullmatch(r"=+( +=+)+", line)
    ]
    assert len(rules) == 3, "one table: a rule above the header, below it, at its end"
    lines = doc.splitlines()
    header = lines[rules[0] + 1]
    assert header.split() == [
        "role",
        "which",
        "task",
        "holds",
        "it",
        "when",
        "it",
        "is",
        "handed",
        "over",
    ]
    return lines[rules[1] + 1 : rules[2]]


def test_the_trio_adapter_header_states_each_role_of_the_pool() -> None:
    body = "\n".join(_role_table())
    for role in Role:
        assert role.value[:4] in body  # "reading", "consuming"
    for method in ("_read", "_consume"):
        assert f"``{method}``" in body


def test_the_role_table_names_only_methods_of_the_connection() -> None:
    named = re.findall(r"``([\w.]+)``", "\n".join(_role_table()))
    assert "_write_loop" in named
    for name in named:
        first, *rest = name.split(".")
        found: object = getattr(
            _connection.Connection, first, getattr(_connection, first, None)
        )
        for part in rest:
            found = getattr(found, part, None)
        assert found is not None, f"the role table names {name!r}, which does not exist"
