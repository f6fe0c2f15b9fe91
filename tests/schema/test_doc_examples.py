"""Every complete JSON-RPC message in the docs and the seeds decodes and re-encodes.

The messages were extracted once into ``tests/fixtures/messages/`` by
``tests/fixtures/extract.py``. Each is routed through the method tables, as a
connection would route it, decoded into its typed params or result, encoded
back, and compared as a JSON value with what the document wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
from acp_schema import v1, v1_unstable, v2_alpha0, v2_alpha0_unstable

MESSAGES = Path(__file__).parent.parent / "fixtures" / "messages"
# messages/v2.json is the 2.0.0-alpha.0 draft's docs and seed 004: read by the
# module of that draft (acp_schema.v2 is the newer published draft).
MODULES: dict[str, ModuleType] = {"v1": v1, "v2": v2_alpha0}
# The unstable surfaces are supersets: every stable example must read the same.
UNSTABLE: dict[str, ModuleType] = {"v1": v1_unstable, "v2": v2_alpha0_unstable}

# Examples in the upstream docs that disagree with the schema they document.
# Each is asserted to fail in the way described, so a fixed doc shows up here.
DOC_ERRATA: dict[str, str] = {
    # `current_mode_update` carries `currentModeId`; the doc writes `modeId`.
    "acp-docs/v1/session-modes.mdx#2": "missing required field `currentModeId`",
    # ToolCallUpdate.content items are ToolCallContent (`{"type": "content",
    # "content": {...}}`); the doc puts a bare text block there, which the
    # schema's skip-invalid-items rule drops.
    "acp-docs/v1/session-modes.mdx#3": "invalid item dropped",
    # An "initialize response" that carries the *request's* clientCapabilities.
    "acp-docs/v1/file-system.mdx#0": "not an InitializeResponse",
    "acp-docs/v1/terminals.mdx#0": "not an InitializeResponse",
}


def _records(version: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((MESSAGES / f"{version}.json").read_text())
    return data


def _method(module: ModuleType, name: str) -> Any:
    for table in (module.AGENT_METHODS, module.CLIENT_METHODS, module.PROTOCOL_METHODS):
        if name in table:
            return table[name]
    return None


def _cases() -> list[Any]:
    cases = []
    for version in MODULES:
        for record in _records(version):
            for name in (version, f"{version}_unstable"):
                cases.append(
                    pytest.param(name, record, id=f"{name}:{record['source']}")
                )
    return cases


def _payload(record: dict[str, Any]) -> tuple[str, Any]:
    message = record["message"]
    if record["kind"] in ("request", "notification"):
        return "params", message.get("params")
    if record["kind"] == "response":
        return "result", message["result"]
    return "error", message["error"]


def test_fixture_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """The corpus is the docs' and seeds' complete messages, counted per version."""
    counts = {v: len(_records(v)) for v in MODULES}
    with capsys.disabled():
        print(f"\ndoc and seed messages: {counts} ({sum(counts.values())} in all)")
    assert counts["v1"] >= 80 and counts["v2"] >= 70


@pytest.mark.parametrize(("version", "record"), _cases())
def test_doc_message_round_trips(version: str, record: dict[str, Any]) -> None:
    base, _, unstable = version.partition("_")
    module = UNSTABLE[base] if unstable else MODULES[base]
    part, value = _payload(record)
    if record["side"] == "extension":
        # Extension methods carry arbitrary JSON: it passes through untouched.
        assert json.loads(module.encode(value)) == value
        return
    if part == "error":
        error = module.convert(value, module.Error)
        assert json.loads(module.encode(error)) == value
        return
    method = _method(module, record["method"])
    assert method is not None, record["method"]
    target = method.params if part == "params" else method.result
    raw = json.dumps(value).encode()
    source = record["source"]
    if source in DOC_ERRATA:
        _assert_erratum(module, raw, target, value, DOC_ERRATA[source])
        return
    if value is None and part == "result":
        # `"result": null` for a response with no required field is the empty
        # response (the seed answers session/load that way): see acp_trio.
        assert not [f for f in msgspec.structs.fields(target) if f.required]
        return
    decoded = module.decode(raw, target)
    assert json.loads(module.encode(decoded)) == value
    # Plain msgspec gives the same result where it is enough.
    try:
        plain = msgspec.json.decode(raw, type=target)
    except msgspec.ValidationError:
        return  # an unknown variant or a lenient rule: `decode` is needed
    if type(plain) is dict:
        return  # a by-shape union: plain msgspec leaves it untyped
    assert module.encode(plain) == module.encode(decoded)


def _assert_erratum(
    module: ModuleType, raw: bytes, target: Any, value: Any, what: str
) -> None:
    if what == "invalid item dropped":
        decoded = module.decode(raw, target)
        assert json.loads(module.encode(decoded)) != value
    else:
        with pytest.raises(msgspec.ValidationError):
            module.decode(raw, target)
