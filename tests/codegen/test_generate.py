"""The generator: deterministic, no drift, and a spec bump needs no template change."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.__main__ import generate

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "fixtures" / "specs"


def _generate_into(spec_root: Path, out: Path) -> dict[str, bytes]:
    generate(spec_root, out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_committed_generated_code_has_no_drift(tmp_path: Path) -> None:
    fresh = _generate_into(ROOT / "spec", tmp_path / "acp_schema")
    committed = {
        p.name: p.read_bytes()
        for p in sorted((ROOT / "generated" / "acp_schema").iterdir())
        if p.is_file()
    }
    assert fresh == committed, "generated/ differs from spec/: run `nox -s generate`"


def test_generation_is_deterministic(tmp_path: Path) -> None:
    first = _generate_into(ROOT / "spec", tmp_path / "a")
    second = _generate_into(ROOT / "spec", tmp_path / "b")
    assert first == second


def test_generated_code_passes_ruff_format(tmp_path: Path) -> None:
    out = tmp_path / "acp_schema"
    _generate_into(ROOT / "spec", out)
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is a test dependency and must be installed")
    result = subprocess.run([ruff, "format", "--check", str(out)], capture_output=True)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def _import_generated(out_root: Path, package: str) -> Any:
    sys.path.insert(0, str(out_root))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out_root))


def test_spec_bump_to_v2_alpha3_needs_no_template_change(tmp_path: Path) -> None:
    spec_root = tmp_path / "spec"
    shutil.copytree(SPECS / "v2-alpha.3", spec_root / "v2")
    _generate_into(spec_root, tmp_path / "bumped_schema")
    v2 = _import_generated(tmp_path, "bumped_schema.v2")
    # Methods renamed and new unions in this draft.
    assert v2.SCHEMA_VERSION == "2.0.0-alpha.3"
    assert "session/resume" in v2.AGENT_METHODS
    note = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "hi"},
        },
    }
    update = v2.CLIENT_METHODS["session/update"].params  # renamed in this draft
    decoded = v2.decode(json.dumps(note).encode(), update)
    assert json.loads(v2.encode(decoded)) == note
    for body in (
        {"sessionUpdate": "_x", "a": 1},
        {"sessionUpdate": "state_update", "state": "idle"},
    ):
        message = {"sessionId": "s", "update": body}
        again = v2.encode(v2.decode(json.dumps(message).encode(), update))
        assert json.loads(again) == message
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "go"}]}
    method = v2.AGENT_METHODS["session/prompt"]
    assert (
        json.loads(v2.encode(v2.decode(json.dumps(prompt).encode(), method.params)))
        == prompt
    )


def test_spec_bump_to_an_older_v1_needs_no_template_change(tmp_path: Path) -> None:
    """An older v1: the same schema without elicitation and usage updates."""
    spec_root = tmp_path / "spec" / "v1"
    spec_root.mkdir(parents=True)
    schema = json.loads((ROOT / "spec" / "v1" / "schema.json").read_text())
    meta = json.loads((ROOT / "spec" / "v1" / "meta.json").read_text())
    for handler in ("elicitation_create", "elicitation_complete"):
        del meta["clientMethods"][handler]
    defs = schema["$defs"]
    for node in list(defs.values()):
        if str(node.get("x-method", "")).startswith("elicitation/"):
            node.pop("x-method")
            node.pop("x-side")
    update = defs["SessionUpdate"]
    key = "anyOf" if "anyOf" in update else "oneOf"
    update[key] = [
        v
        for v in update[key]
        if v.get("properties", {}).get("sessionUpdate", {}).get("const")
        != "usage_update"
    ]
    (spec_root / "schema.json").write_text(json.dumps(schema))
    (spec_root / "meta.json").write_text(json.dumps(meta))
    _generate_into(tmp_path / "spec", tmp_path / "older_schema")
    v1 = _import_generated(tmp_path, "older_schema.v1")
    assert "elicitation/create" not in v1.CLIENT_METHODS
    chunk = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "x"},
        },
    }
    assert (
        json.loads(
            v1.encode(v1.decode(json.dumps(chunk).encode(), v1.SessionNotification))
        )
        == chunk
    )


def test_the_unstable_surfaces_generate_and_type_check(tmp_path: Path) -> None:
    """The same generator takes `schema.unstable.json` (methods on both sides,
    a method that is both a request and a notification, ...) unchanged."""
    spec_root = tmp_path / "spec"
    for version in ("v1", "v2"):
        folder = spec_root / version
        folder.mkdir(parents=True)
        shutil.copy(
            ROOT / "spec" / version / "schema.unstable.json", folder / "schema.json"
        )
        shutil.copy(
            ROOT / "spec" / version / "meta.unstable.json", folder / "meta.json"
        )
    out = tmp_path / "unstable_schema"
    _generate_into(spec_root, out)
    v1 = _import_generated(tmp_path, "unstable_schema.v1")
    message = v1.AGENT_METHODS["mcp/message"]
    assert message.result is not None and message.notification is not None
    assert "session/fork" in v1.AGENT_METHODS
    mypy = shutil.which("mypy")
    if mypy is None:
        pytest.fail("mypy is a test dependency and must be installed")
    result = subprocess.run(
        [mypy, "--strict", "--no-incremental", str(out)],
        capture_output=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout.decode()
