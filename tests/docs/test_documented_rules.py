"""Rules the docs state, checked against the code they describe."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import acp_schema
import acp_trio
import pytest
from _upstream import needs
from acp_schema import (
    v1,
    v1_unstable,
)
from acp_schema import (
    v2_alpha0 as v2,
)
from acp_schema import (
    v2_alpha0_unstable as v2_unstable,
)
from acp_trio import _connection

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
MODULES = [v1, v1_unstable, v2, v2_unstable]


def _snake(wire: str) -> str:
    """The documented rule: snake_case, each ``/`` becoming ``_``."""
    name = wire.replace("/", "_")
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _tables(module: types.ModuleType) -> list[dict[str, acp_schema.v1.Method]]:
    names = ("AGENT_METHODS", "CLIENT_METHODS")
    return [
        getattr(module, n + s)
        for n in names
        for s in ("", "_UNSTABLE")
        if hasattr(module, n + s)
    ]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_handler_name_is_the_wire_name_in_snake_case(module: types.ModuleType) -> None:
    for table in _tables(module):
        for wire, method in table.items():
            assert method.handler == _snake(wire), wire


#: the guide's handler table: (wire name, note, handler name) per row
HANDLER_ROWS: list[tuple[str, str, str]] = re.findall(
    r"^\| `([^`]+)`(?: \(([^)]*)\))? \| `([^`]+)` \|$", GUIDE.read_text(), re.M
)


@pytest.mark.parametrize(
    ("wire", "note", "handler"),
    [
        pytest.param(*row, id=row[0], marks=needs("v1", method=row[0]))
        for row in HANDLER_ROWS
    ],
)
def test_guide_handler_table_matches_the_method_tables(
    wire: str, note: str, handler: str
) -> None:
    assert len(HANDLER_ROWS) >= 5
    if "unstable" in note:
        tables = {
            "agent": v1.AGENT_METHODS_UNSTABLE,
            "client": v1.CLIENT_METHODS_UNSTABLE,
        }
    else:
        tables = {"agent": v1.AGENT_METHODS, "client": v1.CLIENT_METHODS}
    side = "client" if "client" in note else "agent"
    assert tables[side][wire].handler == handler, wire


def test_vendored_acp_schema_imports_with_msgspec_alone(tmp_path: Path) -> None:
    # docs/vendoring.md: copy the folder under another package, import it there
    vendor = tmp_path / "yourpackage" / "_vendor"
    vendor.mkdir(parents=True)
    (tmp_path / "yourpackage" / "__init__.py").write_text("")
    (vendor / "__init__.py").write_text("")
    source = Path(acp_schema.__file__).parent
    shutil.copytree(
        source, vendor / "acp_schema", ignore=shutil.ignore_patterns("__pycache__")
    )
    program = """
import sys

class Refuse:
    # only msgspec (and the standard library) may be imported
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"trio", "acp_schema", "acp_trio", "jinja2"}:
            raise ImportError(f"vendored acp_schema imported {name}")
        return None

sys.meta_path.insert(0, Refuse())
sys.path.insert(0, ".")  # -I: neither PYTHONPATH nor the current folder
from yourpackage._vendor.acp_schema import v1, v2
note = v1.decode(b'{"sessionId": "s1", "prompt": []}', v1.PromptRequest)
assert note.session_id == "s1"
assert v2.AGENT_METHODS["session/new"].handler == "session_new"
print("ok")
"""
    proc = subprocess.run(
        [sys.executable, "-I", "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"


def test_guide_grace_periods_are_the_runtimes_defaults() -> None:
    guide = GUIDE.read_text()
    spawn = inspect.signature(acp_trio.spawn_agent).parameters["grace_period"].default
    assert f"| {spawn:g} s | `spawn_agent(grace_period=)` |" in guide
    handler = _connection.HANDLER_GRACE
    assert f"| {handler:g} s | `HANDLER_GRACE` (`acp_trio._connection`) |" in guide
    # the bounds themselves are rendered from acp_trio.Limits, not copied
    assert "::: acp_trio.Limits" in guide
