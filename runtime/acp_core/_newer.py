"""A peer on a newer spec: a message naming a variant our schema lacks.

A closed union of the schema (a tagged union without an ``other``
variant: v1's ``SessionUpdate``, ``ContentBlock``, ...) decodes only the
tags it lists.  A peer generated from a later release may send a tag that
release added (``"sessionUpdate": "some_new_kind"``): for our schema the
message is invalid, and the codec says so (it stays exact).  What the
runtime does with it is the policy of ``docs/guide.md`` ("Peers on a newer
spec"):

- a notification is given to the handler object's optional
  ``unknown_variant(message)`` as an :class:`UnknownVariant`, in its place
  among the notifications (``session/update`` order kept); without that
  handler it is dropped; either way each kind is logged once (bounded);
- a request is answered -32602 "Invalid params" naming the variant
  (``data.unknownVariant``): it asks for something this side cannot know;
- a result raises :class:`UnknownVariantError` in the caller, with the
  answer's bytes in its ``variant``.

:func:`find_unknown_variant` tells such a failure from any other invalid
message, by the schema (never by a type or field name): msgspec's error
names the value and its path; the path is followed through the type and
through the JSON, and must end at the tag field of a tagged union whose
members do not include the value.  msgspec reports the first error: a
message with an unknown tag and a later, different fault is read as the
former (its raw params reach the application, which typed nothing of it).
Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final, Literal, cast

import msgspec
import msgspec.inspect as mi

from ._errors import INVALID_PARAMS, RequestError

__all__ = [
    "UNKNOWN_VARIANT_HANDLER",
    "UnknownVariant",
    "UnknownVariantError",
    "VariantLog",
    "find_unknown_variant",
    "read_unknown_variant",
    "variant_data",
]

#: msgspec's message for a value a type does not accept, with its path
_INVALID_VALUE: Final = re.compile(r"Invalid value (.+) - at `\$([^`]*)`", re.S)
#: one step of a msgspec path: ``.name`` or ``[3]`` (``[...]``: a dict's value)
_STEP: Final = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")

Where = Literal["notification", "request", "result"]
#: The optional method of a handler object given each notification naming
#: an unknown variant (an :class:`UnknownVariant`).
UNKNOWN_VARIANT_HANDLER: Final = "unknown_variant"


class UnknownVariant(msgspec.Struct, frozen=True, kw_only=True):
    """A message of a peer on a newer spec, as received: what
    ``unknown_variant(message)`` is given and what ``conn.forward(message)``
    sends on unchanged.

    ``method``: its wire name (``"session/update"``); ``where``: a
    ``"notification"``, a ``"request"``'s params or a call's ``"result"``;
    ``params``: the params (or result) exactly as received, bytes for
    bytes; ``path``: where the unknown tag is, from the params
    (``"$.update.sessionUpdate"``); ``tag``: its value (``"some_new_kind"``);
    ``known``: the tags our schema knows there; ``session_id``: the params'
    ``sessionId`` when it is a string.
    """

    method: str
    where: Where
    params: msgspec.Raw
    path: str
    tag: str | int | float | bool | None
    known: tuple[str, ...]
    session_id: str | None = None

    def decoded(self) -> Any:
        """The params as plain JSON values (dicts, lists, ...)."""
        return msgspec.json.decode(self.params)


class UnknownVariantError(RequestError):
    """The answer to our call names a variant our schema lacks (a peer on a
    newer spec).  ``variant`` holds the result's bytes; ``code`` is -32602."""

    def __init__(self, variant: UnknownVariant, data: Any = None) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"Invalid result from peer: unknown variant {variant.tag!r} at "
            f"{variant.path} (a peer on a newer spec)",
            data,
        )
        self.variant = variant


class VariantLog:
    """Which unknown variants were logged already: each ``(method, path, tag)``
    once, at most ``bound`` of them remembered (later ones: DEBUG)."""

    __slots__ = ("bound", "seen")

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.seen: set[tuple[str, str, str]] = set()

    def first(self, variant: UnknownVariant) -> bool:
        """Whether ``variant``'s kind is new (then remembered, within the bound)."""
        key = (variant.method, variant.path, repr(variant.tag))
        if key in self.seen or len(self.seen) >= self.bound:
            return False
        self.seen.add(key)
        return True


@functools.lru_cache(maxsize=256)
def _info(type_: Any) -> mi.Type:
    return mi.type_info(type_)


def _unwrap(t: mi.Type) -> mi.Type:
    while isinstance(t, mi.Metadata):
        t = t.type
    return t


def _members(t: mi.Type) -> tuple[mi.Type, ...]:
    t = _unwrap(t)
    if isinstance(t, mi.UnionType):
        return tuple(_unwrap(m) for m in t.types)
    return (t,)


def _object(value: Any) -> dict[str, Any] | None:
    """``value`` if it is a JSON object."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _array(value: Any) -> list[Any] | None:
    """``value`` if it is a JSON array."""
    if not isinstance(value, list):
        return None
    items: list[Any] = cast(Any, value)  # list[Unknown] to pyright
    return items


def _struct_for(t: mi.Type, value: Any) -> mi.StructType | None:
    """The struct of ``t`` (a struct, or a union with one) that ``value`` is."""
    structs = [m for m in _members(t) if isinstance(m, mi.StructType)]
    if len(structs) == 1:
        return structs[0]
    obj = _object(value)
    if obj is None:
        return None
    for s in structs:
        if s.tag_field is not None and obj.get(s.tag_field) == s.tag:
            return s
    return None


def _step(t: mi.Type, value: Any, step: re.Match[str]) -> tuple[mi.Type, Any] | None:
    """One step of a path: the type and JSON value it leads to."""
    name, index = step.group(1), step.group(2)
    if name is not None:
        struct = _struct_for(t, value)
        obj = _object(value)
        if struct is None or obj is None or name not in obj:
            return None
        for f in struct.fields:
            if f.encode_name == name:
                return f.type, obj[name]
        return None
    if index is None or index == "...":
        return None  # a dict's value: its key is not in the path
    arrays = [
        m
        for m in _members(t)
        if isinstance(m, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType)
    ]
    position = int(index)
    items = _array(value)
    if len(arrays) != 1 or items is None or position >= len(items):
        return None
    return arrays[0].item_type, items[position]


def find_unknown_variant(
    type_: Any, data: bytes | msgspec.Raw, error: Exception
) -> tuple[str, Any, tuple[str, ...]] | None:
    """``(path, tag, known tags)`` when ``error`` (``type_`` failing to decode
    ``data``) is an unknown tag of a closed tagged union, else None."""
    if not isinstance(error, msgspec.ValidationError):
        return None
    found = _INVALID_VALUE.fullmatch(str(error))
    if found is None:
        return None
    steps = list(_STEP.finditer(found.group(2)))
    if not steps or "".join(s.group(0) for s in steps) != found.group(2):
        return None
    *parents, last = steps
    tag_field = last.group(1)
    if tag_field is None:
        return None
    try:
        value: Any = msgspec.json.decode(data)
        t: mi.Type = _info(type_)
    except Exception:
        return None
    for step in parents:
        moved = _step(t, value, step)
        if moved is None:
            return None
        t, value = moved
    obj = _object(value)
    if obj is None or tag_field not in obj:
        return None
    structs = [m for m in _members(t) if isinstance(m, mi.StructType)]
    known = tuple(str(s.tag) for s in structs if s.tag_field == tag_field)
    if not known or len(known) != len(structs):
        return None  # not a tagged union on this field
    tag: Any = obj[tag_field]
    if isinstance(tag, dict | list) or str(tag) in known:
        return None
    return "$" + found.group(2), tag, known


def read_unknown_variant(
    method: str,
    where: Where,
    type_: Any,
    data: bytes | msgspec.Raw,
    error: Exception,
) -> UnknownVariant | None:
    """The :class:`UnknownVariant` ``error`` says ``data`` is, or None (see
    :func:`find_unknown_variant`)."""
    found = find_unknown_variant(type_, data, error)
    if found is None:
        return None
    path, tag, known = found
    obj = _object(msgspec.json.decode(data))  # it decoded in find_unknown_variant
    session = None if obj is None else obj.get("sessionId")
    return UnknownVariant(
        method=method,
        where=where,
        params=data if isinstance(data, msgspec.Raw) else msgspec.Raw(data),
        path=path,
        tag=tag,
        known=known,
        session_id=session if isinstance(session, str) else None,
    )


def variant_data(variant: UnknownVariant, root: str, limit: int) -> dict[str, Any]:
    """The ``data`` of the -32602 answering a request with an unknown variant."""
    path = root + variant.path[1:]
    tag = variant.tag
    if isinstance(tag, str) and len(tag) > limit:
        tag = tag[: limit - 3] + "..."
    return {
        "path": path[:limit],
        "message": "unknown variant (a peer on a newer spec?)",
        "unknownVariant": {"tag": tag, "known": list(variant.known)},
    }
