"""acp_core is the protocol without I/O: importing it loads no event loop."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "runtime" / "acp_core"


def test_importing_acp_core_imports_neither_trio_nor_asyncio() -> None:
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib, pkgutil, sys, acp_core\n"
            "for m in pkgutil.iter_modules(acp_core.__path__):\n"
            "    importlib.import_module('acp_core.' + m.name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('trio', 'asyncio', 'anyio', 'acp_trio')))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"


def test_no_module_of_acp_core_names_an_event_loop_library() -> None:
    found = []
    for path in sorted(CORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in {"trio", "asyncio", "anyio", "acp_trio"}:
                    found.append(f"{path.name}: {name}")
    assert found == []


#: Modules through which a program asks the operating system for processes,
#: signals, descriptors or sockets: acp_host's, never acp_core's.
HOST_MODULES = {
    "os",
    "select",
    "selectors",
    "signal",
    "socket",
    "stat",
    "subprocess",
    "fcntl",
    "termios",
    "acp_host",
}


def test_acp_core_makes_no_system_call_host_code_lives_in_acp_host() -> None:
    found = []
    for path in sorted(CORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            found += [
                f"{path.name}: {n}" for n in names if n.split(".")[0] in HOST_MODULES
            ]
    assert found == []
