"""Decoding rules shared by the generated protocol modules.

The one hand-written part of ``acp_schema`` (edit it here: acp-codegen
generates the other modules, which import it, and copies this package into
a package it writes elsewhere). Depends on msgspec alone. Its modules:
`_bounds` (the lenient path's bounds and error texts), `_checks` (the
``__post_init__`` checks), `_markers` (what generated code declares with),
`_hints` (type hints read, strict conversion, by-shape picks), `_codec`
(the `Codec`).

The fast path is plain msgspec: a message whose unions all carry known tags
decodes in one pass, in C. Only when that strict pass fails does `Codec` walk
the untyped value and apply the schema's forward-compatibility rules:

- an unknown tag in an open union is kept as that union's `OtherVariant`
  (its raw JSON object, re-encoded unchanged);
- ``x-deserialize-default-on-error``: a bad value falls back to the default;
- ``x-deserialize-skip-invalid-items``: bad array items are dropped;
- ``x-deserialize-default-on-null``: a ``null`` decodes as the field's
  default (the type's empty value: ``[]``, ``{}``), and re-encodes as that.

Unions that no single tag tells apart (`ShapeUnion`) are decoded untyped and
resolved by the owning Struct's ``__post_init__``: the first variant, in schema
order, that accepts the value wins.
"""

from msgspec import UNSET, UnsetType

from ._bounds import LENIENT_LIMITS, LenientLimitError, LenientLimits
from ._checks import check_alternatives, check_uint64, tag_guard
from ._codec import Codec
from ._markers import FieldRule, Method, OpenUnion, OtherVariant, RawObject, ShapeUnion

__all__ = [
    "LENIENT_LIMITS",
    "UNSET",
    "Codec",
    "FieldRule",
    "LenientLimitError",
    "LenientLimits",
    "Method",
    "OpenUnion",
    "OtherVariant",
    "RawObject",
    "ShapeUnion",
    "UnsetType",
    "check_alternatives",
    "check_uint64",
    "tag_guard",
]
