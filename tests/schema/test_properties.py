"""Property test: what the JSON schema allows, the generated types round-trip.

For every request params, response result and notification params type in the
method tables of both protocol versions, hypothesis-jsonschema generates
instances of the type's ``$defs`` schema; each must decode into the type and
re-encode to an equal JSON value.

The schema is transformed before generation, only ever to *restrict* what is
generated: every instance is also validated against the untransformed schema,
so a transformation that widened it would fail the test. The transformations:

1. Known object types are closed (``additionalProperties: false``), see
   `_close`. A Struct keeps only its declared fields (extension data belongs in
   ``_meta``), so an unknown property on a known object is dropped by design and
   would not round-trip. Not closed: objects that already say what to do with
   extra properties (``_meta`` and maps, which have ``additionalProperties``),
   variants titled "other" (kept raw and re-encoded whole: everything under
   them keeps the original, open schema, via the ``<Name>__open`` copies of the
   defs) and the negated schemas under ``not`` (closing those would widen).
   An object built from ``allOf`` members and ``anyOf``/``oneOf`` variants (a
   tagged variant is ``{"properties": {tag}, "allOf": [{"$ref": body}]}``) is
   closed over the names its parts declare: a closed part lists the names the
   other parts declare as ``{}`` (any value) properties, a referenced def that
   needs them is inlined, and a parent with variants is left open for each
   variant to close (so a variant does not admit its siblings' properties).
2. Annotation keywords (``description``, ``title``, ``discriminator``,
   ``default``, ``x-*``) are removed and every ``$ref`` is inlined (the defs are
   not recursive), see `_strip` and `_inline`. Neither changes which instances
   are valid; hypothesis-jsonschema re-serialises and re-validates subschemas
   many times, and with all the ``$defs`` and their docs it is several times
   slower.

3. Integer formats (``uint32``, ``int64``, ...), which hypothesis-jsonschema
   ignores, become the bounds they name (the generated types enforce them).

Nothing else is needed: hypothesis-jsonschema handles ``not`` over ``anyOf``
(by filtering), ignores ``unevaluatedProperties: true`` (which allows
everything anyway) and ``format: double``, and generates ``format: uri``
strings as ``https://`` URLs. Sizes are not capped.

Bounded: `EXAMPLES` instances per type (``PROPERTY_EXAMPLES``, default 10),
no shrinking (a failing instance is reported as generated).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import _hjs_compat  # noqa: F401  (adapts hypothesis-jsonschema)
import jsonschema
import pytest
from _schema_judge import INTEGER_FORMATS
from acp_schema import v1, v1_unstable, v2, v2_unstable
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis_jsonschema import from_schema

SPEC = Path(__file__).parents[2] / "spec"
# More with PROPERTY_EXAMPLES=N (a deeper search, e.g. after a codec change):
# the default keeps tests/schema within a few CPU minutes.
EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "10"))
MODULES: dict[str, ModuleType] = {
    "v1": v1,
    "v2": v2,
    "v1_unstable": v1_unstable,
    "v2_unstable": v2_unstable,
}
TABLES = {
    "AGENT_METHODS": "agent",
    "CLIENT_METHODS": "client",
    "PROTOCOL_METHODS": "protocol",
}
OPEN = "__open"  # suffix of the untransformed copy of a def, used under "other"
# Keywords that do not constrain instances.
ANNOTATIONS = ("description", "title", "discriminator", "default")

Schema = dict[str, Any]


# -- schema walking ---------------------------------------------------------

_ONE = ("items", "additionalProperties", "propertyNames", "contains", "not")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs")


def _map_subschemas(schema: Schema, fn: Any) -> Schema:
    """A copy of `schema` with `fn` applied to each direct subschema."""
    out = dict(schema)
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            out[key] = fn(schema[key])
    for key in _MANY:
        if key in schema:
            out[key] = [fn(sub) for sub in schema[key]]
    for key in _MAP:
        if key in schema:
            out[key] = {name: fn(sub) for name, sub in schema[key].items()}
    return out


def _ref_name(schema: Schema) -> str:
    ref: str = schema["$ref"]
    assert ref.startswith("#/$defs/"), ref
    return ref.removeprefix("#/$defs/")


def _names(schema: Any, defs: dict[str, Schema]) -> frozenset[str]:
    """The property names `schema` declares, with its allOf members' and variants'."""
    if not isinstance(schema, dict):
        return frozenset()
    if "$ref" in schema:
        return _names(defs[_ref_name(schema)], defs)
    names = set(schema.get("properties", {}))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            names |= _names(sub, defs)
    return frozenset(names)


# -- transformation 1: closing known objects --------------------------------


def _open(schema: Any) -> Any:
    """`schema` unchanged, but referring to the untransformed defs."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return {**schema, "$ref": schema["$ref"] + OPEN}
    return _map_subschemas(schema, _open)


def _close(schema: Any, defs: dict[str, Schema], extra: frozenset[str]) -> Any:
    """`schema` closed to the names it declares plus `extra` (see module doc)."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        if not extra:
            return schema  # the def itself is closed in place
        return _close(defs[_ref_name(schema)], defs, extra)  # inline, wider
    if schema.get("title") == "other":
        return _open(schema)
    if "additionalProperties" in schema:
        return _map_subschemas(schema, lambda sub: _close(sub, defs, frozenset()))

    own = frozenset(schema.get("properties", {}))
    members = schema.get("allOf", [])
    variants = schema.get("anyOf", []) + schema.get("oneOf", [])
    every = _names(schema, defs) | extra
    beside_variants = own | extra
    for member in members:
        beside_variants |= _names(member, defs)

    out = dict(schema)
    if "properties" in schema:
        out["properties"] = {
            name: _close(sub, defs, frozenset())
            for name, sub in schema["properties"].items()
        }
    for key in ("items", "additionalProperties", "propertyNames", "contains"):
        if isinstance(schema.get(key), dict):
            out[key] = _close(schema[key], defs, frozenset())
    if members:
        out["allOf"] = [_close(m, defs, every - _names(m, defs)) for m in members]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            out[key] = [
                _close(v, defs, beside_variants - _names(v, defs)) for v in schema[key]
            ]
    # `not` is kept as it is: closing a negated schema would widen the whole.
    if "properties" in schema and not any(_names(v, defs) for v in variants):
        padding = {name: {} for name in sorted(every - own)}
        out["properties"] = {**out["properties"], **padding}
        out["additionalProperties"] = False
    return out


# -- transformation 2: what only costs generation time ------------------------


def _seal_empty(schema: Schema) -> Schema:
    """A def that is an object declaring no property at all (v1 unstable
    ``CompactionCapabilities``: ``{}`` advertises the capability) is generated
    as a Struct without fields, so it is closed like any known object."""
    parts = ("properties", "additionalProperties", "allOf", "anyOf", "oneOf")
    if schema.get("type") == "object" and not any(key in schema for key in parts):
        return {**schema, "additionalProperties": False}
    return schema


def _strip(schema: Any) -> Any:
    """`schema` without annotation keywords, integer formats as bounds."""
    if not isinstance(schema, dict):
        return schema
    out = _map_subschemas(schema, _strip)
    for key in schema:
        if key in ANNOTATIONS or key.startswith("x-"):
            del out[key]
    if out.get("format") in INTEGER_FORMATS:
        low, high = INTEGER_FORMATS[out.pop("format")]
        out["minimum"] = max(low, out.get("minimum", low))
        out["maximum"] = min(high, out.get("maximum", high))
    return out


# -- cases ------------------------------------------------------------------


@functools.cache
def _original(version: str) -> Schema:
    folder, _, unstable = version.partition("_")
    name = "schema.unstable.json" if unstable else "schema.json"
    schema: Schema = json.loads((SPEC / folder / name).read_text())
    return schema


@functools.cache
def _transformed_defs(version: str) -> dict[str, Schema]:
    defs = _original(version)["$defs"]
    closed = {
        name: _close(_seal_empty(d), defs, frozenset()) for name, d in defs.items()
    }
    opened = {name + OPEN: _open(d) for name, d in defs.items()}
    return {name: _strip(d) for name, d in {**closed, **opened}.items()}


def _inline(schema: Any, defs: dict[str, Schema]) -> Any:
    """`schema` with every ``$ref`` replaced by its def (the defs are not recursive).

    Equivalent to the ``$defs`` document; hypothesis-jsonschema would otherwise
    carry and re-validate all the ``$defs`` at every reference it resolves.
    """
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        assert len(schema) == 1, schema
        return _inline(defs[_ref_name(schema)], defs)
    return _map_subschemas(schema, lambda sub: _inline(sub, defs))


def _def_name(version: str, table: str, method: str, kind: str, type_: Any) -> str:
    defs = _original(version)["$defs"]
    name = getattr(type_, "__name__", None)
    if isinstance(type_, type) and name in defs:
        return name
    # A union alias: the def that the schema marks as this method's type.
    found = [
        def_name
        for def_name, d in defs.items()
        if d.get("x-method") == method
        and d.get("x-side") in (TABLES[table], "both")
        and def_name.endswith("Response") == (kind == "result")
    ]
    assert len(found) == 1, (version, method, kind, found)
    return found[0]


def _cases() -> list[Any]:
    cases = []
    for version, module in MODULES.items():
        for table in TABLES:
            for method, entry in getattr(module, table).items():
                for kind in ("params", "result"):
                    type_ = getattr(entry, kind)
                    if type_ is None:
                        continue
                    name = _def_name(version, table, method, kind, type_)
                    cases.append(
                        pytest.param(
                            version, name, type_, id=f"{version}:{method}:{kind}"
                        )
                    )
    return cases


@pytest.mark.parametrize(("version", "name", "type_"), _cases())
def test_schema_instances_round_trip(version: str, name: str, type_: Any) -> None:
    module = MODULES[version]
    original = jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{name}", "$defs": _original(version)["$defs"]}
    )
    schema = _inline({"$ref": f"#/$defs/{name}"}, _transformed_defs(version))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        # No shrinking: a failure is reported as found, in bounded time.
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    @given(from_schema(schema))
    def check(instance: Any) -> None:
        original.validate(instance)  # the transformations only narrow the schema
        decoded = module.decode(json.dumps(instance).encode(), type_)
        assert json.loads(module.encode(decoded)) == instance

    check()


def test_every_method_type_is_covered() -> None:
    assert len(_cases()) == sum(
        (entry.result is not None) + 1
        for module in MODULES.values()
        for table in TABLES
        for entry in getattr(module, table).values()
    )
