"""Reading JSON Schema nodes: references, alternatives, integer bounds, the
keywords the generated types express and those they refuse.

Plain functions of one node, shared by the parser (`parse.py`) and the
variant reader (`variants.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import ir

REF = "#/$defs/"


class SchemaError(Exception):
    """The schema has a shape this generator does not know how to model."""


_ANNOTATIONS = frozenset({"title", "description", "examples", "$comment"})
LENIENT_KEYS = frozenset(
    {
        "x-deserialize-default-on-error",
        "x-deserialize-default-on-null",
        "x-deserialize-skip-invalid-items",
    }
)
#: The value of each JSON type that a receiver's ``Default`` gives (what
#: ``x-deserialize-default-on-null`` reads a ``null`` as when the property
#: states no ``default``): the upstream SDKs' empty list and empty map.
_EMPTY: dict[str, Any] = {"array": [], "object": {}}


def null_default(prop: dict[str, Any]) -> Any:
    """What ``null`` decodes as in a property marked
    ``x-deserialize-default-on-null``: its ``default``, else the empty value
    of its type (an array's ``[]``, an object's ``{}``)."""
    if "default" in prop:
        return prop["default"]
    types = prop.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    kinds = [t for t in types if t != "null"]
    if len(kinds) != 1 or kinds[0] not in _EMPTY:
        raise SchemaError(
            "x-deserialize-default-on-null without a default on a property "
            f"whose empty value is not known (an array or an object): {prop}"
        )
    return _EMPTY[kinds[0]]


def constraining_keywords(node: dict[str, Any]) -> dict[str, Any]:
    """`node` without its annotations (JSON Schema keywords that constrain
    nothing): ``{"title": "Other"}`` is ``{}``, any JSON value."""
    return {k: v for k, v in node.items() if k not in _ANNOTATIONS}


def forbidden_properties(node: dict[str, Any]) -> tuple[str, ...]:
    """The properties an object schema forbids: ``"not": {"type": "object",
    "required": [...]}`` (any other ``not`` of an object is not modelled)."""
    negated = node.get("not")
    if negated is None:
        return ()
    if set(negated) - {"type", "required"} or negated.get("type", "object") != (
        "object"
    ):
        raise SchemaError(f"`not` not modelled: {negated}")
    return tuple(negated.get("required", []))


def extends(stable: Any, unstable: Any) -> bool:
    """Whether the unstable schema node only adds to the stable one.

    Added optional properties, added union variants (and the `other`
    branch's ``not`` list growing with them), added enum values, changed
    descriptions and defaults: every stable value keeps its Python shape.
    Anything else (a property removed or retyped, a new requirement, an
    object turned into a union) reshapes the type.
    """
    if stable == unstable:
        return True
    if not (isinstance(stable, dict) and isinstance(unstable, dict)):
        return False
    for key in stable.keys() | unstable.keys():
        if key in ("description", "default", "title", "not"):
            continue
        if key not in stable or key not in unstable:
            return False
        old, new = stable[key], unstable[key]
        if key == "properties":
            if any(p not in new or not extends(v, new[p]) for p, v in old.items()):
                return False
        elif key == "required":
            if not set(new) <= set(old):
                return False
        elif key in ("anyOf", "oneOf"):
            if not all(any(extends(a, b) for b in new) for a in old):
                return False
        elif key == "enum":
            if not set(old) <= set(new):
                return False
        elif not extends(old, new):
            return False
    return True


def ref_name(ref: str) -> str:
    if not ref.startswith(REF):
        raise SchemaError(f"only local $defs references are supported: {ref}")
    return ref[len(REF) :]


def one_alternative(node: dict[str, Any]) -> bool:
    """Whether a value must fit exactly one of `node`'s alternatives (a
    ``oneOf``; an ``anyOf`` takes a value fitting several)."""
    return "anyOf" not in node and "oneOf" in node


def alternatives_of(node: dict[str, Any]) -> list[dict[str, Any]] | None:
    alts = node.get("anyOf", node.get("oneOf"))
    return list(alts) if alts is not None else None


def single_ref(node: dict[str, Any]) -> str | None:
    """The `$defs` name of ``{"allOf": [{"$ref": ...}]}`` or ``{"$ref": ...}``."""
    if "$ref" in node:
        return ref_name(node["$ref"])
    all_of = node.get("allOf")
    if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
        return ref_name(all_of[0]["$ref"])
    return None


def walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield ref_name(value)
            else:
                yield from walk_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk_refs(item)


#: Integer `format`s of the schema and their ranges: a peer in a typed language
#: cannot send a value outside them, so neither do we accept one.
INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    f"{sign}int{bits}": (
        (0, 2**bits - 1) if sign else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    for sign in ("", "u")
    for bits in (8, 16, 32, 64)
}


def integer_prim(node: dict[str, Any]) -> ir.Prim:
    """``int`` with the bounds of `minimum`/`maximum` and of an integer `format`.

    Bounds that are exactly the format's give the format's named alias
    (``UInt32``); narrower ones are spelled out.
    """
    low, high = node.get("minimum"), node.get("maximum")
    fmt = node.get("format")
    if fmt is None:
        return ir.Prim("int", low, high)
    if fmt not in INTEGER_FORMATS:
        raise SchemaError(f"unknown integer format {fmt!r}: {node}")
    fmt_low, fmt_high = INTEGER_FORMATS[fmt]
    low = fmt_low if low is None else max(low, fmt_low)
    high = fmt_high if high is None else min(high, fmt_high)
    if (low, high) == (fmt_low, fmt_high):
        return ir.Prim("int", low, high, format=fmt)
    return ir.Prim("int", low, high)


#: Validation keywords the generated types do not express: a schema that starts
#: using one fails generation rather than decoding more than it allows.
UNSUPPORTED = frozenset(
    {
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
        "contains",
        # what a property or an untagged variant may say that `_type` does
        # not read: refused, never read as "any value"
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "prefixItems",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
