"""Exactly the schema: `decode()` judged by ``jsonschema`` on the untransformed schema.

For every ``$defs`` type of v1, v2 and v2_alpha0, hypothesis-jsonschema generates instances,
and each instance is mutated (a value replaced by another JSON value, a
property removed or added, an array item dropped or repeated, a tag changed).
Every instance and mutant goes to both sides:

- the judge (`_schema_judge.Judge`): ``jsonschema`` (draft 2020-12) on the
  schema as published, after the schema's own lenient rules;
- the candidate: ``module.decode(json_bytes, type)``, then ``module.encode``.

The judge's "valid" must be the candidate's "decoded", its "invalid" the
candidate's `ValidationError`; no other exception may escape. For a decoded
value, ``encode(decode(x))`` must give ``x`` back.

The only allowed differences (this is the list):

1. The lenient rules ``x-deserialize-default-on-error``,
   ``x-deserialize-default-on-null`` and
   ``x-deserialize-skip-invalid-items``, which the judge applies first
   (`Judge.repair`), within `acp_schema.LENIENT_LIMITS` (the test stays far
   below them).
2. Unknown-property drops: a property the schema does not declare for an
   object (for the variant it matches first, in schema order) may be absent
   from ``encode(decode(x))``. Everything else comes back: no known property
   lost, no property added, every value equal.

Where the test narrows what it compares (none of these hides a difference):

- A known tag names its variant: in a union of tagged variants and an
  untagged default (v1 ``AuthMethod``, ``McpServer``,
  ``SetSessionConfigOptionRequest``), the judge does not let the default
  branch take a value with a known tag (`_schema_judge.tags_name_their_variant`):
  decode() rejects a malformed tagged variant rather than read it as the
  default variant without its tag. The one place the judge is stricter than
  the published schema.
- Integer ``format``s are asserted by the judge as the ranges they name
  (``uint32``: 0 to 2**32 - 1), as a typed peer does; string ``format``s
  (``uri``) are not, on either side.
- A def that the generated module makes a *tagged variant class* (v1
  ``TextContent`` is the ``"type": "text"`` variant of ``ContentBlock``) is
  judged with its tag, as the union's branch, because that is the only place
  the schema uses it: ``{"allOf": [def], "properties": {tag: {"const": ...}},
  "required": [tag]}``.
- The six JSON-RPC envelopes (``x-docs-ignore``: ``AgentRequest``, ...) are
  not generated (the runtime has its own envelope; see codegen/README.md).

Bounded: `EXAMPLES` instances per def, `MUTANTS` mutants per instance, and
no shrinking (a failing value is reported as generated).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import _hjs_compat  # noqa: F401  (adapts hypothesis-jsonschema)
import msgspec
import pytest
from _schema_judge import (
    INTEGER_FORMATS,
    Judge,
    Schema,
    inline,
    map_subschemas,
    tags_name_their_variant,
)
from _upstream import needs
from acp_schema import v1, v2, v2_alpha0
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

SPEC = Path(__file__).parents[2] / "spec"
MODULES: dict[str, ModuleType] = {"v1": v1, "v2": v2, "v2_alpha0": v2_alpha0}
# More with DIFF_EXAMPLES=N (a deeper search, e.g. after a codec change).
EXAMPLES = int(os.environ.get("DIFF_EXAMPLES", "5"))
MUTANTS = 10
#: JSON values a mutation puts in place of another.
POOL: list[Any] = [
    None,
    True,
    0,
    -1,
    7,
    2**31,
    2**32,
    2**63,
    2**64,
    1.5,
    "",
    "_x",
    [],
    {},
    [5],
    [{}],
    {"_x": 1},
]


@functools.cache
def _schema_of(version: str) -> Schema:
    """The schema the module was generated from: its folder's unstable schema
    (a superset of the stable one), plus the defs only the stable one has."""
    folder = SPEC / version
    stable_raw = (folder / "schema.json").read_bytes()
    unstable_path = folder / "schema.unstable.json"
    unstable_raw = unstable_path.read_bytes() if unstable_path.is_file() else b""
    digest = hashlib.sha256(stable_raw + unstable_raw).hexdigest()
    assert digest == MODULES[version].SCHEMA_SHA256, f"{version} is not from spec/"
    stable = json.loads(stable_raw)
    schema: Schema = json.loads(unstable_raw) if unstable_raw else stable
    for name, node in stable["$defs"].items():
        schema["$defs"].setdefault(name, node)
    return schema


def _judged_schema(version: str, name: str) -> tuple[Schema, Any]:
    """(the schema the judge uses, the generated type) of def `name`."""
    defs = _schema_of(version)["$defs"]
    type_ = getattr(MODULES[version], name)
    node: Schema = {"$ref": f"#/$defs/{name}"}
    config = getattr(type_, "__struct_config__", None)
    own = defs[name].get("properties", {})
    if config is not None and config.tag_field and config.tag_field not in own:
        node = {
            "type": "object",
            "properties": {config.tag_field: {"type": "string", "const": config.tag}},
            "required": [config.tag_field],
            "allOf": [node],
        }
    return tags_name_their_variant(inline(node, defs)), type_


_ANNOTATIONS = ("title", "discriminator", "default", "$comment")


#: What an object generated for the test holds beside its declared properties:
#: at most `_EXTRA` more, scalars (mutations add deeper values).
_EXTRA = 2
_SCALAR: Schema = {"type": ["null", "boolean", "integer", "string"]}


def _for_generation(schema: Any, negated: bool = False, part: bool = False) -> Any:
    """What hypothesis-jsonschema generates from: only instances of the
    schema (the judge checks each), integer formats as bounds, objects with at
    most `_EXTRA` undeclared scalar properties, no annotations: the instances
    stay small and it is many times faster. Under ``not`` only annotations go
    (narrowing a negated schema would widen the whole); a `part` of an
    ``allOf``/``anyOf`` keeps its extras open (its siblings' properties)."""
    if not isinstance(schema, dict):
        return schema
    out = map_subschemas(schema, lambda sub: _for_generation(sub, negated))
    if "not" in schema:
        out["not"] = _for_generation(schema["not"], True)
    for key in ("allOf", "anyOf", "oneOf"):
        if key in schema:  # a part sees its siblings' properties as its own extras
            out[key] = [_for_generation(sub, negated, True) for sub in schema[key]]
    for key in schema:
        if key in _ANNOTATIONS or key.startswith("x-"):
            del out[key]
    if negated:
        return out
    if out.get("format") in INTEGER_FORMATS:
        low, high = INTEGER_FORMATS[out.pop("format")]
        out["minimum"] = max(low, out.get("minimum", low))
        out["maximum"] = min(high, out.get("maximum", high))
    out = _merge_all_of(out)
    types = out.get("type")
    is_object = types == "object" or (isinstance(types, list) and "object" in types)
    composed = any(key in out for key in ("allOf", "anyOf", "oneOf"))
    if (
        (is_object or "properties" in out)
        and not composed  # its parts declare more properties than it lists
        and not part
        and out.get("additionalProperties") in (None, True)
        and ("properties" in out or "additionalProperties" not in out)
    ):
        out["additionalProperties"] = _SCALAR
        out["maxProperties"] = len(out.get("properties", {})) + _EXTRA
    return out


def _merge_all_of(schema: Schema) -> Schema:
    """``allOf`` members merged into the schema where that changes nothing
    (disjoint keywords, or object ones that combine): hypothesis-jsonschema
    merges them itself, slowly, at every draw of a strategy it has not cached."""
    members = schema.get("allOf")
    if not members:
        return schema
    out = {k: v for k, v in schema.items() if k != "allOf"}
    kept = []
    for member in members:
        shared = (set(out) & set(member)) - {"type", "properties", "required"}
        closes = "additionalProperties" in out or "additionalProperties" in member
        if (
            shared
            or closes
            or ("type" in out and "type" in member and out["type"] != member["type"])
        ):
            kept.append(member)
            continue
        props = {**out.get("properties", {})}
        if set(props) & set(member.get("properties", {})):
            kept.append(member)
            continue
        required = [*out.get("required", []), *member.get("required", [])]
        out = {**out, **member}
        if props or "properties" in member:
            out["properties"] = {**props, **member.get("properties", {})}
        if required:
            out["required"] = sorted(set(required))
    if kept:
        out["allOf"] = kept
    return out


def _walk(schema: Any) -> Any:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


@functools.cache
def _vocabulary(version: str, name: str) -> tuple[list[str], list[str]]:
    """Property names and string consts (tags) of a def: what mutations use."""
    schema, _ = _judged_schema(version, name)
    names: set[str] = set()
    consts: set[str] = set()
    for node in _walk(schema):
        names.update(node.get("properties", {}))
        if isinstance(node.get("const"), str):
            consts.add(node["const"])
        for value in node.get("enum", []):
            if isinstance(value, str):
                consts.add(value)
    return [*sorted(names), "_x"], [*sorted(consts), "_x", "_acme"]


# -- mutations -------------------------------------------------------------


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Any:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, (*path, i))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], tuple(rest), new)}
    out = list(value)
    out[head] = _replaced(value[head], tuple(rest), new)
    return out


def _mutant(
    instance: Any, data: st.DataObject, names: list[str], consts: list[str]
) -> Any:
    nodes = list(_nodes(instance))
    path, node = data.draw(st.sampled_from(nodes), label="node")
    ops = ["replace", "replace"]
    if isinstance(node, dict):
        ops += ["add"] + (["delete"] if node else [])
    if isinstance(node, list) and node:
        ops += ["drop", "repeat"]
    if isinstance(node, str) and node in consts:
        ops += ["retag", "retag"]
    op = data.draw(st.sampled_from(ops), label="op")
    if op == "replace":
        others = [n for _, n in nodes if n is not node]
        new = data.draw(st.sampled_from(POOL + consts[:8] + others[:8]), label="new")
    elif op == "retag":
        new = data.draw(st.sampled_from([c for c in consts if c != node]), label="tag")
    elif op == "add":
        key = data.draw(st.sampled_from(names), label="key")
        new = {**node, key: data.draw(st.sampled_from(POOL + consts[:4]), label="v")}
    elif op == "delete":
        key = data.draw(st.sampled_from(sorted(node)), label="key")
        new = {k: v for k, v in node.items() if k != key}
    else:
        i = data.draw(st.integers(0, len(node) - 1), label="index")
        new = node[:i] + node[i + 1 :] if op == "drop" else [*node, node[i]]
    return _replaced(instance, path, new)


# -- the verdicts ----------------------------------------------------------


def _verdict(module: ModuleType, type_: Any, schema: Schema, value: Any) -> None:
    judge = _JUDGE
    repaired = judge.repair(schema, value)
    accepted = judge.valid(schema, repaired)
    data = json.dumps(value).encode()
    try:
        decoded = module.decode(data, type_)
    except msgspec.ValidationError as error:
        assert not accepted, f"false reject of {value!r}: {error}"
        return
    except Exception as error:  # pragma: no cover - the failure being reported
        raise AssertionError(
            f"decode() raised {type(error).__name__} on {value!r}"
        ) from error
    assert accepted, f"false accept of {value!r} as {decoded!r}"
    got = json.loads(module.encode(decoded))
    differences = judge.differences(schema, repaired, got)
    assert not differences, (value, differences)


_JUDGE = Judge()


def _cases() -> list[Any]:
    return [
        pytest.param(version, name, id=f"{version}:{name}")
        for version in MODULES
        for name, node in _schema_of(version)["$defs"].items()
        if not node.get("x-docs-ignore")
    ]


@pytest.mark.parametrize(("version", "name"), _cases())
def test_decode_agrees_with_the_schema(version: str, name: str) -> None:
    module = MODULES[version]
    schema, type_ = _judged_schema(version, name)
    names, consts = _vocabulary(version, name)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        # No shrinking: a failure is reported as found (shrinking a mutant of
        # a generated instance took 15+ minutes on a loaded machine).
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
    )
    @given(instance=from_schema(_for_generation(schema)), data=st.data())
    def check(instance: Any, data: st.DataObject) -> None:
        assert _JUDGE.valid(schema, instance), instance
        _verdict(module, type_, schema, instance)
        for _ in range(MUTANTS):
            _verdict(module, type_, schema, _mutant(instance, data, names, consts))

    check()


def test_every_def_is_judged() -> None:
    expected = sum(
        not node.get("x-docs-ignore")
        for version in MODULES
        for node in _schema_of(version)["$defs"].values()
    )
    assert len(_cases()) == expected > 250


#: Constructs the published schemas (npm ``@agentclientprotocol/sdk`` 2.4.0)
#: brought, each with values the judge accepts and rejects: the generated
#: type must agree on every one (beside the generated instances above).
CONSTRUCTS: list[tuple[str, str, list[Any]]] = [
    # untagged inline object variants, a property with no type ("Required,
    # even if JSON null"): any JSON value, but present
    (
        "v1",
        "MessageMcpResponse",
        [
            {"result": None},
            {"result": [1, {"a": None}]},
            {"result": "x", "_meta": {"k": 1}},
            {"error": {"code": 1, "message": "m"}},
            {"error": None},
            {"result": None, "error": {"code": 1, "message": "m"}},
            {},
            {"_meta": {}},
            [],
            None,
        ],
    ),
    # an untagged variant that is only a title: any JSON value
    (
        "v2",
        "ErrorData",
        [
            None,
            1,
            "x",
            [1, 2],
            {"sessionId": "s"},
            {"sessionId": 5},
            {"supportedVersions": [1]},
            {"anything": {"nested": [None]}},
        ],
    ),
    # an object whose tagged alternatives narrow one of its own properties
    (
        "v2",
        "IdleStateUpdate",
        [
            {"stopReason": "end_turn"},
            {"stopReason": "end_turn", "usage": None, "background": []},
            {"stopReason": "cancelled", "_meta": None},
            {"stopReason": "_custom"},
            {"stopReason": None},
            {},
            {"stopReason": 3},  # default-on-error: as absent, the "none" variant
            [],
            "idle",
        ],
    ),
]


@pytest.mark.parametrize(
    ("version", "name", "values"),
    [
        pytest.param(*c, id=f"{c[0]}:{c[1]}", marks=needs(c[0], type=c[1]))
        for c in CONSTRUCTS
    ],
)
def test_constructs_of_the_published_schemas_agree_with_the_schema(
    version: str, name: str, values: list[Any]
) -> None:
    module = MODULES[version]
    schema, type_ = _judged_schema(version, name)
    verdicts = set()
    for value in values:
        _verdict(module, type_, schema, value)
        verdicts.add(_JUDGE.valid(schema, _JUDGE.repair(schema, value)))
    assert verdicts == {True, False} or name == "ErrorData"  # both sides judged
