"""Every spec line the inspector and the ``check`` cases cite is where they say.

The pages are copies in tests/fixtures/acp-docs (see its README): each
:class:`~acp_inspect.SpecRef` quote must stand on its cited line in each
protocol version it names, and its level must be the one written there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from acp_inspect import REFS, SpecRef
from acp_inspect._cases import CASES
from acp_inspect._client_cases import CLIENT_CASES
from acp_inspect._spec import JSONRPC
from acp_inspect.rules import DEFAULT_RULES
from acp_inspect.rules.unadvertised_agent_method import GATED

DOCS = Path(__file__).resolve().parents[1] / "fixtures" / "acp-docs"
ACP_REFS = [r for r in REFS.values() if r.doc != JSONRPC and not r.reported]
KEYWORD = re.compile(r"\*\*(MUST NOT|MUST|SHOULD NOT|SHOULD|MAY)\*\*")
#: Levels read from a sentence without a bold keyword, each a reviewed reading:
INFERRED = {
    # the transports page's sequence diagram: the client ends the agent by closing stdin
    "close-stdin-terminate",
    # "An Agent may advertise a `terminal` method only when this capability is `true`"
    "terminal-auth-needs-capability",
    # extensibility: "it should respond with the standard "Method not found" error" (lowercase)
    "unknown-method",
    # tool calls: "`optionId` - The ID of the selected permission option" (a definition)
    "permission-option-offered",
    # terminals: "The `terminal/release` kills the command if still running" (a definition)
    "terminal-release-kills",
}


def _line(version: int, doc: str, number: int) -> str:
    lines = (DOCS / f"v{version}" / doc).read_text(encoding="utf-8").split("\n")
    assert 1 <= number <= len(lines), f"v{version}/{doc} has {len(lines)} lines"
    return lines[number - 1]


@pytest.mark.parametrize("ref", ACP_REFS, ids=lambda r: r.key)
def test_every_spec_quote_stands_on_its_cited_line(ref: SpecRef) -> None:
    assert ref.lines, "an ACP reference names its line in at least one version"
    for version, number in ref.lines:
        line = _line(version, ref.doc, number)
        assert ref.quote in line, f"{ref.cite(version)}: {line!r}"
        written = set(KEYWORD.findall(line))
        if ref.key in INFERRED:
            assert not written, f"{ref.key} now has a bold keyword: {line!r}"
        else:
            assert ref.level in written, f"{ref.cite(version)} says {written}"


def test_jsonrpc_references_cite_a_section_not_a_line() -> None:
    for ref in REFS.values():
        if ref.doc == JSONRPC:
            assert ref.section.startswith("§") and not ref.lines
            assert ref.line(1) is None and ref.cite().startswith("JSON-RPC 2.0 §")


def test_a_reported_bug_is_cited_by_its_repository_and_number() -> None:
    bugs = [r for r in REFS.values() if r.reported]
    assert bugs
    for ref in bugs:
        owner, repo, kind, number = ref.doc.split("/")[3:7]
        assert kind in ("issues", "pull") and number.isdigit()
        assert ref.cite() == f"{owner}/{repo}#{number}" and not ref.lines


def test_every_case_and_rule_cites_a_checked_reference() -> None:
    cited = [c.spec for c in CASES] + [r.spec for r in DEFAULT_RULES]
    cited += [c.spec for c in CLIENT_CASES]
    cited += [REFS[key] for key in GATED.values()]
    for spec in cited:
        assert REFS.get(spec.key) is spec, spec.key


def test_a_cite_from_docs_of_another_schema_than_the_one_spoken_says_so() -> None:
    """spec/v1 is the 2.4.0 package's schema; the docs in the repository are
    1.21.0's: the outputs say the lines are those, not the spoken schema's."""
    from acp_inspect._spec import DOCS_SCHEMA, stale_docs_note
    from acp_schema import v1, v2_alpha0

    docs = Path(__file__).parents[1] / "fixtures" / "acp-docs"
    assert f"schema {DOCS_SCHEMA[1]}" in (docs / "README.md").read_text()
    note = stale_docs_note(1, v1.SCHEMA_VERSION)
    assert note is not None and "not in the repository" in note
    assert f"the {DOCS_SCHEMA[1]} docs" in note and v1.SCHEMA_VERSION in note
    assert stale_docs_note(2, v2_alpha0.SCHEMA_VERSION) is None  # its own docs
