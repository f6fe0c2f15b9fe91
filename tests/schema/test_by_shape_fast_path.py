"""By-shape unions decoded through their wire Struct give what the lenient walk gives.

The one-pass decode reads a by-shape union (v1 ``McpServer``,
``EmbeddedResourceResource``, ...) into a wire Struct holding every variant's
fields, then builds the variant; anything it cannot decide falls back to the
lenient walk, the reference. Results, variant classes and error messages must
be the reference's: here every message of the benchmark corpus, of the docs
and seeds, and each case below goes both ways.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
from acp_schema import _runtime, v1, v2

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from corpus import CORPUS  # noqa: E402

MESSAGES = ROOT / "tests" / "fixtures" / "messages"
MODULES: dict[str, ModuleType] = {"v1": v1, "v2": v2}


def _reference(module: ModuleType, data: bytes, type_: Any) -> Any:
    """The lenient walk over the untyped value: what the fast path must equal."""
    codec: _runtime.Codec = module._CODEC
    return codec._lenient_pass(msgspec.json.decode(data), type_)


def _same(a: Any, b: Any) -> None:
    """Equal, and of the same classes all the way down."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, msgspec.Struct):
        assert "Wire" not in type(a).__name__, a
        for field in msgspec.structs.fields(a):
            _same(getattr(a, field.name), getattr(b, field.name))
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same(a[key], b[key])
    else:
        assert a == b


def _method_type(module: ModuleType, method: str, kind: str) -> Any:
    for table in (module.AGENT_METHODS, module.CLIENT_METHODS, module.PROTOCOL_METHODS):
        if method in table:
            entry = table[method]
            return entry.result if kind == "response" else entry.params
    return None


def _messages() -> list[Any]:
    cases = []
    for name, (method, kind, payload) in CORPUS.items():
        cases.append(pytest.param("v1", payload, (method, kind), id=f"bench:{name}"))
    for version in MODULES:
        for record in json.loads((MESSAGES / f"{version}.json").read_text()):
            message = record["message"]
            if record["kind"] in ("request", "notification"):
                payload = message.get("params")
                kind = "request"
            elif record["kind"] == "response" and "result" in message:
                payload, kind = message["result"], "response"
            else:
                continue
            method = record.get("method") or message.get("method")
            if not method or payload is None:
                continue
            if _method_type(MODULES[version], method, kind) is None:
                continue  # a method of another version (the docs mix them)
            cases.append(
                pytest.param(
                    version,
                    json.dumps(payload).encode(),
                    (method, kind),
                    id=f"{version}:{record['source']}",
                )
            )
    return cases


@pytest.mark.parametrize(("version", "data", "route"), _messages())
def test_fast_path_gives_the_lenient_walks_result(
    version: str, data: bytes, route: tuple[str, str]
) -> None:
    module = MODULES[version]
    type_ = _method_type(module, *route)
    try:
        expected = _reference(module, data, type_)
    except msgspec.ValidationError as error:
        with pytest.raises(msgspec.ValidationError) as raised:
            module.decode(data, type_)
        assert str(raised.value) == str(error)
        return
    _same(module.decode(data, type_), expected)


STDIO = {"name": "fs", "command": "/bin/fs", "args": [], "env": []}
HTTP = {"type": "http", "name": "gh", "url": "https://x", "headers": []}
SHAPES: list[tuple[str, Any]] = [
    ("stdio", {"cwd": "/", "mcpServers": [STDIO]}),
    ("http", {"cwd": "/", "mcpServers": [HTTP, STDIO]}),
    ("sse", {"cwd": "/", "mcpServers": [{**HTTP, "type": "sse"}]}),
    ("unknown-tag", {"cwd": "/", "mcpServers": [{**STDIO, "type": "_acme"}]}),
    ("non-string-tag", {"cwd": "/", "mcpServers": [{**STDIO, "type": 5}]}),
    ("extra-http-field", {"cwd": "/", "mcpServers": [{**STDIO, "url": 3}]}),
    ("meta", {"cwd": "/", "mcpServers": [{**STDIO, "_meta": {"k": [1]}}]}),
    ("bad-meta", {"cwd": "/", "mcpServers": [{**STDIO, "_meta": 5}]}),
    ("missing-command", {"cwd": "/", "mcpServers": [{"name": "fs"}]}),
    ("bad-http", {"cwd": "/", "mcpServers": [{**HTTP, "url": 3}]}),
    ("scalar", {"cwd": "/", "mcpServers": [5]}),
    ("empty", {"cwd": "/", "mcpServers": []}),
]
RESOURCES: list[tuple[str, Any]] = [
    ("text", {"uri": "file:///a", "text": "t"}),
    ("blob", {"uri": "file:///a", "blob": "aGk="}),
    ("both", {"uri": "file:///a", "text": "t", "blob": "aGk="}),
    ("text-wrong", {"uri": "file:///a", "text": 5, "blob": "aGk="}),
    ("neither", {"uri": "file:///a"}),
    ("null", None),
]


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize(("label", "params"), SHAPES, ids=[c for c, _ in SHAPES])
def test_mcp_servers_fast_path_matches_the_reference(
    version: str, label: str, params: Any
) -> None:
    module = MODULES[version]
    data = json.dumps(params).encode()
    try:
        expected = _reference(module, data, module.NewSessionRequest)
    except msgspec.ValidationError as error:
        with pytest.raises(msgspec.ValidationError) as raised:
            module.decode(data, module.NewSessionRequest)
        assert str(raised.value) == str(error)
        return
    _same(module.decode(data, module.NewSessionRequest), expected)


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize(
    ("label", "resource"), RESOURCES, ids=[c for c, _ in RESOURCES]
)
def test_embedded_resource_fast_path_matches_the_reference(
    version: str, label: str, resource: Any
) -> None:
    module = MODULES[version]
    params = {"sessionId": "s", "prompt": [{"type": "resource", "resource": resource}]}
    data = json.dumps(params).encode()
    try:
        expected = _reference(module, data, module.PromptRequest)
    except msgspec.ValidationError as error:
        with pytest.raises(msgspec.ValidationError) as raised:
            module.decode(data, module.PromptRequest)
        assert str(raised.value) == str(error)
        return
    _same(module.decode(data, module.PromptRequest), expected)


def test_by_shape_unions_of_structs_have_a_wire() -> None:
    # The fast path exists where the benchmark needs it.
    for name in ("McpServer", "EmbeddedResourceResource", "AuthMethod"):
        hint = getattr(v1, name)
        (wire, marker) = hint.__origin__, hint.__metadata__[0]
        assert isinstance(marker, _runtime.ShapeUnion)
        assert issubclass(wire, msgspec.Struct) and wire.__name__.endswith("Wire")


def test_decode_of_a_type_not_seen_before_and_a_key_error_inside() -> None:
    class Fresh(msgspec.Struct):
        x: int

        def __post_init__(self) -> None:
            if self.x == 13:
                raise KeyError("bad luck")

    assert v1.decode(b'{"x": 1}', Fresh) == Fresh(x=1)
    with pytest.raises(msgspec.ValidationError, match="KeyError"):
        v1.decode(b'{"x": 13}', Fresh)
