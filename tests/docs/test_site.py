"""The documentation site builds with warnings as errors and shows what it promises.

The same build as ``nox -s docs`` (into a temporary folder), run with the
suite so that a docstring change that breaks the strict build fails here too,
not only in CI's docs step.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _text(page: Path) -> str:
    """The page's text, tags dropped, whitespace collapsed."""
    raw = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
    return " ".join(html.unescape(raw).split())


def test_reference_shows_each_generated_field_with_its_type_and_docstring(
    site: Path,
) -> None:
    text = _text(site / "reference" / "v1" / "index.html")
    # InitializeRequest.client_capabilities: signature, then the schema's text
    assert "client_capabilities : ClientCapabilities | UnsetType = UNSET" in text
    assert "Capabilities supported by the client. Schema default:" in text
    # what `meta` is, said once on the base Struct
    assert "The _meta property is reserved by ACP" in text
    v2 = _text(site / "reference" / "v2" / "index.html")
    assert "The latest protocol version supported by the client." in v2
    assert "The _meta property is reserved by ACP" in v2


def test_reference_renders_the_runtime_docstrings_as_markdown(site: Path) -> None:
    page = (site / "reference" / "acp_trio" / "index.html").read_text()
    # reST roles became links or code, literal blocks became code blocks
    assert ":class:" not in page and ":meth:" not in page
    assert 'href="#acp_trio.ProtocolVersionError"' in page
    assert "class EchoAgent" in _text(site / "reference" / "acp_trio" / "index.html")


def test_quick_start_and_guide_pages_are_built(site: Path) -> None:
    for page in ("quickstart", "guide", "examples", "models", "vendoring", "spec-bump"):
        assert (site / page / "index.html").is_file(), page
