"""A spec bump never breaks the runtime.

The runtime finds what it needs through what the generator emits (method
tables, wire field names, tags), never a generated class name; a version
whose schema lacks what a rule needs loses that rule, with one logged
warning, and nothing else. The test material is upstream draft
2.0.0-alpha.3 (``tests/fixtures/specs/v2-alpha.3``): ``SessionNotification``
renamed ``UpdateSessionNotification``, ``authenticate`` -> ``auth/login``,
``session/load`` folded into ``session/resume``, the stop reason moved out of
``PromptResponse``, capabilities for resume/close/list dropped.
"""

from __future__ import annotations

import ast
import importlib
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import acp_trio
import pytest
import trio.testing
from acp_codegen.__main__ import generate
from acp_core._capabilities import AgentCallChecks
from acp_core._schema import Schema
from acp_core._support import Support, support
from acp_schema import v1
from acp_trio._connection import Running

ROOT = Path(__file__).resolve().parents[2]
ALPHA3 = ROOT / "tests" / "fixtures" / "specs" / "v2-alpha.3"


@pytest.fixture(scope="module")
def bumped_v2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """v2 regenerated from 2.0.0-alpha.3, importable as ``bumped_schema.v2``."""
    root = tmp_path_factory.mktemp("bumped")
    spec = root / "spec"
    shutil.copytree(ALPHA3, spec / "v2")
    generate(spec, root / "bumped_schema")
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("bumped_schema.v2")
    finally:
        sys.path.remove(str(root))


def _tree_bumped_to_alpha3(tmp_path: Path) -> Path:
    """A copy of the project with spec/v2_alpha0 (the draft acp_echo and
    acp_client speak) replaced by 2.0.0-alpha.3, regenerated."""
    tree = tmp_path / "tree"
    for part in ("runtime", "examples", "codegen", "spec"):
        shutil.copytree(
            ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.rmtree(tree / "spec" / "v2_alpha0")
    shutil.copytree(ALPHA3, tree / "spec" / "v2_alpha0")
    out = tree / "generated" / "acp_schema"
    shutil.copytree(ROOT / "generated" / "acp_schema", out)
    env = _env(tree)
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen", "spec", str(out)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # the generator says what the bump changed
    assert "v2_alpha0: schema 2.0.0-alpha.0 -> 2.0.0-alpha.3" in done.stdout
    assert "SessionNotification -> UpdateSessionNotification" in done.stdout
    return tree


def _env(tree: Path) -> dict[str, str]:
    paths = [tree / "generated", tree / "runtime", tree / "codegen"]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}


def test_a_tree_bumped_to_v2_alpha3_runs_a_v1_and_a_v2_turn(tmp_path: Path) -> None:
    tree = _tree_bumped_to_alpha3(tmp_path)
    env = _env(tree)
    # the builders and the transcript follow the renamed classes
    script = (
        "import acp_trio\n"
        "from acp_schema import v2_alpha0 as v2\n"
        "chunk = acp_trio.agent_text('hi', message_id='m1', version=v2)\n"
        "note = acp_trio.notification('s', chunk)\n"
        "plan = acp_trio.plan(['Read'], plan_id='p1', version=v2)\n"
        "t = acp_trio.SessionTranscript()\n"
        "t.apply(note)\n"
        "t.apply(acp_trio.notification('s', plan))\n"
        "print(v2.SCHEMA_VERSION, hasattr(v2, 'SessionNotification'),\n"
        "      type(note).__name__, t.messages[0].text, t.plans['p1'].entries[0].content)\n"
    )
    probe = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.split() == [
        "2.0.0-alpha.3",
        "False",
        "UpdateSessionNotification",
        "hi",
        "Read",
    ], probe.stderr
    for protocol in ("1", "2"):
        turn = subprocess.run(
            [
                sys.executable,
                "-m",
                "acp_client",
                "--yes",
                "--protocol",
                protocol,
                "--prompt",
                "hello bump",
                "--",
                sys.executable,
                "-m",
                "acp_echo",
                "--chunk-delay",
                "0",
            ],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert turn.returncode == 0, turn.stdout + turn.stderr
        assert f"protocol v{protocol}" in turn.stdout
        assert "You said: hello bump" in turn.stdout  # streamed session/update chunks
        assert "Echoed 10 characters." in turn.stdout
        if protocol == "1":
            assert "stop reason: end_turn" in turn.stdout
            assert "alpha.3" not in turn.stderr  # v1 unaffected
        else:
            # the rules this draft cannot serve: logged once each, not fatal
            assert turn.stderr.count("session/resume is sent without") == 1
            assert "Traceback" not in turn.stderr


def test_a_capability_the_schema_does_not_declare_is_not_checked_and_warned_once(
    bumped_v2: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert not support(bumped_v2).declares("agent", "session", "resume")
    assert support(bumped_v2).declares("agent", "session", "fork")
    caps = bumped_v2.AgentCapabilities()
    resume = bumped_v2.AGENT_METHODS["session/resume"].params(session_id="s", cwd="/")
    with caplog.at_level(logging.WARNING, logger="acp_trio"):
        for _ in range(2):
            AgentCallChecks(2, caps, bumped_v2).check("session_resume", resume)
    warned = [r for r in caplog.records if "session/resume" in r.getMessage()]
    assert len(warned) == 1
    assert "2.0.0-alpha.3" in warned[0].getMessage()
    # a capability the draft still declares is still enforced
    fork = bumped_v2.AGENT_METHODS_UNSTABLE["session/fork"].params(
        session_id="s", cwd="/"
    )
    with pytest.raises(acp_trio.CapabilityError):
        AgentCallChecks(2, caps, bumped_v2).check("session_fork", fork)


def test_a_version_without_a_stop_reason_answers_a_cancelled_prompt_as_cancelled_requests(
    bumped_v2: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert support(v1).prompt_stop_reason
    assert not Support(bumped_v2).prompt_stop_reason
    a, _ = trio.testing.memory_stream_pair()
    conn: acp_trio.AgentSideConnection[Any] = acp_trio.AgentSideConnection(
        a, {1: object}
    )
    running = Running(v1.AGENT_METHODS["session/prompt"], "s")
    assert (
        conn.rules.cancelled_result(conn.schema, running)
        == b'{"stopReason":"cancelled"}'
    )
    conn.engine.bind(Schema(bumped_v2, "agent"))
    running = Running(bumped_v2.AGENT_METHODS["session/prompt"], "s")
    with caplog.at_level(logging.WARNING, logger="acp_trio"):
        assert (
            conn.rules.cancelled_result(conn.schema, running) is None
        )  # -> "Request cancelled"
    assert "no stopReason" in caplog.text


# -- no generated class named at run time -------------------------------------------


def _runtime_references(tree: ast.AST) -> list[str]:
    """``vN.Name`` attribute uses outside ``if TYPE_CHECKING:`` and annotations."""
    found: list[str] = []

    def visit(node: ast.AST, static: bool) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child, static)
            return  # the body is for type checkers only
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for child in (*node.decorator_list, *node.args.defaults, *node.body):
                visit(child, static)
            for default in node.args.kw_defaults:
                if default is not None:
                    visit(default, static)
            return  # parameter and return annotations are static
        if isinstance(node, ast.AnnAssign):
            if node.value is not None:
                visit(node.value, static)
            return
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id.startswith("v")
            and node.value.id[1:].split("_")[0].isdigit()
            and node.attr[:1].isupper()
            and not node.attr.isupper()
        ):
            found.append(f"{ast.unparse(node)} (line {node.lineno})")
        for child in ast.iter_child_nodes(node):
            visit(child, static)

    visit(tree, False)
    return found


def test_the_runtime_names_no_generated_class_at_run_time() -> None:
    offenders = {}
    paths = [*(ROOT / "runtime" / "acp_core").glob("*.py")]
    paths += (ROOT / "runtime" / "acp_trio").glob("*.py")
    for path in sorted(paths):
        found = _runtime_references(ast.parse(path.read_text()))
        if found:
            offenders[path.name] = found
    assert offenders == {}
    # and the check sees one where there is one
    assert _runtime_references(ast.parse("x = v2.SessionNotification")) == [
        "v2.SessionNotification (line 1)"
    ]


def test_importing_acp_trio_imports_no_protocol_module() -> None:
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, acp_trio; "
            "print(sorted(m for m in sys.modules if m.startswith('acp_schema.')))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # the generated protocol modules load with the first connection or builder
    # of their version: a broken or renamed one costs no other version the import
    loaded = ast.literal_eval(probe.stdout.strip())
    assert all(m.split(".")[1] == "_runtime" for m in loaded), probe.stderr
