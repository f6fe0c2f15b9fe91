"""The JSON Schema as the judge of `decode()`: what may and may not differ.

`Judge` answers three questions about a JSON value and a ``$defs`` type, from
the untransformed schema (``jsonschema``, draft 2020-12):

- `Judge.valid`: is the value an instance of the schema? Integer ``format``s
  (``uint32``, ``int64``, ...) are asserted as the ranges they name, as a peer
  in a typed language enforces them (string formats are not asserted).
- `Judge.repair`: the value after the schema's own lenient rules, which a
  receiver applies before judging: ``x-deserialize-default-on-null`` (a
  ``null`` is the property's ``default``, else its type's empty value),
  ``x-deserialize-default-on-error`` (an invalid property value is replaced
  by the property's ``default``, or removed when it has none) and
  ``x-deserialize-skip-invalid-items`` (invalid array items are removed),
  innermost first.
- `Judge.differences`: between the (repaired) value and what
  ``encode(decode(value))`` gives back, every difference that is not an
  *unknown-property drop*: a property the schema does not declare for that
  object (in the variant that the value matches first, in schema order) may be
  left out, because a Struct keeps only its declared fields. The tag property
  of a union is declared for every branch when it holds a string (an unknown
  tag is kept raw, never dropped by reading the value as an untagged
  variant). Every other key must come back, with an equal value, and no key
  may be added. An object the
  schema does not describe property by property but whose
  ``additionalProperties`` allows more (``_meta``, maps) comes back whole.

One rule narrows the schema (`tags_name_their_variant`): in a union of tagged
variants and an untagged default one (v1 ``AuthMethod``, ``McpServer``,
``SetSessionConfigOptionRequest``), a value carrying a known tag is that
variant, never the default: ``{"type": "boolean", "value": "x", ...}`` is an
invalid boolean option, although the schema's ``value_id`` branch, which does
not declare ``type``, would take it. Reading it as the default would drop the
tag. (An unknown string tag is kept raw, see `Judge.differences`.)

These are the only allowed differences between the schema and `decode()`;
`test_differential.py` lists them once more, with the three places where the
test itself narrows what it compares.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema

Schema = dict[str, Any]

INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    f"{sign}int{bits}": (
        (0, 2**bits - 1) if sign else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    for sign in ("", "u")
    for bits in (8, 16, 32, 64)
}

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
for _fmt, (_low, _high) in INTEGER_FORMATS.items():

    def _in_range(value: object, low: int = _low, high: int = _high) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True  # the format constrains integers only
        return low <= value <= high

    FORMAT_CHECKER.checks(_fmt)(_in_range)

_ONE = ("items", "additionalProperties", "propertyNames", "contains", "not")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs")


def map_subschemas(schema: Schema, fn: Any) -> Schema:
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


def ref_name(schema: Schema) -> str:
    ref: str = schema["$ref"]
    assert ref.startswith("#/$defs/"), ref
    return ref.removeprefix("#/$defs/")


def inline(schema: Any, defs: dict[str, Schema]) -> Any:
    """`schema` with every ``$ref`` replaced by its def (the defs are not
    recursive), without the ``description`` texts."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        rest = {k: v for k, v in schema.items() if k not in ("$ref", "description")}
        target = inline(defs[ref_name(schema)], defs)
        return {"allOf": [target], **inline(rest, defs)} if rest else target
    out = map_subschemas(schema, lambda sub: inline(sub, defs))
    out.pop("description", None)
    return out


_ANY: Schema = {}


def _branches(schema: Schema) -> list[Schema]:
    return [*schema.get("anyOf", []), *schema.get("oneOf", [])]


def _branch_tags(branch: Schema) -> dict[str, str]:
    """Property -> const string, of a branch (its own and its allOf members')."""
    found = {
        name: sub["const"]
        for name, sub in branch.get("properties", {}).items()
        if isinstance(sub.get("const"), str)
    }
    for member in branch.get("allOf", []):
        found.update(_branch_tags(member))
    return found


def union_tags(schema: Schema) -> dict[str, set[str]]:
    """Tag property -> the known tags, of the branches of `schema`. A union
    without tagged branches but with an ``other`` one has that branch's tag
    property (its first), with no known tag."""
    tags: dict[str, set[str]] = {}
    for branch in _branches(schema):
        for name, value in _branch_tags(branch).items():
            tags.setdefault(name, set()).add(value)
    if not tags:
        for branch in _branches(schema):
            if branch.get("title") == "other" and branch.get("properties"):
                tags[next(iter(branch["properties"]))] = set()
    return tags


def tags_name_their_variant(schema: Any) -> Any:
    """`schema` where untagged branches of a tagged union exclude the known tags."""
    if not isinstance(schema, dict):
        return schema
    out = map_subschemas(schema, tags_name_their_variant)
    tags = union_tags(out)
    if len(tags) != 1:
        return out
    ((field, known),) = tags.items()
    if not known:
        return out
    for key in ("anyOf", "oneOf"):
        if key not in out:
            continue
        branches = []
        for branch in out[key]:
            if field not in _branch_tags(branch) and branch.get("title") != "other":
                exclude = {
                    "not": {
                        "required": [field],
                        "properties": {field: {"enum": sorted(known)}},
                    }
                }
                branch = {"allOf": [branch, exclude]}
            branches.append(branch)
        out[key] = branches
    return out


class Judge:
    """The untransformed schema's verdicts on values of one inlined type."""

    def __init__(self) -> None:
        self._validators: dict[int, tuple[Schema, Any]] = {}
        self._combined: dict[tuple[int, ...], Schema] = {}

    def _all_of(self, schemas: list[Schema]) -> Schema:
        """``{"allOf": schemas}``, the same object each time (validators are cached by id)."""
        if len(schemas) == 1:
            return schemas[0]
        key = tuple(map(id, schemas))
        combined = self._combined.get(key)
        if combined is None:
            combined = self._combined[key] = {"allOf": schemas}
        return combined

    def valid(self, schema: Schema, value: Any) -> bool:
        entry = self._validators.get(id(schema))
        if entry is None:
            validator = jsonschema.Draft202012Validator(
                schema, format_checker=FORMAT_CHECKER
            )
            # keep `schema` alive: its id stays its own
            entry = self._validators[id(schema)] = (schema, validator)
        return bool(entry[1].is_valid(value))

    # -- the lenient rules ----------------------------------------------------

    def repair(self, schema: Schema, value: Any) -> Any:
        """`value` after the schema's lenient rules (a copy; `value` is unchanged)."""
        return self._repair(schema, copy.deepcopy(value))

    def _repair(self, schema: Schema, value: Any) -> Any:
        for member in schema.get("allOf", []):
            value = self._repair(member, value)
        if isinstance(value, dict):
            for name, sub in schema.get("properties", {}).items():
                if name in value:
                    self._repair_property(value, name, sub)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                declared = schema.get("properties", {})
                for name in [n for n in value if n not in declared]:
                    value[name] = self._repair(extra, value[name])
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            value = [self._repair(schema["items"], item) for item in value]
        branches = _branches(schema)
        if branches:
            for branch in branches:
                repaired = self._repair(branch, copy.deepcopy(value))
                if self.valid(branch, repaired):
                    return repaired
        return value

    def _repair_property(self, obj: dict[str, Any], name: str, schema: Schema) -> None:
        if obj[name] is None and schema.get("x-deserialize-default-on-null"):
            obj[name] = _null_default(schema)
        value = self._repair(schema, obj[name])
        if schema.get("x-deserialize-skip-invalid-items") and isinstance(value, list):
            item_schema = _items_schema(schema)
            if item_schema is not None:
                value = [item for item in value if self.valid(item_schema, item)]
        if not self.valid(schema, value) and schema.get(
            "x-deserialize-default-on-error"
        ):
            if "default" in schema:
                obj[name] = copy.deepcopy(schema["default"])
            else:
                del obj[name]
            return
        obj[name] = value

    # -- comparing ------------------------------------------------------------

    def differences(self, schema: Schema, expected: Any, got: Any) -> list[str]:
        """Every difference between `expected` and `got` other than
        unknown-property drops (`expected` is valid for `schema`)."""
        return list(self._differences(schema, expected, got, "$"))

    def _flatten(self, schema: Schema, value: Any) -> list[Schema]:
        """The schemas that apply to `value`: `schema`, its ``allOf`` members
        and, of each ``anyOf``/``oneOf``, the first branch `value` matches."""
        found = [schema]
        for member in schema.get("allOf", []):
            found += self._flatten(member, value)
        for branch in _branches(schema):
            if self.valid(branch, value):
                found += self._flatten(branch, value)
                break
        return found

    def _differences(
        self, schema: Schema, expected: Any, got: Any, path: str
    ) -> Iterator[str]:
        parts = self._flatten(schema, expected)
        if isinstance(expected, dict):
            if not isinstance(got, dict):
                yield f"{path}: expected an object, got {got!r}"
                return
            declared: dict[str, list[Schema]] = {}
            extra: list[Schema] = []
            # A record (properties, or an object type that does not say what
            # to do with more) keeps its declared properties only; anything
            # else (untyped values, maps, ``_meta``) comes back whole.
            record = False
            for part in parts:
                for name, sub in part.get("properties", {}).items():
                    declared.setdefault(name, []).append(sub)
                if isinstance(part.get("additionalProperties"), dict):
                    extra.append(part["additionalProperties"])
                types = part.get("type")
                is_object = types == "object" or (
                    isinstance(types, list) and "object" in types
                )
                record = (
                    record
                    or "properties" in part
                    or (is_object and "additionalProperties" not in part)
                )
            if extra or any(p.get("additionalProperties") is True for p in parts):
                record = record and bool(declared)
            # The tag property of a union is known whatever branch the value
            # matches, when it holds a string: an unknown tag must be kept.
            tags = {field for part in parts for field in union_tags(part)}
            for name, value in expected.items():
                subs = declared.get(name) or extra
                if name not in got:
                    tag = name in tags and isinstance(value, str)
                    if name in declared or not record or tag:
                        yield f"{path}.{name}: a known property was lost"
                    continue  # an unknown property, dropped
                sub = self._all_of(subs) if subs else _ANY
                yield from self._differences(sub, value, got[name], f"{path}.{name}")
            for name in got:
                if name not in expected:
                    yield f"{path}.{name}: added, with {got[name]!r}"
            return
        if isinstance(expected, list):
            if not isinstance(got, list) or len(got) != len(expected):
                yield f"{path}: expected {expected!r}, got {got!r}"
                return
            items = [p["items"] for p in parts if isinstance(p.get("items"), dict)]
            sub = self._all_of(items) if items else _ANY
            for i, (e, g) in enumerate(zip(expected, got, strict=True)):
                yield from self._differences(sub, e, g, f"{path}[{i}]")
            return
        if expected != got or isinstance(expected, bool) != isinstance(got, bool):
            yield f"{path}: expected {expected!r}, got {got!r}"


def _null_default(schema: Schema) -> Any:
    """What ``x-deserialize-default-on-null`` reads a ``null`` as: the
    property's ``default``, else its type's ``Default`` in the upstream SDKs
    (serde_with's ``DefaultOnNull``; the TypeScript SDK's ``defaultOnNull``):
    an empty array or object."""
    if "default" in schema:
        return copy.deepcopy(schema["default"])
    types = schema.get("type")
    kinds = {types} if isinstance(types, str) else set(types or ()) - {"null"}
    empty: dict[str, Any] = {"array": [], "object": {}}
    (kind,) = kinds & empty.keys()
    return empty[kind]


def _items_schema(schema: Schema) -> Schema | None:
    """The item schema of an array property (possibly nullable: ``anyOf``)."""
    if isinstance(schema.get("items"), dict):
        items: Schema = schema["items"]
        return items
    for part in [*schema.get("allOf", []), *_branches(schema)]:
        found = _items_schema(part)
        if found is not None:
            return found
    return None
