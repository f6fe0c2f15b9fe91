"""Decoding rules shared by the generated protocol modules.

The one hand-written module of ``acp_schema`` (edit it here: acp-codegen
generates the others, which import it, and copies this file into a package
it writes elsewhere). Depends on msgspec alone.

The fast path is plain msgspec: a message whose unions all carry known tags
decodes in one pass, in C. Only when that strict pass fails does `Codec` walk
the untyped value and apply the schema's forward-compatibility rules:

- an unknown tag in an open union is kept as that union's `OtherVariant`
  (its raw JSON object, re-encoded unchanged);
- ``x-deserialize-default-on-error``: a bad value falls back to the default;
- ``x-deserialize-skip-invalid-items``: bad array items are dropped.

Unions that no single tag tells apart (`ShapeUnion`) are decoded untyped and
resolved by the owning Struct's ``__post_init__``: the first variant, in schema
order, that accepts the value wins.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeGuard, TypeVar, overload

import msgspec
from msgspec import UNSET, UnsetType, ValidationError

T = TypeVar("T")

__all__ = [
    "UNSET",
    "Codec",
    "FieldRule",
    "Method",
    "OpenUnion",
    "OtherVariant",
    "ShapeUnion",
    "UnsetType",
]


class OtherVariant(dict[str, Any]):
    """A variant this protocol version does not define, kept as its raw JSON object.

    Each open union has a subclass (``SessionUpdateOther``, ``McpServerOther``,
    ...). Values decoded into it re-encode exactly as received; build your own
    ``_``-prefixed extension variant the same way:

    >>> from acp_schema.v2 import McpServerOther
    >>> server = McpServerOther({"type": "_acme_ws", "url": "wss://example.com"})
    >>> server.tag
    '_acme_ws'
    """

    __slots__ = ()
    #: The property that carries the tag (``type``, ``sessionUpdate``, ...).
    tag_field: ClassVar[str]
    #: Tags of the union's defined variants: an `OtherVariant` never has one,
    #: except a known variant kept raw, whose tag is `fixed_tag`.
    known_tags: ClassVar[frozenset[str]]
    fixed_tag: ClassVar[str | None] = None

    def __init__(self, payload: Mapping[str, Any] = {}, /, **fields: Any) -> None:
        super().__init__(payload, **fields)
        tag = self.get(self.tag_field)
        if not isinstance(tag, str):
            raise ValueError(f"{type(self).__name__} needs a string {self.tag_field!r}")
        if self.fixed_tag is not None:
            if tag != self.fixed_tag:
                raise ValueError(f"{type(self).__name__} has tag {self.fixed_tag!r}")
        elif tag in self.known_tags:
            raise ValueError(
                f"{tag!r} is a defined {self.tag_field!r}; use its own class"
            )

    @property
    def tag(self) -> str:
        """The value of the tag property, e.g. ``'_acme_ws'``."""
        value: str = self[self.tag_field]
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({super().__repr__()})"


class OpenUnion:
    """Marks an open tagged union: ``Annotated[Union[known...], OpenUnion(...)]``."""

    __slots__ = ("other", "raw", "tag_field")

    def __init__(
        self,
        tag_field: str,
        other: type[OtherVariant] | None,
        raw: tuple[type[OtherVariant], ...] = (),
    ) -> None:
        self.tag_field = tag_field
        self.other = other
        self.raw = {cls.fixed_tag: cls for cls in raw}

    def __repr__(self) -> str:
        return f"OpenUnion({self.tag_field!r})"


class ShapeUnion:
    """Marks a union decoded by shape: ``Annotated[Any, ShapeUnion(...)]``."""

    __slots__ = ("candidates", "name")

    def __init__(self, name: str, candidates: tuple[Any, ...]) -> None:
        self.name = name
        self.candidates = candidates

    def __repr__(self) -> str:
        return f"ShapeUnion({self.name!r})"


class FieldRule:
    """The schema's lenient rules for one field."""

    __slots__ = ("default_json", "default_on_error", "skip_invalid_items")

    def __init__(
        self,
        *,
        default_on_error: bool = False,
        skip_invalid_items: bool = False,
        default_json: str | None = None,
    ) -> None:
        self.default_on_error = default_on_error
        self.skip_invalid_items = skip_invalid_items
        #: The schema default as JSON text, or None when it has none.
        self.default_json = default_json

    @property
    def default(self) -> Any:
        """The schema default (a JSON value), or UNSET when it has none."""
        if self.default_json is None:
            return UNSET
        return msgspec.json.decode(self.default_json)


class Method:
    """One protocol method: its wire name, types and handler name.

    >>> from acp_schema.v1 import AGENT_METHODS
    >>> m = AGENT_METHODS["session/new"]
    >>> m.params.__name__, m.result.__name__, m.handler
    ('NewSessionRequest', 'NewSessionResponse', 'session_new')
    """

    __slots__ = ("handler", "name", "notification", "params", "result")

    def __init__(
        self,
        name: str,
        params: Any,
        result: Any,
        handler: str,
        notification: Any = None,
    ) -> None:
        self.name = name
        self.params = params
        #: None for a notification
        self.result = result
        self.handler = handler
        #: For a request that may also be sent as a notification: that form's
        #: params type (None for most methods).
        self.notification = notification

    @property
    def is_notification(self) -> bool:
        return self.result is None

    def __repr__(self) -> str:
        return f"Method({self.name!r}, handler={self.handler!r})"


def _is_list(value: Any) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


def _is_dict(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def _is_other_class(candidate: Any) -> TypeGuard[type[OtherVariant]]:
    return isinstance(candidate, type) and issubclass(candidate, OtherVariant)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "array"
    return "object"


def _error(message: str, path: str) -> ValidationError:
    return ValidationError(f"{message} - at `{path}`")


def _at(error: ValidationError, path: str) -> ValidationError:
    """Re-root msgspec's ``- at `$.x``` suffix under `path`."""
    message, sep, where = str(error).rpartition(" - at `")
    if not sep:
        return _error(str(error), path)
    return _error(message, path + where.rstrip("`")[1:])


class _FieldPlan:
    __slots__ = ("attr", "required", "rule", "type", "wire")

    def __init__(
        self, attr: str, wire: str, type: Any, required: bool, rule: FieldRule | None
    ) -> None:
        self.attr = attr
        self.wire = wire
        self.type = type
        self.required = required
        self.rule = rule


_Resolver = Callable[[Any, str], Any]


class Codec:
    """Strict msgspec decoding with the schema's lenient rules as the fallback."""

    def __init__(self, rules: Mapping[type, Mapping[str, FieldRule]]) -> None:
        self._rules = rules
        #: type -> its fast decode function (the strict msgspec pass)
        self._decoders: dict[Any, Callable[[Any], Any]] = {}
        self._encoder = msgspec.json.Encoder()
        self._plans: dict[type, list[_FieldPlan]] = {}
        self._shape_plans: dict[type, list[tuple[str, str, _Resolver]]] = {}

    # -- public ----------------------------------------------------------

    @overload
    def decode(self, data: bytes | str | memoryview, type: type[T]) -> T: ...
    @overload
    def decode(self, data: bytes | str | memoryview, type: Any) -> Any: ...
    def decode(self, data: bytes | str | memoryview, type: Any) -> Any:
        """JSON bytes -> `type`: one msgspec pass; the lenient rules only if it fails.

        Raises `msgspec.DecodeError` for malformed JSON and
        `msgspec.ValidationError` (with the failing path) for a value that does
        not fit `type` even under the lenient rules.
        """
        decode = self._decoders.get(type)
        if decode is None:
            decode = self._decoder_for(type)
        try:
            return decode(data)
        except ValidationError:
            return self._lenient(msgspec.json.decode(data), type, "$")

    def _decoder_for(self, type: Any) -> Callable[[Any], Any]:
        strict: Callable[[Any], Any] = msgspec.json.Decoder(type).decode
        decode = strict
        if _is_shape(type):

            def shaped(data: Any) -> Any:
                return self._lenient(strict(data), type, "$")

            decode = shaped
        self._decoders[type] = decode
        return decode

    @overload
    def convert(self, obj: Any, type: type[T]) -> T: ...
    @overload
    def convert(self, obj: Any, type: Any) -> Any: ...
    def convert(self, obj: Any, type: Any) -> Any:
        """Builtins (decoded JSON) -> `type`, with the same rules as `decode`."""
        try:
            value = msgspec.convert(obj, type)
        except ValidationError:
            return self._lenient(obj, type, "$")
        if _is_shape(type):
            return self._lenient(value, type, "$")
        return value

    def encode(self, obj: Any) -> bytes:
        """Any generated value -> JSON bytes; unknown variants exactly as received."""
        return self._encoder.encode(obj)

    def resolve_shapes(self, obj: msgspec.Struct) -> None:
        """Resolve the by-shape union fields of `obj` (its ``__post_init__``)."""
        cls = type(obj)
        plan = self._shape_plans.get(cls)
        if plan is None:
            plan = self._shape_plans[cls] = [
                (f.attr, f"$.{f.wire}", resolver)
                for f in self._plan(cls)
                if (resolver := self._resolver(f.type)) is not None
            ]
        for attr, path, resolver in plan:
            value = getattr(obj, attr)
            if value is not UNSET:
                setattr(obj, attr, resolver(value, path))

    # -- lenient path ----------------------------------------------------

    def _plan(self, cls: type) -> list[_FieldPlan]:
        plan = self._plans.get(cls)
        if plan is None:
            rules: dict[str, FieldRule] = {}
            for base in reversed(cls.__mro__):
                rules.update(self._rules.get(base, {}))
            plan = self._plans[cls] = [
                _FieldPlan(f.name, f.encode_name, f.type, f.required, rules.get(f.name))
                for f in msgspec.structs.fields(cls)
            ]
        return plan

    def _shape_resolver(self, marker: ShapeUnion) -> _Resolver:
        shape = self._shape
        pick = _shape_pick(marker)

        def resolve_shape(value: Any, path: str) -> Any:
            kind: Any = value.__class__
            if kind is dict:
                picked = pick(value)
                return shape(value, marker, path) if picked is _NO_PICK else picked
            if kind is list:
                return shape(value, marker, path)
            return value  # already typed (built by hand or resolved)

        return resolve_shape

    def _resolver(self, hint: Any) -> _Resolver | None:
        """A function resolving the by-shape unions inside `hint`, or None if none.

        Built once per field, so ``__post_init__`` does no type introspection.
        """
        marker = _shape_marker(hint)
        if marker is not None:
            return self._shape_resolver(marker)
        if getattr(hint, "__metadata__", ()):
            return self._resolver(typing.get_args(hint)[0])
        origin = typing.get_origin(hint)
        if origin is list:
            (item_hint,) = typing.get_args(hint)
            item = self._resolver(item_hint)
            if item is None:
                return None
            resolve_item = item
            item_marker = _shape_marker(item_hint)
            pick = None if item_marker is None else _shape_pick(item_marker)

            def resolve_list(value: Any, path: str) -> Any:
                if value.__class__ is not list:
                    return value
                items: list[Any] = value
                if pick is not None:  # a list of by-shape items: try the common case
                    out: list[Any] = []
                    for v in items:
                        picked = pick(v) if v.__class__ is dict else _NO_PICK
                        if picked is _NO_PICK:
                            break
                        out.append(picked)
                    else:
                        return out
                return [resolve_item(v, f"{path}[{i}]") for i, v in enumerate(items)]

            return resolve_list
        if origin is dict:
            item = self._resolver(typing.get_args(hint)[1])
            if item is None:
                return None
            resolve_value = item

            def resolve_dict(value: Any, path: str) -> Any:
                if value.__class__ is not dict:
                    return value
                items: dict[str, Any] = value
                return {k: resolve_value(v, f"{path}.{k}") for k, v in items.items()}

            return resolve_dict
        if origin is typing.Union or origin is types.UnionType:
            for arg in typing.get_args(hint):
                inner = self._resolver(arg)
                if inner is not None:
                    return _optional(inner)
        return None

    def _lenient(self, value: Any, hint: Any, path: str) -> Any:
        meta = getattr(hint, "__metadata__", None)
        if meta is not None:
            base = typing.get_args(hint)[0]
            for marker in meta:
                if isinstance(marker, OpenUnion):
                    return self._open(value, base, marker, path)
                if isinstance(marker, ShapeUnion):
                    return self._shape(value, marker, path)
            return self._lenient_or_strict(value, hint, base, path)
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            return self._struct(value, hint, path)
        if isinstance(hint, type) and issubclass(hint, OtherVariant):
            return self._other(value, hint, path)
        origin = typing.get_origin(hint)
        if origin is list:
            if not _is_list(value):
                raise _error(f"Expected `array`, got `{_json_type(value)}`", path)
            (item,) = typing.get_args(hint)
            return [self._lenient(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
        if origin is dict:
            if not _is_dict(value):
                raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
            _, item = typing.get_args(hint)
            return {k: self._lenient(v, item, f"{path}.{k}") for k, v in value.items()}
        if origin is typing.Union or origin is types.UnionType:
            return self._union(value, typing.get_args(hint), path)
        return self._strict(value, hint, path)

    def _lenient_or_strict(self, value: Any, hint: Any, base: Any, path: str) -> Any:
        # ``Annotated[int, msgspec.Meta(...)]`` and friends: msgspec checks them.
        if isinstance(base, type) and issubclass(base, msgspec.Struct):
            return self._lenient(value, base, path)
        return self._strict(value, hint, path)

    @staticmethod
    def _strict(value: Any, hint: Any, path: str) -> Any:
        try:
            return msgspec.convert(value, hint)
        except ValidationError as error:
            raise _at(error, path) from None

    def _union(self, value: Any, args: tuple[Any, ...], path: str) -> Any:
        if value is None and type(None) in args:
            return None
        candidates = [a for a in args if a is not type(None) and a is not UnsetType]
        if len(candidates) == 1:
            return self._lenient(value, candidates[0], path)
        if _is_dict(value):
            for candidate in candidates:
                config = getattr(candidate, "__struct_config__", None)
                if config is not None and config.tag_field is not None:
                    if value.get(config.tag_field) == config.tag:
                        return self._struct(value, candidate, path)
        first_error: ValidationError | None = None
        for candidate in candidates:
            try:
                return self._lenient(value, candidate, path)
            except ValidationError as error:
                first_error = first_error or error
        raise first_error or _error("No union member matches", path)

    def _struct(self, value: Any, cls: type[msgspec.Struct], path: str) -> Any:
        if not _is_dict(value):
            raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
        config = cls.__struct_config__
        if config.tag_field is not None and value.get(config.tag_field) != config.tag:
            raise _error(
                f"Invalid value {value.get(config.tag_field)!r}",
                f"{path}.{config.tag_field}",
            )
        kwargs: dict[str, Any] = {}
        for field in self._plan(cls):
            if field.wire not in value:
                if field.required:
                    raise _error(f"Object missing required field `{field.wire}`", path)
                continue
            field_path = f"{path}.{field.wire}"
            rule = field.rule
            try:
                if rule is not None and rule.skip_invalid_items:
                    kwargs[field.attr] = self._skip_invalid(
                        value[field.wire], field.type, field_path
                    )
                else:
                    kwargs[field.attr] = self._lenient(
                        value[field.wire], field.type, field_path
                    )
            except ValidationError:
                if rule is None or not rule.default_on_error:
                    raise
                if rule.default is not UNSET:
                    kwargs[field.attr] = self._lenient(
                        rule.default, field.type, field_path
                    )
                elif field.required:
                    raise
        return cls(**kwargs)

    def _skip_invalid(self, value: Any, hint: Any, path: str) -> Any:
        """``x-deserialize-skip-invalid-items``: keep the array items that decode."""
        if not _is_list(value):
            return self._lenient(value, hint, path)
        item = _list_item(hint)
        if item is None:
            return self._lenient(value, hint, path)
        kept: list[Any] = []
        for i, v in enumerate(value):
            try:
                kept.append(self._lenient(v, item, f"{path}[{i}]"))
            except ValidationError:
                continue
        return kept

    def _other(self, value: Any, cls: type[OtherVariant], path: str) -> OtherVariant:
        if not _is_dict(value):
            raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
        tag = value.get(cls.tag_field)
        if not isinstance(tag, str):
            raise _error(
                f"Expected `str`, got `{_json_type(tag)}`", f"{path}.{cls.tag_field}"
            )
        if cls.fixed_tag is not None and tag != cls.fixed_tag:
            raise _error(f"Invalid value {tag!r}", f"{path}.{cls.tag_field}")
        if cls.fixed_tag is None and tag in cls.known_tags:
            raise _error(f"Invalid value {tag!r}", f"{path}.{cls.tag_field}")
        return cls(value)

    def _open(self, value: Any, known: Any, union: OpenUnion, path: str) -> Any:
        if not _is_dict(value):
            raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
        tag = value.get(union.tag_field)
        if not isinstance(tag, str):
            where = f"{path}.{union.tag_field}"
            if tag is None:
                raise _error(f"Object missing required field `{union.tag_field}`", path)
            raise _error(f"Expected `str`, got `{_json_type(tag)}`", where)
        for cls in _union_members(known):
            if cls.__struct_config__.tag == tag:
                # A known tag with a malformed body is an error, never "unknown".
                return self._struct(value, cls, path)
        raw = union.raw.get(tag)
        if raw is not None:
            return raw(value)
        if union.other is None:
            raise _error(f"Invalid value {tag!r}", f"{path}.{union.tag_field}")
        # A tag the schema reserves (in the `other` branch's `not`) without
        # defining a variant for it is invalid, not "unknown".
        return self._other(value, union.other, path)

    def _shape(self, value: Any, union: ShapeUnion, path: str) -> Any:
        for candidate in union.candidates:
            try:
                if _is_other_class(candidate):
                    return self._other(value, candidate, path)
                if not _tag_matches(value, candidate):
                    continue  # msgspec would accept a lone tagged Struct untagged
                return msgspec.convert(value, candidate)
            except (ValidationError, ValueError):
                continue
        first_error: ValidationError | None = None
        for candidate in union.candidates:
            if not _tag_matches(value, candidate):
                continue
            try:
                return self._lenient(value, candidate, path)
            except ValidationError as error:
                first_error = first_error or error
        names = ", ".join(getattr(c, "__name__", repr(c)) for c in union.candidates)
        detail = f" (first: {first_error})" if first_error else ""
        raise _error(
            f"Value matches no variant of {union.name} [{names}]{detail}", path
        )


_NO_PICK: Any = object()


def _shape_pick(union: ShapeUnion) -> Callable[[dict[str, Any]], Any]:
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
        tag: [(c, req) for c, field, t, req in steps if field is None or t == tag]
        for _, field, tag, _ in steps
        if field is not None
    }
    convert = msgspec.convert

    def pick(value: dict[str, Any]) -> Any:
        tried = untagged
        if tag_field is not None:
            tag = value.get(tag_field)
            if type(tag) is str or type(tag) is int:  # not a list or dict: unhashable
                tried = by_tag.get(tag, untagged)
        for candidate, required in tried:
            if value.keys() >= required:
                try:
                    return convert(value, candidate)
                except (ValidationError, ValueError):
                    return _NO_PICK
        return _NO_PICK

    return pick


def _optional(inner: _Resolver) -> _Resolver:
    def resolve_optional(value: Any, path: str) -> Any:
        if value is None or value is UNSET:
            return value
        return inner(value, path)

    return resolve_optional


def _tag_matches(value: Any, candidate: Any) -> bool:
    """False when `candidate` is a tagged Struct and `value` lacks its tag."""
    config = getattr(candidate, "__struct_config__", None)
    if config is None or config.tag_field is None:
        return True
    return _is_dict(value) and value.get(config.tag_field) == config.tag


def _shape_marker(hint: Any) -> ShapeUnion | None:
    """The `ShapeUnion` of ``Annotated[Any, ShapeUnion(...)]``, else None."""
    for marker in getattr(hint, "__metadata__", ()):
        if isinstance(marker, ShapeUnion):
            return marker
    return None


def _is_shape(hint: Any) -> bool:
    return _shape_marker(hint) is not None


def _union_members(hint: Any) -> tuple[type[msgspec.Struct], ...]:
    args = typing.get_args(hint)
    return args if args else (hint,)


def _list_item(hint: Any) -> Any:
    if typing.get_origin(hint) is list:
        return typing.get_args(hint)[0]
    for arg in typing.get_args(hint):
        if typing.get_origin(arg) is list:
            return typing.get_args(arg)[0]
    return None
