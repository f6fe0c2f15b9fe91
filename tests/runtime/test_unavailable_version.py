"""A protocol module that fails to import costs that version only.

A broken or half-regenerated ``acp_schema.v2`` must not fail ``import
acp_trio`` / ``import acp_core`` nor a connection that offers only other
versions; a connection offering it gets a clear
:class:`~acp_trio.VersionUnavailableError` and one WARNING, not the module's
own error.  Run on a copy of ``generated/`` whose ``v2.py`` raises on import,
in subprocesses (a fresh interpreter per scenario: real processes, real
bytes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BROKEN = 'raise RuntimeError("a half-regenerated v2")\n'

OFFERS_V2 = """
import logging, sys
import acp_core, acp_trio, trio, trio.testing

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
AGENT = [sys.executable, "examples/simple_agent.py"]


class Peer:
    def __init__(self, conn: object) -> None:
        pass


async def main() -> None:
    for offer in ({1: Peer, 2: Peer}, {2: Peer}):  # twice: one warning
        try:
            async with acp_trio.spawn_agent(AGENT, client=offer):
                print("connected")
        except acp_trio.VersionUnavailableError as exc:
            assert isinstance(exc, ValueError) and exc.version == 2
            assert isinstance(exc.__cause__, RuntimeError)
            print("refused:", exc)
    a, _ = trio.testing.memory_stream_pair()
    try:
        acp_trio.AgentSideConnection(a, {1: Peer, 2: Peer})
    except acp_core.VersionUnavailableError as exc:
        print("agent refused:", exc)
    try:
        acp_trio.user_message("u1", "hi")  # a v2 builder
    except acp_trio.VersionUnavailableError as exc:
        print("v2 builder refused:", exc.version)
    acp_trio.agent_text("hi", message_id="m1")  # the v1 builders still work
    print("v1 builders ok")
    # offering v1 alone still connects
    async with acp_trio.spawn_agent(AGENT, client={1: Peer}) as conn:
        print("v1 connection:", conn.schema.version)


trio.run(main)
"""


@pytest.fixture
def broken_tree(tmp_path: Path) -> dict[str, str]:
    """The environment of a tree whose ``acp_schema.v2`` raises on import."""
    generated = tmp_path / "generated"
    shutil.copytree(
        ROOT / "generated", generated, ignore=shutil.ignore_patterns("__pycache__")
    )
    (generated / "acp_schema" / "v2.py").write_text(BROKEN)
    paths = [generated, ROOT / "runtime", ROOT / "codegen"]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_protocol_module_failing_to_import_costs_neither_the_import_nor_other_versions(
    broken_tree: dict[str, str],
) -> None:
    probe = _run(["-c", "import acp_core, acp_trio; print('imported')"], broken_tree)
    assert probe.stdout == "imported\n", probe.stderr
    assert probe.stderr == ""
    # a v1 prompt turn between the v1 examples (real processes)
    turn = _run(
        [
            "examples/simple_client.py",
            "hello broken v2",
            sys.executable,
            "examples/simple_agent.py",
        ],
        broken_tree,
    )
    assert turn.returncode == 0, turn.stdout + turn.stderr
    assert "hello broken v2" in turn.stdout
    assert "[end_turn]" in turn.stdout
    assert "Traceback" not in turn.stderr


def test_offering_a_version_whose_module_fails_to_import_is_a_clear_error_warned_once(
    broken_tree: dict[str, str],
) -> None:
    probe = _run(["-c", OFFERS_V2], broken_tree)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    lines = probe.stdout.splitlines()
    assert "connected" not in lines
    refused = [line for line in lines if line.startswith("refused:")]
    assert len(refused) == 2
    assert refused[0] == (
        "refused: protocol v2 is unavailable: its generated module acp_schema.v2 "
        "failed to import (RuntimeError: a half-regenerated v2); offer the other "
        "versions, or regenerate acp_schema (python -m acp_codegen)"
    )
    assert any(line.startswith("agent refused: protocol v2") for line in lines)
    assert "v2 builder refused: 2" in lines
    assert "v1 builders ok" in lines
    assert lines[-1] == "v1 connection: 1"
    warnings = [
        line for line in probe.stderr.splitlines() if line.startswith("WARNING")
    ]
    assert warnings == [
        "WARNING protocol v2 is unavailable: acp_schema.v2 failed to import "
        "(RuntimeError: a half-regenerated v2); the other versions are not affected"
    ]
    assert probe.stderr.count("Traceback") == 1  # the warning's, once
