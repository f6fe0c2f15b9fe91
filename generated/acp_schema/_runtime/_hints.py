"""Reading the generated type hints, and strict conversion: the by-shape
unions' one-pass builders and picks, container constraints, the hook that
checks a `RawObject` in the strict pass."""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable
from typing import Any, TypeGuard

import msgspec
from msgspec import UNSET, UnsetType, ValidationError

from ._bounds import is_dict, is_list, json_type, rerooted
from ._markers import OtherVariant, RawObject, ShapeUnion


def is_raw_class(candidate: Any) -> TypeGuard[type[RawObject]]:
    """A class kept raw: an `OtherVariant`, or a `RawObject` of its own."""
    return isinstance(candidate, type) and issubclass(candidate, RawObject)


def dec_hook(type_: Any, obj: Any) -> Any:
    """msgspec's hook for the one type it does not know here: a `RawObject`
    decoded in the strict pass (checked strictly; its rules are the lenient
    pass's). An `OtherVariant` is reached through its union only."""
    if is_raw_class(type_) and not issubclass(type_, OtherVariant):
        if not is_dict(obj):
            raise ValidationError(f"Expected `object`, got `{json_type(obj)}`")
        if not type_.checks:
            return type_(obj)
        first_error: ValidationError | None = None
        for check in type_.checks:
            try:
                strict_convert(obj, check)
                return type_(obj)
            except ValidationError as error:
                first_error = first_error or error
        assert first_error is not None
        raise first_error
    raise NotImplementedError(type_)


#: `msgspec.convert` with `_dec_hook` (every conversion of the codec).
strict_convert = functools.partial(msgspec.convert, dec_hook=dec_hook)


Resolver = Callable[[Any, str], Any]


#: Struct class -> the wire names of its required fields.
_REQUIRED: dict[type, frozenset[str]] = {}


def may_repair(value: Any, candidate: Any) -> bool:
    """Whether `candidate`, which refused `value` strictly, might take it
    under the lenient rules: a Struct only with every required key present
    (no rule adds one), anything else only if `value` is a container."""
    if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
        required = _REQUIRED.get(candidate)
        if required is None:
            required = _REQUIRED[candidate] = frozenset(
                f.encode_name for f in msgspec.structs.fields(candidate) if f.required
            )
        return is_dict(value) and value.keys() >= required
    return is_dict(value) or is_list(value)


def strict(value: Any, hint: Any, path: str) -> Any:
    """`msgspec.convert`, with the path of a failure rooted at `path`."""
    try:
        return strict_convert(value, hint)
    except ValidationError as error:
        if type(value) is float and value.is_integer():
            # JSON Schema's `integer` includes 1.0 (msgspec reads it as a float).
            try:
                return strict_convert(int(value), hint)
            except ValidationError:
                pass
        raise rerooted(error, path) from None


NO_PICK: Any = object()


def wire_builder(union: ShapeUnion, wire: Any) -> Callable[[Any], Any]:
    """`union`'s variant built from its wire Struct, decoded in one pass.

    The wire has every variant's fields, typed as the variants type them, so
    the fields it holds are valid; what is left is `Codec._shape`'s choice:
    the variant the tag names (a string tag: never an untagged one), else the
    first, in schema order, whose required fields are all there. Anything
    else (an unknown tag: a variant kept raw, whose payload the wire does not
    hold) fails the one-pass decode, which then reruns on the lenient path.
    """
    if not (isinstance(wire, type) and issubclass(wire, msgspec.Struct)):
        return no_wire
    attrs_of = {f.encode_name: f.name for f in msgspec.structs.fields(wire)}
    tag_attr = attrs_of.get(union.tag_field or "")
    names: dict[str, Any] = {"UNSET": UNSET, "ValueError": ValueError}
    branches: dict[str | None, list[str]] = {}
    for i, candidate in enumerate(union.candidates):
        if not (isinstance(candidate, type) and issubclass(candidate, msgspec.Struct)):
            continue
        names[f"C{i}"] = candidate
        fields = msgspec.structs.fields(candidate)
        call = ", ".join(f"{f.name}=w.{f.name}" for f in fields)
        needed = [f"w.{f.name} is not UNSET" for f in fields if f.required]
        tag = candidate.__struct_config__.tag if tag_attr is not None else None
        branches.setdefault(None if tag is None else str(tag), []).append(
            f"if {' and '.join(needed)}: return C{i}({call})"
            if needed
            else f"return C{i}({call})"
        )
    lines = ["def build(w):"]
    if tag_attr is None:
        lines += [f"    {line}" for line in branches.get(None, [])]
    else:
        lines.append(f"    tag = w.{tag_attr}")
        for n, (tag, found) in enumerate(branches.items()):
            test = "tag is UNSET" if tag is None else f"tag == {tag!r}"
            lines.append(f"    {'if' if n == 0 else 'elif'} {test}:")
            lines += [f"        {line}" for line in found]
    lines.append(f"    raise ValueError({union.name + ': left to the lenient path'!r})")
    exec("\n".join(lines), names)
    build: Callable[[Any], Any] = names["build"]
    return build


def shape_slot(hint: Any) -> tuple[Any, bool]:
    """(the ``Annotated[wire, ShapeUnion]`` in `hint`, whether in a list) for
    ``X``, ``X | None | UnsetType``, ``list[X]`` and ``list[X] | UnsetType``."""
    args = [
        a for a in typing.get_args(hint) if a is not type(None) and a is not UnsetType
    ]
    origin = typing.get_origin(hint)
    if (origin is typing.Union or origin is types.UnionType) and len(args) == 1:
        hint = args[0]
    if shape_marker(hint) is not None:
        return hint, False
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        if shape_marker(item) is not None:
            return item, True
    return None, False


def no_wire(value: Any) -> Any:
    raise ValueError("not a wire Struct")


def shape_pick(union: ShapeUnion) -> Callable[[dict[str, Any]], Any]:
    """`Codec._shape`'s common case for an object, without trying and failing.

    Of the leading Struct candidates, in order, the first whose tag the value
    carries (or that has none) and whose required keys are all present is
    converted. Every candidate passed over would have failed
    `msgspec.convert` anyway, so the result is the one `Codec._shape` gives.
    Anything else (no such candidate, a failed conversion, a candidate that
    is not a Struct) returns `_NO_PICK`, and the full path decides, errors
    and lenient rules included.
    """
    steps: list[tuple[Any, str | None, Any, frozenset[str]]] = []
    for candidate in union.candidates:
        if not (isinstance(candidate, type) and issubclass(candidate, msgspec.Struct)):
            break
        config = candidate.__struct_config__
        required = frozenset(
            f.encode_name for f in msgspec.structs.fields(candidate) if f.required
        )
        steps.append((candidate, config.tag_field, config.tag, required))
    tag_fields = {tag_field for _, tag_field, _, _ in steps if tag_field is not None}
    if len(tag_fields) > 1:
        steps = []  # mixed tag fields: leave it all to the full path
    tag_field = tag_fields.pop() if tag_fields else None
    # The candidates worth trying, per tag value found (an absent or unknown
    # tag: the untagged candidates only), kept in the union's order.
    untagged = [(c, req) for c, field, _, req in steps if field is None]
    by_tag = {
        tag: [
            (c, req)
            for c, field, t, req in steps
            if t == tag or (field is None and union.tag_field is None)
        ]
        for _, field, tag, _ in steps
        if field is not None
    }
    convert = strict_convert

    union_tag = union.tag_field

    def pick(value: dict[str, Any]) -> Any:
        tried = untagged
        if union_tag is not None:
            tag = value.get(union_tag)
            if type(tag) is str:
                # a string tag is never an untagged variant's (unknown: raw)
                tried = by_tag.get(tag, [])
        elif tag_field is not None:
            tag = value.get(tag_field)
            if type(tag) is str or type(tag) is int:  # not a list or dict: unhashable
                tried = by_tag.get(tag, untagged)
        for candidate, required in tried:
            if value.keys() >= required:
                try:
                    return convert(value, candidate)
                except (ValidationError, ValueError):
                    return NO_PICK
        return NO_PICK

    return pick


def optional(inner: Resolver) -> Resolver:
    def resolve_optional(value: Any, path: str) -> Any:
        if value is None or value is UNSET:
            return value
        return inner(value, path)

    return resolve_optional


def tag_matches(value: Any, candidate: Any) -> bool:
    """False when `candidate` is a tagged Struct and `value` lacks its tag."""
    config = getattr(candidate, "__struct_config__", None)
    if config is None or config.tag_field is None:
        return True
    return is_dict(value) and value.get(config.tag_field) == config.tag


def shape_marker(hint: Any) -> ShapeUnion | None:
    """The `ShapeUnion` of ``Annotated[Any, ShapeUnion(...)]``, else None."""
    for marker in getattr(hint, "__metadata__", ()):
        if isinstance(marker, ShapeUnion):
            return marker
    return None


def is_shape(hint: Any) -> bool:
    return shape_marker(hint) is not None


def union_members(hint: Any) -> tuple[type[msgspec.Struct], ...]:
    args = typing.get_args(hint)
    return args if args else (hint,)


def list_item(hint: Any) -> Any:
    """X of ``list[X]``, ``Annotated[list[X], ...]`` and those ``| None | UnsetType``."""
    if getattr(hint, "__metadata__", None) is not None:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) is list:
        return typing.get_args(hint)[0]
    for arg in typing.get_args(hint):
        if getattr(arg, "__metadata__", None) is not None:
            arg = typing.get_args(arg)[0]
        if typing.get_origin(arg) is list:
            return typing.get_args(arg)[0]
    return None


#: hint -> ``Annotated[list[Any], *its msgspec.Meta]`` (None: no constraint).
_SHELLS: dict[Any, Any] = {}


def shell_of(hint: Any) -> Any:
    """The container constraints of `hint` (``Annotated[list[X],
    msgspec.Meta(min_length=1)]``, maybe ``| UnsetType``) on a container of
    anything, or None when it has none."""
    try:
        return _SHELLS[hint]
    except KeyError:
        pass
    shell = None
    for arg in (hint, *typing.get_args(hint)):
        metas = [
            m for m in getattr(arg, "__metadata__", ()) if isinstance(m, msgspec.Meta)
        ]
        origin = typing.get_origin(typing.get_args(arg)[0]) if metas else None
        if origin is list or origin is dict:
            container: Any = list[Any] if origin is list else dict[str, Any]
            shell = typing.Annotated[tuple([container, *metas])]
            break
    _SHELLS[hint] = shell
    return shell


def constrained(value: Any, hint: Any, path: str) -> Any:
    """`value` (a list or dict the lenient rules built) once the length
    constraints `hint` states hold for it."""
    shell = shell_of(hint)
    if shell is not None and (is_list(value) or is_dict(value)):
        strict(value, shell, path)
    return value
