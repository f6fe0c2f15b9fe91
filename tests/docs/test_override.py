"""What docs/conventions.md says @override buys: mypy refuses a misspelt
handler marked @override, and with explicit-override a handler left unmarked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import acp_schema
import acp_trio
import pytest

HEADER = """\
import sys

import acp_trio
from acp_schema import v1

if sys.version_info >= (3, 12):
    from typing import override
else:
    from typing_extensions import override


class Agent(v1.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client
"""
CASES = {
    "misspelt.py": """
    @override
    async def sesion_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")
""",
    "unmarked.py": """
    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")
""",
    "marked.py": """
    @override
    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")
""",
}


def test_override_makes_a_misspelt_or_unmarked_handler_a_mypy_error(
    tmp_path: Path,
) -> None:
    pytest.importorskip("mypy")
    for name, body in CASES.items():
        (tmp_path / name).write_text(HEADER + body, encoding="utf-8")
    paths = [
        str(Path(acp_schema.__file__).resolve().parents[1]),
        str(Path(acp_trio.__file__).resolve().parents[1]),
    ]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--enable-error-code",
            "explicit-override",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            *CASES,
        ],
        cwd=tmp_path,
        env={"MYPYPATH": ":".join(paths), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error: " in line]
    by_file = {name: [e for e in errors if e.startswith(name)] for name in CASES}
    assert by_file["marked.py"] == []
    (misspelt,) = by_file["misspelt.py"]
    assert '"sesion_prompt" is marked as an override, but no base method' in misspelt
    (unmarked,) = by_file["unmarked.py"]
    assert unmarked.endswith("[explicit-override]")
