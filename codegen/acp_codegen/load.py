"""A spec folder -> `ir.Module`: its stable and unstable schemas merged, its
provenance (``UPSTREAM.json``) checked, and the parser (`parse.py`) run on it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from . import ir
from .nodes import SchemaError, extends
from .parse import Parser

__all__ = ["SchemaError", "load_module", "read_upstream"]


def load_module(spec_dir: Path) -> ir.Module:
    """Parse the spec folder `spec_dir` (one protocol version) into an `ir.Module`.

    The types come from ``schema.unstable.json`` when the folder has one: it
    is a superset of ``schema.json`` (the stable types plus the fields,
    variants and methods still in preview), so one class per concept serves
    both surfaces and a stable connection keeps what real peers already send
    (``sessionCapabilities.fork``, ``PromptResponse.usage``). A `$defs` entry
    only the stable schema has is kept too. The method tables come from both
    ``meta.json`` (`ir.Module.methods`, the stable surface) and
    ``meta.unstable.json`` (`ir.Module.unstable_methods`, every method).
    Where the unstable schema changes the shape of a stable type rather than
    adding to it, the unstable shape is used (a superset on the wire) and the
    type is listed in `ir.Module.reshaped`.
    """
    stable_path = spec_dir / "schema.json"
    stable_raw = stable_path.read_bytes()
    stable = json.loads(stable_raw)
    meta = json.loads((spec_dir / "meta.json").read_text())
    unstable_path = spec_dir / "schema.unstable.json"
    unstable_meta_path = spec_dir / "meta.unstable.json"
    if unstable_path.is_file():
        unstable_raw = unstable_path.read_bytes()
        unstable = json.loads(unstable_raw)
        unstable_meta = json.loads(unstable_meta_path.read_text())
        files = [stable_path, unstable_path]
    else:
        unstable_raw, unstable, unstable_meta = stable_raw, stable, meta
        files = [stable_path]
    schema = dict(unstable)
    schema["$defs"] = {**unstable["$defs"]}
    for name, node in stable["$defs"].items():
        schema["$defs"].setdefault(name, node)  # dropped from the preview: keep it
    reshaped = sorted(
        name
        for name, node in stable["$defs"].items()
        if not node.get("x-docs-ignore")
        and not extends(node, unstable["$defs"].get(name, node))
    )
    upstream = read_upstream(spec_dir, int(meta["version"]))
    module = Parser(schema, meta, unstable_meta).module(
        schema_version=upstream.get("schema_version", "unknown"),
        schema_files=[f"{spec_dir.name}/{f.name}" for f in files],
        schema_sha256=hashlib.sha256(stable_raw + unstable_raw).hexdigest()
        if len(files) > 1
        else hashlib.sha256(stable_raw).hexdigest(),
    )
    module.reshaped = reshaped
    return module


def read_upstream(spec_dir: Path, protocol_version: int) -> dict[str, Any]:
    """``UPSTREAM.json`` of a spec folder, checked against the schema it describes.

    Two sources: a published npm package (``package``, ``version``: what
    ``nox -s bump`` writes; ``schema_version`` only where the package states
    one), or the upstream repository (``repository``, ``commit``,
    ``schema_version``). A ``schema_version`` must belong to the protocol
    version ``meta.json`` declares and be the latest release in the folder's
    ``CHANGELOG.md`` when there is one (upstream ships the two together): a
    schema copied in without updating ``UPSTREAM.json`` fails here, not in a
    user's bug report. The returned ``schema_version`` is what the generated
    module's ``SCHEMA_VERSION`` says: the stated one, else
    ``package@version``.
    """
    path = spec_dir / "UPSTREAM.json"
    if not path.is_file():
        raise SchemaError(
            f"{path}: missing (where the schema was copied from: package and "
            "version, or repository, commit and schema_version)"
        )
    upstream: dict[str, Any] = json.loads(path.read_text())
    version = upstream.get("schema_version")
    if version is None and isinstance(upstream.get("package"), str):
        upstream["schema_version"] = f"{upstream['package']}@{upstream['version']}"
        return upstream
    if not isinstance(version, str):
        raise SchemaError(f"{path}: no schema_version (nor package and version)")
    if version.split(".")[0] != str(protocol_version):
        raise SchemaError(
            f"{path}: schema_version {version} is not protocol version "
            f"{protocol_version} (meta.json)"
        )
    changelog = spec_dir / "CHANGELOG.md"
    if changelog.is_file():
        released = re.search(r"^## \[(\d[^\]]*)\]", changelog.read_text(), re.M)
        if released and released.group(1) != version:
            raise SchemaError(
                f"{path}: schema_version {version}, but CHANGELOG.md's latest "
                f"release is {released.group(1)}: update UPSTREAM.json"
            )
    return upstream
