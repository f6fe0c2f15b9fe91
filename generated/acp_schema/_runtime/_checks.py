"""``__post_init__`` checks the generated Structs call: ``uint64`` upper
bounds, flattened alternatives; and the guard that keeps a lone tagged
Struct a tagged union."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

UINT64_MAX = 2**64 - 1


def check_uint64(obj: msgspec.Struct) -> None:
    """``__post_init__`` check of the ``uint64`` fields of `obj` (its ``_uint64``).

    Their lower bound is a `msgspec.Meta`; the upper one cannot be (Meta bounds
    must fit in an int64), so it is checked here. msgspec reports the
    ValueError as a ValidationError at the Struct's path.
    """
    attrs: tuple[str, ...] = getattr(obj, "_uint64")  # noqa: B009
    for attr in attrs:
        value: Any = getattr(obj, attr)
        if type(value) is int and value > UINT64_MAX:
            raise ValueError(uint64_message(type(obj), attr))


def check_alternatives(obj: msgspec.Struct) -> None:
    """``__post_init__`` check of a class with untagged alternatives flattened
    into it (its ``_alternatives``): the value holds the required fields of one,
    and of one only when they are a ``oneOf`` (its ``_one_alternative``): the
    fields present are valid, so a value holding two alternatives' required
    fields fits both, which a ``oneOf`` refuses."""
    cls = type(obj)
    fits = 0
    for required, _ in alternatives_of(cls):
        if all(getattr(obj, attr) is not UNSET for attr in required):
            fits += 1
    if fits == 0:
        raise ValueError(_alternatives_message(cls))
    if fits > 1 and getattr(cls, "_one_alternative", False):
        raise ValueError(_alternatives_message(cls, one=True))


_Alternatives = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def alternatives_of(cls: type) -> _Alternatives:
    """A class's ``_alternatives``: (required, declared only there) attributes."""
    alternatives: _Alternatives = getattr(cls, "_alternatives", ())
    return alternatives


def _alternatives_message(cls: type[msgspec.Struct], *, one: bool = False) -> str:
    wire = {f.name: f.encode_name for f in msgspec.structs.fields(cls)}
    needs = " | ".join(
        " + ".join(f"`{wire[a]}`" for a in required) or "nothing"
        for required, _ in alternatives_of(cls)
    )
    if one:
        return f"Object fits more than one of its alternatives (one of {needs})"
    return f"Object fits none of its alternatives (needs {needs})"


_GUARDS: dict[str, type[msgspec.Struct]] = {}


GUARD_TAG = "\x00no variant"


def tag_guard(tag_field: str) -> type[msgspec.Struct]:
    """A variant no value is: beside a lone tagged Struct, it makes a Union that
    msgspec decodes as a tagged union (a lone tagged Struct would be read without
    its tag, and re-encoded with one the sender never wrote)."""
    guard = _GUARDS.get(tag_field)
    if guard is None:

        def refuse(self: msgspec.Struct) -> None:
            raise ValueError(f"Invalid value {GUARD_TAG!r}")

        guard = _GUARDS[tag_field] = msgspec.defstruct(
            "TagGuard",
            [],
            tag_field=tag_field,
            tag=GUARD_TAG,
            namespace={"__post_init__": refuse},
        )
    return guard


def lone_tagged(hint: Any) -> bool:
    config = getattr(hint, "__struct_config__", None)
    return config is not None and config.tag_field is not None


def uint64_message(cls: type[msgspec.Struct], attr: str) -> str:
    wire = next(f.encode_name for f in msgspec.structs.fields(cls) if f.name == attr)
    return f"Expected `int` <= {UINT64_MAX} in `{wire}`"
