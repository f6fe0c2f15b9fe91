"""acp_trio uses trio's public API only (``trio``, ``trio.lowlevel``, ``trio.abc``...).

A private module, attribute or run-state member of trio can change in any
release and break acp_trio silently; this reads acp_trio's source (no trio
run needed) and names every such use.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACP_TRIO = ROOT / "runtime" / "acp_trio"

#: Members of trio's private run state that carry no underscore of their own
#: (``GLOBAL_RUN_CONTEXT.runner.runq``, ``runner.deadlines``...).
RUN_STATE = {
    "GLOBAL_RUN_CONTEXT",
    "runq",
    "deadlines",
    "io_manager",
    "main_task",
    "entry_queue",
    "is_guest",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_names(trees: list[ast.Module]) -> set[str]:
    """The private names the project defines itself (modules, classes, attributes)."""
    own: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                own.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in {"self", "cls"}
            ):
                own.add(node.attr)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
            ):
                for const in ast.walk(node.value):
                    if isinstance(const, ast.Constant) and isinstance(const.value, str):
                        own.add(const.value)
            elif isinstance(node, ast.arg):
                own.add(node.arg)
    own |= {p.stem for p in (ROOT / "runtime").glob("*/*.py")}  # acp_trio._framing...
    return own


def private_trio_uses(package: Path) -> list[str]:
    """Every use of a private trio name in the modules of ``package``."""
    files = sorted(package.glob("*.py"))
    trees = [ast.parse(f.read_text(), str(f)) for f in files]
    # acp_trio's classes mix in acp_core's (AgentSide...): their names are ours too
    ours = [ROOT / "runtime" / "acp_core", ROOT / "runtime" / "acp_host"]
    own = _own_names(
        trees + [ast.parse(f.read_text()) for d in ours for f in d.glob("*.py")]
    )
    found: list[str] = []
    for path, tree in zip(files, trees, strict=True):
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == "trio" and any(map(_private, parts)):
                        found.append(f"{where}: import {alias.name}")
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                parts = node.module.split(".")
                if parts[0] == "trio" and (
                    any(map(_private, parts))
                    or any(_private(a.name) for a in node.names)
                ):
                    found.append(f"{where}: from {node.module} import ...")
            elif isinstance(node, ast.Attribute):
                if (_private(node.attr) and node.attr not in own) or (
                    node.attr in RUN_STATE
                ):
                    found.append(f"{where}: .{node.attr}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "setattr", "hasattr", "delattr"}
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                name = node.args[1].value
                if (_private(name) and name not in own) or name in RUN_STATE:
                    found.append(f"{where}: {node.func.id}(..., {name!r})")
    return found


def test_acp_trio_touches_no_private_name_of_trio() -> None:
    assert private_trio_uses(ACP_TRIO) == []


def test_the_check_finds_a_private_trio_use(tmp_path: Path) -> None:
    # What acp_trio once did: each of these must be found.
    (tmp_path / "bad.py").write_text(
        "import trio\n"
        "from trio._core import _run\n"
        "def f(task, runner):\n"
        "    task._cancel_points += 1\n"
        "    return runner.runq, runner.deadlines._heap, "
        "getattr(runner.io_manager, '_epoll', None)\n"
    )
    found = private_trio_uses(tmp_path)
    for name in ("trio._core", "._cancel_points", ".runq", "._heap", "'_epoll'"):
        assert any(name in f for f in found), (name, found)
