"""Every literal the generator writes is written as ``ruff format`` writes it,
whatever the schema holds: quotes, backslashes, control characters, unicode."""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp_codegen.__main__ import generate
from acp_codegen.literal import py_literal
from hypothesis import given
from hypothesis import strategies as st


def _ruff() -> str:
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    assert Path(found).exists(), "ruff is a test dependency and must be installed"
    return found


def _ruff_format(source: str) -> str:
    data = source.encode("utf-8", "surrogatepass")
    done = subprocess.run(
        [_ruff(), "format", "-"], input=data, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode("utf-8", "surrogatepass")


#: the characters a literal gets wrong: quotes, backslashes, line breaks of
#: every kind, controls, surrogates, wide and combining characters
_TRICKY = st.sampled_from(
    [
        *['"', "'", "\\", "\n", "\r", "\t", "\x00", "\x7f", "\x85", "\u2028"],
        *["\ud800", "\u0300", "é", "😀", "{", "}", "$", "N", "x"],
    ]
)
_TEXT = st.lists(_TRICKY | st.characters(), max_size=12).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.lists(_TEXT, min_size=1, max_size=8))
def test_a_string_literal_is_written_as_ruff_formats_it(texts: list[str]) -> None:
    source = "".join(f"x = {py_literal(text)}\n" for text in texts)
    assert _ruff_format(source) == source
    assert [ast.literal_eval(py_literal(t)) for t in texts] == texts


@given(_JSON)
def test_a_json_value_literal_is_written_as_ruff_formats_it(value: Any) -> None:
    source = f"x = {py_literal(value)}\n"
    if len(source) <= 88:  # longer: ruff splits the line (layout, not the literal)
        assert _ruff_format(source) == source
    assert ast.literal_eval(py_literal(value)) == value


def test_a_schema_pattern_tag_and_enum_value_are_written_as_ruff_formats_them(
    tmp_path: Path,
) -> None:
    defs: dict[str, Any] = {
        "Code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "Quote": {"type": "string", "enum": ["it's", 'say "hi"', "back\\slash"]},
        "Shape": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "const": "it's"},
                        "code": {"$ref": "#/$defs/Code"},
                    },
                    "required": ["kind"],
                }
            ]
        },
    }
    spec = tmp_path / "spec" / "v1"
    spec.mkdir(parents=True)
    (spec / "schema.json").write_text(json.dumps({"$defs": defs}))
    (spec / "meta.json").write_text(json.dumps({"version": 1, "agentMethods": {}}))
    (spec / "UPSTREAM.json").write_text(
        json.dumps({"package": "p", "version": "1.0.0"})
    )
    out = tmp_path / "literals_a"
    generate(tmp_path / "spec", out)
    source = (out / "v1.py").read_text()
    assert 'pattern="^[A-Z]{3}$"' in source
    done = subprocess.run(
        [_ruff(), "format", "--check", "--diff", str(out)],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    sys.path.insert(0, str(tmp_path))
    try:
        v1 = importlib.import_module("literals_a.v1")
    finally:
        sys.path.remove(str(tmp_path))
    assert v1.decode(b'"ABC"', v1.Code) == "ABC"
