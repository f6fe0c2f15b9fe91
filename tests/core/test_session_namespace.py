"""acp_core.session sits beside the engine: the helpers of a session's updates
(builders, transcript, tool-call tracker, permission broker) read the schema
modules only, the engine imports none of them, and their names stay
acp_core's and the adapters' own."""

from __future__ import annotations

import ast
from pathlib import Path

import acp_core
import acp_core.reexports
import acp_core.session

CORE = Path(__file__).resolve().parents[2] / "runtime" / "acp_core"
SESSION = CORE / "session"

#: What the helpers may take from acp_core: the generated modules and their
#: classes, found without their names.
SESSION_READS = {"_schema", "_vocabulary"}
#: The modules of acp_core that hand the helpers' names on.
RE_EXPORTERS = {"__init__.py", "reexports.py"}


def _acp_core_imports(path: Path, package_depth: int) -> set[str]:
    """The acp_core modules ``path`` imports (``package_depth``: 1 for a module
    of acp_core, 2 for one of a subpackage), by their path inside acp_core."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").startswith("acp_core"):
                found.add((node.module or "").removeprefix("acp_core").lstrip("."))
            elif node.level:
                prefix = "session." if node.level < package_depth else ""
                found.add(prefix + (node.module or ""))
        elif isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("acp_core.")
                for a in node.names
                if a.name.startswith("acp_core.")
            }
    return found


def test_the_engine_imports_nothing_of_acp_core_session() -> None:
    found = [
        f"{path.name}: {module}"
        for path in sorted(CORE.glob("*.py"))
        if path.name not in RE_EXPORTERS
        for module in _acp_core_imports(path, 1)
        if module.split(".")[0] == "session"
    ]
    assert found == []


def test_the_session_helpers_read_only_the_schema_modules_of_acp_core() -> None:
    found = [
        f"session/{path.name}: {module}"
        for path in sorted(SESSION.glob("*.py"))
        for module in _acp_core_imports(path, 2)
        if module.split(".")[0] not in SESSION_READS | {"session"}
    ]
    assert found == []


def test_the_session_names_are_acp_core_s_and_the_adapters() -> None:
    for name in acp_core.session.__all__:
        assert getattr(acp_core, name) is getattr(acp_core.session, name), name
        assert name in acp_core.__all__, name
        assert name in acp_core.reexports.__all__, name
