"""What ``spec/`` holds, read from it: tests pin nothing a spec bump changes.

- :data:`SDK_VERSION`: the ``@agentclientprotocol/sdk`` version ``spec/v1``
  and ``spec/v2`` come from (``UPSTREAM.json``), and :func:`schema_label`,
  what a generated module's ``SCHEMA_VERSION`` says for a folder;
- :func:`lacks` / :func:`needs`: a test naming a method, type or field that
  an older schema does not have skips (after ``nox -s bump -- 2.1.0``), with
  the reason naming what that schema lacks, instead of failing.

Nothing else: a test that fails after a bump for another reason is a bug
of the runtime or of the test (docs/spec-bump.md, "What a bump may change").
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"


@functools.cache
def upstream(folder: str) -> dict[str, Any]:
    """``spec/FOLDER/UPSTREAM.json``."""
    found: dict[str, Any] = json.loads((SPEC / folder / "UPSTREAM.json").read_text())
    return found


#: the package version of ``spec/v1`` and ``spec/v2`` (``"2.4.0"`` today)
SDK_VERSION: str = upstream("v1")["version"]


def schema_label(folder: str) -> str:
    """What ``acp_schema.<folder>.SCHEMA_VERSION`` says: the schema version
    the package states, else ``package@version``."""
    data = upstream(folder)
    stated = data.get("schema_version")
    if stated:
        return str(stated)
    return f"{data['package']}@{data['version']}"


@functools.cache
def _defs(folder: str) -> dict[str, Any]:
    """The types of the folder's schemas (the unstable one is a superset,
    the stable one may have a few of its own)."""
    defs: dict[str, Any] = {}
    for name in ("schema.json", "schema.unstable.json"):
        defs.update(json.loads((SPEC / folder / name).read_text()).get("$defs", {}))
    return defs


@functools.cache
def _methods(folder: str) -> frozenset[str]:
    """The wire names of the folder's method tables, stable and unstable."""
    found: set[str] = set()
    for name in ("meta.json", "meta.unstable.json"):
        meta = json.loads((SPEC / folder / name).read_text())
        for table in meta.values():
            if isinstance(table, dict):
                found.update(w for w in table.values() if isinstance(w, str))
    return frozenset(found)


def lacks(
    folder: str,
    *,
    method: str | None = None,
    type: str | None = None,
    field: str | None = None,
    keyword: str | None = None,
) -> str | None:
    """Why ``spec/FOLDER`` cannot run a test naming these (``field``:
    ``"Type.wireName"``; ``keyword``: a JSON Schema keyword that field has,
    ``"minItems"``), or None when it has them all (in its stable or
    unstable schema)."""
    defs = _defs(folder)
    missing: list[str] = []
    if method is not None and method not in _methods(folder):
        missing.append(f"method {method}")
    if type is not None and type not in defs:
        missing.append(f"type {type}")
    if field is not None:
        owner, _, name = field.partition(".")
        properties = defs.get(owner, {}).get("properties", {})
        if name not in properties:
            missing.append(f"field {field}")
        elif keyword is not None and keyword not in properties[name]:
            missing.append(f"{keyword} on {field}")
    if not missing:
        return None
    return (
        f"spec/{folder} ({schema_label(folder)}) has no {', '.join(missing)}: "
        "an older schema than this test names"
    )


def needs(folder: str, **what: Any) -> pytest.MarkDecorator:
    """Skip the test when ``spec/FOLDER`` lacks what it names (see :func:`lacks`)."""
    reason = lacks(folder, **what)
    return pytest.mark.skipif(reason is not None, reason=reason or "")
