"""What the README and the docs tell a new user holds (issue 30): how to
install, what the tests provision, which preview methods exist, what npm
says."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from acp_schema import v1

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PAGES = [README, *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))]


def test_install_lines_name_no_package_missing_from_pypi() -> None:
    # acp-msgspec is not on PyPI: an install line names the clone, not the
    # package (the runtime's one-line "X needs trio: ..." messages are quoted as they are)
    pypi = re.compile(r"pip install ['\"]?acp-msgspec")
    found = [
        line
        for page in PAGES
        for line in page.splitlines()
        if pypi.search(line) and " needs " not in line
    ]
    assert found == []
    assert 'pip install -e ".[client]"' in README


def test_the_provisioning_note_names_every_package_the_tests_provision() -> None:
    spec = importlib.util.spec_from_file_location(
        "provision", ROOT / ".ci" / "provision.py"
    )
    assert spec is not None and spec.loader is not None
    provision = importlib.util.module_from_spec(spec)
    sys.modules["provision"] = provision  # its dataclasses look themselves up
    spec.loader.exec_module(provision)
    note = README.split("`nox -s tests` first installs", 1)[1].split("\n\n", 1)[0]
    for need in provision.NEEDS:
        assert f"`{need.debian}`" in note, need.debian


def test_the_readme_names_only_preview_methods_the_tables_have() -> None:
    text = " ".join(README.split())
    listed = text.split("add the methods in preview (", 1)[1].split(")", 1)[0]
    names = re.findall(r"`([\w/*]+)`", listed)
    assert names
    methods = {*v1.AGENT_METHODS_UNSTABLE, *v1.CLIENT_METHODS_UNSTABLE}
    for name in names:
        prefix = name.removesuffix("*")
        assert any(
            m == name or (name.endswith("*") and m.startswith(prefix)) for m in methods
        ), name


def test_the_spec_bump_page_shows_npms_code_for_an_unknown_version() -> None:
    # `npm pack @agentclientprotocol/sdk@0.0.1`: the package exists, the version
    # does not, and npm says ETARGET (E404 is for a package that does not exist)
    page = (ROOT / "docs" / "spec-bump.md").read_text()
    line = next(line for line in page.splitlines() if "sdk@0.0.1 failed" in line)
    assert "code ETARGET" in line
