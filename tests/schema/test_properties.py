"""Property test: what the JSON schema allows, the generated types round-trip.

For every request params, response result and notification params type in the
method tables of both protocol versions, hypothesis-jsonschema generates
instances of the type's ``$defs`` schema; each must decode into the type and
re-encode to an equal JSON value.

The schema is transformed before generation (see `_closed_defs` and `_fix`),
only ever to *restrict* what is generated: every instance is also checked to be
valid against the untransformed schema, so a transformation that widened it
would fail the test. The transformations:

1. Known object types are closed (``additionalProperties: false``). A Struct
   keeps only its declared fields (extension data belongs in ``_meta``), so an
   unknown property on a known object is dropped by design and would not
   round-trip. Not closed: objects that already say what to do with extra
   properties (``_meta`` and maps, which have ``additionalProperties``), variants
   titled "other" (kept raw and re-encoded whole; everything under them keeps
   the original, open schema) and the negated schemas under ``not``. An object
   built from ``allOf`` members and ``anyOf``/``oneOf`` variants (a tagged
   variant is ``{"properties": {tag}, "allOf": [{"$ref": body}]}``) is closed
   over the union of the names its parts declare: each part that is closed
   lists the other parts' names as ``{}`` (any value) properties, a referenced
   def that needs that is inlined, and a parent with variants is left open for
   its variants to close.
2. Integers with a ``format`` get that format's range (``int64``: minimum
   -2**63, maximum 2**63 - 1, ...) where the schema gives no tighter bound: the
   format is the schema's statement of the range, which JSON Schema validation
   treats as an annotation only.
3. Arrays without ``maxItems`` get ``maxItems: 3``, and ``_meta`` objects
   ``maxProperties: 3``, to keep generation fast.
"""

from __future__ import annotations

import functools
import json
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import hypothesis_jsonschema._from_schema
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import from_schema

from acp_schema import v1, v2

SPEC = Path(__file__).parents[2] / "spec"
MODULES: dict[str, ModuleType] = {"v1": v1, "v2": v2}
TABLES = {
    "AGENT_METHODS": "agent",
    "CLIENT_METHODS": "client",
    "PROTOCOL_METHODS": "protocol",
}
OPEN = "__open"  # suffix of the untransformed copy of a def, used under "other"
MAX_ITEMS = 3
MAX_META_PROPERTIES = 3
# Keywords that do not constrain instances; hypothesis-jsonschema hashes and
# re-validates (sub)schemas as JSON text many times, so the long docs cost.
ANNOTATIONS = ("description", "title", "discriminator", "default")
INT_FORMATS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}

Schema = dict[str, Any]


# hypothesis-jsonschema 0.23.1 (its latest release) draws object properties
# with Hypothesis's internal `many` as `while elements.more(): ...
# elements.reject()`; newer Hypothesis made `many` a context manager iterated
# as `with many(...) as elements: for _ in elements:`, so every object schema
# fails with "'many' object has no attribute 'more'". Adapt the old protocol
# to the new one, for hypothesis-jsonschema's own reference only.
class _Many:
    def __init__(self, data: Any, **sizes: Any) -> None:
        self._many = conjecture_utils.many(data, **sizes)
        self._many.__enter__()
        self._elements = iter(self._many)

    def more(self) -> bool:
        if next(self._elements, self) is self:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


if not hasattr(conjecture_utils.many, "more"):
    hypothesis_jsonschema._from_schema.cu = types.SimpleNamespace(  # type: ignore[attr-defined]
        **{**vars(conjecture_utils), "many": _Many}
    )

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


# -- transformations 2 and 3: generation limits ------------------------------


def _fix(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = _map_subschemas(schema, _fix)
    for key in schema:
        if key in ANNOTATIONS or key.startswith("x-"):
            del out[key]
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types or []
    if "integer" in types and schema.get("format") in INT_FORMATS:
        low, high = INT_FORMATS[schema["format"]]
        out["minimum"] = max(schema.get("minimum", low), low)
        out["maximum"] = min(schema.get("maximum", high), high)
    if "array" in types and "maxItems" not in schema:
        out["maxItems"] = max(MAX_ITEMS, schema.get("minItems", 0))
    if "properties" in out:
        meta = out["properties"].get("_meta")
        if isinstance(meta, dict) and meta.get("additionalProperties") is True:
            out["properties"] = {
                **out["properties"],
                "_meta": {**meta, "maxProperties": MAX_META_PROPERTIES},
            }
    return out


# -- cases ------------------------------------------------------------------


@functools.cache
def _original(version: str) -> Schema:
    schema: Schema = json.loads((SPEC / version / "schema.json").read_text())
    return schema


@functools.cache
def _transformed_defs(version: str) -> dict[str, Schema]:
    defs = _original(version)["$defs"]
    closed = {name: _close(d, defs, frozenset()) for name, d in defs.items()}
    opened = {name + OPEN: _open(d) for name, d in defs.items()}
    return {name: _fix(d) for name, d in {**closed, **opened}.items()}


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
        and d.get("x-side") == TABLES[table]
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
        max_examples=25,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    @given(from_schema(schema))
    def check(instance: Any) -> None:
        # The transformations only narrow the schema.
        assert original.is_valid(instance)
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
