"""The generator: deterministic, no drift, and a spec bump needs no template change."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from _upstream import schema_label
from acp_codegen.__main__ import check, generate

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "fixtures" / "specs"


def _generate_into(spec_root: Path, out: Path) -> dict[str, bytes]:
    generate(spec_root, out)
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_committed_generated_code_has_no_drift() -> None:
    drift = check(ROOT / "spec", ROOT / "generated" / "acp_schema")
    assert not drift, "run `nox -s generate`:\n" + "\n".join(drift)


def test_the_drift_check_prints_a_short_stat_and_the_head_of_the_diff(
    tmp_path: Path,
) -> None:
    out = tmp_path / "acp_schema"
    generate(ROOT / "spec", out)
    v1 = out / "v1.py"
    v1.write_text(
        v1.read_text().replace("PROTOCOL_VERSION = 1", "PROTOCOL_VERSION = 9")
    )
    (out / "v2.py").write_text("")  # a huge drift: still a short report
    report = check(ROOT / "spec", out)
    assert report[0] == " v1.py | 2 (+1 -1)"
    assert report[1].startswith(" v2.py | ")
    assert report[2].startswith(" 2 files changed")
    # old (committed) -> new (what the spec gives), not reversed
    assert "-PROTOCOL_VERSION = 9" in report and "+PROTOCOL_VERSION = 1" in report
    assert report[4:6] == ["--- a/v1.py", "+++ b/v1.py"]
    assert len(report) < 60 and report[-1].endswith("more diff lines)")


def test_a_bump_reports_what_it_added_removed_and_renamed(tmp_path: Path) -> None:
    spec_root = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec_root)
    out = tmp_path / "acp_schema"
    generate(spec_root, out)
    shutil.rmtree(spec_root / "v2_alpha0")
    shutil.copytree(SPECS / "v2-alpha.3", spec_root / "v2_alpha0")
    lines: list[str] = []
    generate(spec_root, out, report=lines.append)
    same = "no type, variant, field or method changed"
    v1, v2 = schema_label("v1"), schema_label("v2")
    assert lines[0] == f"v1: schema {v1} -> {v1}: {same}"
    assert lines[1] == f"v2: schema {v2} -> {v2}: {same}"
    assert lines[2] == "v2_alpha0: schema 2.0.0-alpha.0 -> 2.0.0-alpha.3"
    report = "\n".join(lines)
    assert "  methods removed (1): session/load" in lines
    assert (
        "  methods renamed (2): authenticate -> auth/login, logout -> auth/logout"
        in lines
    )
    assert "SessionNotification -> UpdateSessionNotification" in report
    assert "CancelNotification -> CancelSessionNotification" in report
    assert "AuthenticateRequest -> LoginAuthRequest" in report
    removed = next(x for x in lines if x.startswith("  types removed"))
    assert "LoadSessionRequest" in removed and "SessionNotification," not in removed


def test_generation_is_deterministic(tmp_path: Path) -> None:
    first = _generate_into(ROOT / "spec", tmp_path / "a")
    second = _generate_into(ROOT / "spec", tmp_path / "b")
    assert first == second


def test_generated_code_passes_ruff_format(tmp_path: Path) -> None:
    out = tmp_path / "acp_schema"
    _generate_into(ROOT / "spec", out)
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
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
    shutil.copy(ROOT / "spec" / "v1" / "UPSTREAM.json", spec_root)
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


def test_one_module_serves_both_surfaces() -> None:
    """`vN` holds the unstable schema's types with both surfaces' tables;
    `vN_unstable` is the same classes with the unstable tables under the
    stable names."""
    from acp_schema import (
        v1,
        v1_unstable,
        v2,
        v2_alpha0,
        v2_alpha0_unstable,
        v2_unstable,
    )

    for vn, unstable in (
        (v1, v1_unstable),
        (v2, v2_unstable),
        (v2_alpha0, v2_alpha0_unstable),
    ):
        assert "session/fork" in vn.AGENT_METHODS_UNSTABLE
        assert "session/fork" not in vn.AGENT_METHODS
        assert set(vn.AGENT_METHODS) < set(vn.AGENT_METHODS_UNSTABLE)
        assert unstable.AGENT_METHODS is vn.AGENT_METHODS_UNSTABLE
        assert unstable.CLIENT_METHODS is vn.CLIENT_METHODS_UNSTABLE
        assert unstable.Agent is vn.AgentUnstable
        assert unstable.Client is vn.ClientUnstable
        for name in vn.__all__:
            if not name.endswith("_METHODS"):  # the tables: checked above
                if name not in ("Agent", "Client"):
                    assert getattr(unstable, name) is getattr(vn, name), name
        # a stable method's types are the same objects in both tables
        prompt = vn.AGENT_METHODS["session/prompt"]
        assert vn.AGENT_METHODS_UNSTABLE["session/prompt"].result is prompt.result
    message = v2_alpha0.AGENT_METHODS_UNSTABLE[
        "mcp/message"
    ]  # request and notification
    assert message.result is not None and message.notification is not None


def test_a_stable_only_folder_generates_both_tables_alike(tmp_path: Path) -> None:
    """A folder without `schema.unstable.json`: its tables are the stable ones."""
    folder = tmp_path / "spec" / "v2"
    folder.mkdir(parents=True)
    for name in ("schema.json", "meta.json", "UPSTREAM.json"):
        shutil.copy(ROOT / "spec" / "v2" / name, folder / name)
    _generate_into(tmp_path / "spec", tmp_path / "stable_schema")
    v2 = _import_generated(tmp_path, "stable_schema.v2")
    assert set(v2.AGENT_METHODS) == set(v2.AGENT_METHODS_UNSTABLE)
    assert not hasattr(v2, "ForkSessionRequest")


def test_reserved_tag_without_a_variant_is_a_validation_error(tmp_path: Path) -> None:
    # The stable 2.0.0-alpha.0 draft's PlanUpdateContent `other` branch
    # excludes "markdown", which it reserves without defining: such a value
    # fits no branch. (The unstable schema defines it: `v2_alpha0` decodes it.)
    folder = tmp_path / "spec" / "v2"
    folder.mkdir(parents=True)
    for name in ("schema.json", "meta.json", "UPSTREAM.json"):
        shutil.copy(ROOT / "spec" / "v2_alpha0" / name, folder / name)
    _generate_into(tmp_path / "spec", tmp_path / "reserved_schema")
    v2 = _import_generated(tmp_path, "reserved_schema.v2")
    data = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "id": "p1", "markdown": "# Plan"},
        },
    }
    with pytest.raises(msgspec.ValidationError, match="markdown"):
        v2.decode(json.dumps(data).encode(), v2.SessionNotification)


def test_reshaped_stable_types_are_reported() -> None:
    """Where the unstable schema changes a stable type's shape (not adds to it)."""
    from acp_codegen.load import load_module

    assert load_module(ROOT / "spec" / "v1").reshaped == []
    assert load_module(ROOT / "spec" / "v2_alpha0").reshaped == [
        "SetSessionConfigOptionRequest"
    ]


def test_upstream_json_must_match_the_changelog_release(tmp_path: Path) -> None:
    from acp_codegen.load import SchemaError, load_module

    folder = tmp_path / "v2_alpha0"  # copied from the repository, with a changelog
    shutil.copytree(ROOT / "spec" / "v2_alpha0", folder)
    (folder / "CHANGELOG.md").write_text(
        "# Changelog\n\n## [2.0.0-alpha.0] - 2026-06-16\n"
    )
    upstream = json.loads((folder / "UPSTREAM.json").read_text())
    upstream["schema_version"] = "2.0.0-alpha.1"  # the schema was bumped, this was not
    (folder / "UPSTREAM.json").write_text(json.dumps(upstream))
    with pytest.raises(SchemaError, match=re.escape("latest release is 2.0.0-alpha.0")):
        load_module(folder)
    upstream["schema_version"] = "1.21.0"  # not protocol version 2 at all
    (folder / "UPSTREAM.json").write_text(json.dumps(upstream))
    with pytest.raises(SchemaError, match="is not protocol version 2"):
        load_module(folder)
    (folder / "UPSTREAM.json").unlink()
    with pytest.raises(SchemaError, match=re.escape("UPSTREAM.json: missing")):
        load_module(folder)


# -- reading the generated modules ---------------------------------------------------

GENERATED = ROOT / "generated" / "acp_schema"


def _top_level_names(source: str) -> dict[str, int]:
    """Class and alias name -> line of its definition (static aliases included)."""
    import ast

    lines: dict[str, int] = {}
    body = list(ast.parse(source).body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.If):
            body[:0] = node.body
        elif isinstance(node, ast.ClassDef):
            lines.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name):
                lines.setdefault(target.id, node.lineno)
    return lines


@pytest.mark.parametrize("name", ["v1.py", "v2.py"])
def test_types_come_before_the_classes_that_use_them(name: str) -> None:
    import ast

    source = (GENERATED / name).read_text()
    defined = _top_level_names(source)
    late = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign):
                for ref in ast.walk(stmt.annotation):
                    if (
                        isinstance(ref, ast.Name)
                        and defined.get(ref.id, 0) > node.lineno
                    ):
                        late.append(f"{node.name}.{ast.unparse(stmt.target)}: {ref.id}")
    assert late == []


@pytest.mark.parametrize("name", ["v1.py", "v2.py"])
def test_the_meta_description_is_written_once(name: str) -> None:
    source = (GENERATED / name).read_text()
    module = importlib.import_module(f"acp_schema.{name[:-3]}")
    doc = inspect.cleandoc(module._Struct.__doc__)
    shared = doc.split("on almost every type:\n")[1].strip()
    first = shared.split("\n\n")[0]  # the paragraph the fields' own texts extend
    assert len(first) > 100
    assert source.count(first.replace("\n", "\n    ") + "\n\n") == 1  # _Struct only
    assert source.count("meta: dict[str, Any]") > 100  # the fields are all there


def test_the_lenient_rule_table_names_the_shared_rules() -> None:
    source = (GENERATED / "v1.py").read_text()
    table = source[source.index("def _rules_table(") : source.index("decode = _CODEC")]
    # a FieldRule is spelled out only where it carries a default (the
    # schema's, or what x-deserialize-default-on-null reads a null as)
    spelled = re.findall(r"FieldRule\(([^)]*)\)", table)
    assert spelled
    assert all("default_json=" in r or "null_json=" in r for r in spelled)
    assert '"kind status title name raw_input raw_output meta",' in table
    assert len(table.splitlines()) < 320


def test_the_runtime_package_is_a_normal_package_copied_into_a_new_package(
    tmp_path: Path,
) -> None:
    """`acp_schema._runtime` is written by hand in the package itself (linted,
    type-checked, doctested there), not files stored among the templates;
    the generator copies it into a package it writes elsewhere."""
    from acp_codegen.render import RUNTIME_PACKAGE, TEMPLATES

    assert RUNTIME_PACKAGE == GENERATED / "_runtime"
    assert not (TEMPLATES / "_runtime").exists()
    out = tmp_path / "acp_schema"
    out.mkdir()
    (out / "_runtime.py").write_text("# an older generator's copy\n")
    generate(ROOT / "spec", out)
    assert not (out / "_runtime.py").exists()
    sources = sorted(p.name for p in RUNTIME_PACKAGE.glob("*.py"))
    assert sorted(p.name for p in (out / "_runtime").iterdir()) == sources
    for name in sources:
        assert (out / "_runtime" / name).read_bytes() == (
            RUNTIME_PACKAGE / name
        ).read_bytes()
    # the drift check compares only what is generated
    (out / "_runtime" / "_codec.py").write_text("# edited\n")
    assert check(ROOT / "spec", tmp_path / "acp_schema") == []
