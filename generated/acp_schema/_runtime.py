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
- ``x-deserialize-skip-invalid-items``: bad array items are dropped;
- ``x-deserialize-default-on-null``: a ``null`` decodes as the field's
  default (the type's empty value: ``[]``, ``{}``), and re-encodes as that.

Unions that no single tag tells apart (`ShapeUnion`) are decoded untyped and
resolved by the owning Struct's ``__post_init__``: the first variant, in schema
order, that accepts the value wins.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol, TypeGuard, TypeVar, overload

import msgspec
from msgspec import UNSET, DecodeError, UnsetType, ValidationError

T = TypeVar("T")

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
            raise ValueError(_uint64_message(type(obj), attr))


def check_alternatives(obj: msgspec.Struct) -> None:
    """``__post_init__`` check of a class with untagged alternatives flattened
    into it (its ``_alternatives``): the value holds the required fields of one."""
    for required, _ in _alternatives_of(type(obj)):
        if all(getattr(obj, attr) is not UNSET for attr in required):
            return
    raise ValueError(_alternatives_message(type(obj)))


_Alternatives = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def _alternatives_of(cls: type) -> _Alternatives:
    """A class's ``_alternatives``: (required, declared only there) attributes."""
    alternatives: _Alternatives = getattr(cls, "_alternatives", ())
    return alternatives


def _alternatives_message(cls: type[msgspec.Struct]) -> str:
    wire = {f.name: f.encode_name for f in msgspec.structs.fields(cls)}
    needs = " | ".join(
        " + ".join(f"`{wire[a]}`" for a in required) or "nothing"
        for required, _ in _alternatives_of(cls)
    )
    return f"Object fits none of its alternatives (needs {needs})"


_GUARDS: dict[str, type[msgspec.Struct]] = {}
_GUARD_TAG = "\x00no variant"


def tag_guard(tag_field: str) -> type[msgspec.Struct]:
    """A variant no value is: beside a lone tagged Struct, it makes a Union that
    msgspec decodes as a tagged union (a lone tagged Struct would be read without
    its tag, and re-encoded with one the sender never wrote)."""
    guard = _GUARDS.get(tag_field)
    if guard is None:

        def refuse(self: msgspec.Struct) -> None:
            raise ValueError(f"Invalid value {_GUARD_TAG!r}")

        guard = _GUARDS[tag_field] = msgspec.defstruct(
            "TagGuard",
            [],
            tag_field=tag_field,
            tag=_GUARD_TAG,
            namespace={"__post_init__": refuse},
        )
    return guard


def _lone_tagged(hint: Any) -> bool:
    config = getattr(hint, "__struct_config__", None)
    return config is not None and config.tag_field is not None


def _uint64_message(cls: type[msgspec.Struct], attr: str) -> str:
    wire = next(f.encode_name for f in msgspec.structs.fields(cls) if f.name == attr)
    return f"Expected `int` <= {UINT64_MAX} in `{wire}`"


class LenientLimits:
    """Bounds on the lenient path's work for one message, and on the error
    texts the codec builds.

    The lenient rules run in Python, value by value, so a small hostile message
    (a million invalid items in a skip-invalid-items array) could otherwise
    cost seconds of CPU; an error text quoting a peer's value whole (a 40 MB
    array as a tag) would cost as much again. Shared by every generated module:

    >>> from acp_schema import LENIENT_LIMITS
    >>> LENIENT_LIMITS.max_repairs, LENIENT_LIMITS.max_quoted, LENIENT_LIMITS.max_error_text
    (1000, 64, 1024)
    """

    __slots__ = ("max_error_text", "max_quoted", "max_repairs")

    def __init__(
        self,
        *,
        max_repairs: int = 1000,
        max_quoted: int = 64,
        max_error_text: int = 1024,
    ) -> None:
        #: Values one message may have dropped (skip-invalid-items) or replaced
        #: (default-on-error) by the lenient rules; one more and the whole
        #: message is a `LenientLimitError`. Default 1,000.
        self.max_repairs = max_repairs
        #: Characters of a peer's string (a tag, a property name) an error
        #: text quotes; an array or object is described by its size, never
        #: quoted. Default 64.
        self.max_quoted = max_quoted
        #: Characters of an error message `decode` and `convert` raise (the
        #: rest is cut, with a note of how much). Default 1,024.
        self.max_error_text = max_error_text

    def __repr__(self) -> str:
        return (
            f"LenientLimits(max_repairs={self.max_repairs}, "
            f"max_quoted={self.max_quoted}, max_error_text={self.max_error_text})"
        )


#: The limits every `Codec` applies (set its attributes to change them).
LENIENT_LIMITS = LenientLimits()


class LenientLimitError(ValidationError):
    """A message needed more lenient repairs than `LENIENT_LIMITS` allows.

    Never absorbed by a lenient rule: the whole message is rejected.
    """


class _Work:
    """The lenient path's budget for one message."""

    __slots__ = ("left",)

    def __init__(self, limits: LenientLimits) -> None:
        self.left = limits.max_repairs

    def repair(self, path: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise LenientLimitError(
                f"More than {LENIENT_LIMITS.max_repairs} values dropped or replaced"
                f" by the lenient rules (LENIENT_LIMITS.max_repairs) - at `{path}`"
            )


def _show(value: Any) -> str:
    """`value` for an error text, bounded at the source: a string quoted up
    to `LenientLimits.max_quoted` characters, an array or object described
    by its size (never ``repr()`` of a whole value: a 40 MB array would cost
    seconds and gigabytes before any text is cut)."""
    if isinstance(value, str):
        limit = LENIENT_LIMITS.max_quoted
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value)} characters)"
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() <= 64:
            return repr(value)
        return f"an integer of {value.bit_length()} bits"
    if _is_list(value):
        return f"an array of {len(value)} items"
    if _is_dict(value):
        return f"an object of {len(value)} properties"
    return f"a {type(value).__name__}"


def _key(key: str) -> str:
    """A property name in a path, bounded as `_show` bounds strings."""
    limit = LENIENT_LIMITS.max_quoted
    return key if len(key) <= limit else f"{key[:limit]}...({len(key)})"


def _bounded(error: ValidationError) -> ValidationError:
    """`error`, its text cut to `LenientLimits.max_error_text` (msgspec's own
    messages quote an invalid string whole)."""
    text = str(error)
    limit = LENIENT_LIMITS.max_error_text
    if len(text) <= limit:
        return error
    cut = type(error)(f"{text[:limit]}... ({len(text) - limit} more characters)")
    cut.__cause__ = error.__cause__
    return cut


def _too_deep() -> DecodeError:
    return DecodeError("JSON is nested too deeply (msgspec's recursion limit)")


class RawObject(dict[str, Any]):
    """An object kept as its raw JSON object: its undeclared properties are
    part of its value (a def with ``properties`` and ``additionalProperties:
    true``: v1 `McpError`, whose extra fields are preserved), re-encoded
    exactly as received. What the schema declares is checked on decode
    (`checks`); build one as a dict:

    >>> from acp_schema.v1 import McpError
    >>> McpError({"code": -32601, "message": "no", "x": 1})["x"]
    1
    """

    __slots__ = ()
    #: Types describing what the schema declares for it: a decoded value must
    #: fit one of them (its payload is kept raw all the same). Structs, or for
    #: a known variant kept raw, its payload's union.
    checks: ClassVar[tuple[Any, ...]] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({super().__repr__()})"


class OtherVariant(RawObject):
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
                f"{_show(tag)} is a defined {self.tag_field!r}; use its own class"
            )

    @property
    def tag(self) -> str:
        """The value of the tag property, e.g. ``'_acme_ws'``."""
        value: str = self[self.tag_field]
        return value


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
    """Marks a union decoded by shape: ``Annotated[Any, ShapeUnion(...)]``.

    With a `tag_field` (the union has tagged variants), a value holding a
    string there is read as the variant with that tag, or kept raw as the
    union's `OtherVariant`: never as an untagged variant.
    """

    __slots__ = ("candidates", "name", "tag_field")

    def __init__(
        self, name: str, candidates: tuple[Any, ...], tag_field: str | None = None
    ) -> None:
        self.name = name
        self.candidates = candidates
        self.tag_field = tag_field

    def tried(self, value: Any) -> list[Any]:
        """The candidates `value` may be, in order."""
        if self.tag_field is None or not _is_dict(value):
            return list(self.candidates)
        tag: Any = value.get(self.tag_field)
        if type(tag) is not str:
            present = self.tag_field in value
            return [
                c
                for c in self.candidates
                if _tag_of(c) is None
                and not (present and self.tag_field in _forbidden_of(c))
            ]
        tagged = [c for c in self.candidates if _tag_of(c) == tag]
        return tagged or [
            c
            for c in self.candidates
            if isinstance(c, type) and issubclass(c, OtherVariant)
        ]

    def __repr__(self) -> str:
        return f"ShapeUnion({self.name!r})"


class FieldRule:
    """The schema's lenient rules for one field."""

    __slots__ = ("default_json", "default_on_error", "null_json", "skip_invalid_items")

    def __init__(
        self,
        *,
        default_on_error: bool = False,
        skip_invalid_items: bool = False,
        default_json: str | None = None,
        null_json: str | None = None,
    ) -> None:
        self.default_on_error = default_on_error
        self.skip_invalid_items = skip_invalid_items
        #: The schema default as JSON text, or None when it has none.
        self.default_json = default_json
        #: ``x-deserialize-default-on-null``: what a ``null`` decodes as (JSON
        #: text: the schema default, else the type's empty value), or None.
        self.null_json = null_json

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


def _is_other_class(candidate: Any) -> TypeGuard[type[RawObject]]:
    """A class kept raw: an `OtherVariant`, or a `RawObject` of its own."""
    return isinstance(candidate, type) and issubclass(candidate, RawObject)


def _dec_hook(type_: Any, obj: Any) -> Any:
    """msgspec's hook for the one type it does not know here: a `RawObject`
    decoded in the strict pass (checked strictly; its rules are the lenient
    pass's). An `OtherVariant` is reached through its union only."""
    if _is_other_class(type_) and not issubclass(type_, OtherVariant):
        if not _is_dict(obj):
            raise ValidationError(f"Expected `object`, got `{_json_type(obj)}`")
        if not type_.checks:
            return type_(obj)
        first_error: ValidationError | None = None
        for check in type_.checks:
            try:
                _convert(obj, check)
                return type_(obj)
            except ValidationError as error:
                first_error = first_error or error
        assert first_error is not None
        raise first_error
    raise NotImplementedError(type_)


#: `msgspec.convert` with `_dec_hook` (every conversion of the codec).
_convert = functools.partial(msgspec.convert, dec_hook=_dec_hook)


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
    if _is_list(value):
        return "array"
    return "object"


def _unexpected(error: Exception) -> ValidationError:
    """Any other failure while decoding is reported as invalid input, never
    raised as is (the caller handles msgspec's errors only)."""
    text = str(error)
    limit = LENIENT_LIMITS.max_error_text
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return ValidationError(f"Invalid value ({type(error).__name__}: {text})")


def _error(message: str, path: str) -> ValidationError:
    return ValidationError(f"{message} - at `{path}`")


def _at(error: ValidationError, path: str) -> ValidationError:
    """Re-root msgspec's ``- at `$.x``` suffix under `path`."""
    message, sep, where = str(_bounded(error)).rpartition(" - at `")
    if not sep:
        return _error(str(error), path)
    return _error(message, path + where.rstrip("`")[1:])


class _FieldPlan:
    __slots__ = ("attr", "required", "rule", "type", "uint64", "wire")

    def __init__(
        self,
        attr: str,
        wire: str,
        type: Any,
        required: bool,
        rule: FieldRule | None,
        uint64: bool,
    ) -> None:
        self.attr = attr
        self.wire = wire
        self.type = type
        self.required = required
        self.rule = rule
        #: The upper bound is checked here, so that a lenient rule applies.
        self.uint64 = uint64


_Resolver = Callable[[Any, str], Any]


class Decode(Protocol):
    """The type of `Codec.decode` (and of each generated module's ``decode``)."""

    @overload
    def __call__(self, data: bytes | str | memoryview, type: type[T], /) -> T: ...
    @overload
    def __call__(self, data: bytes | str | memoryview, type: Any, /) -> Any: ...
    def __call__(self, data: bytes | str | memoryview, type: Any, /) -> Any:
        """JSON bytes -> `type`: one msgspec pass; the lenient rules only if it fails.

        Raises `msgspec.DecodeError` for malformed JSON (or JSON nested deeper
        than msgspec's recursion limit) and `msgspec.ValidationError` (with the
        failing path) for a value that does not fit `type` even under the
        lenient rules; never any other exception.
        """
        ...


class Codec:
    """Strict msgspec decoding with the schema's lenient rules as the fallback.

    ``decode(data, type)`` (a `Decode`): JSON bytes -> `type`.
    """

    def __init__(
        self, rules: Callable[[], Mapping[type, Mapping[str, FieldRule]]]
    ) -> None:
        #: Builds the lenient rules of each Struct: called once, when first needed.
        self._rules_table = rules
        self._rules: Mapping[type, Mapping[str, FieldRule]] | None = None
        #: type -> its fast decode function (the strict msgspec pass)
        self._decoders: dict[Any, Callable[[Any], Any]] = {}
        self._encoder = msgspec.json.Encoder()
        self._plans: dict[type, list[_FieldPlan]] = {}
        self._shape_plans: dict[type, Callable[[Any], None]] = {}
        self._resolvers: dict[Any, _Resolver | None] = {}
        self.decode: Decode = self._decode_function()

    # -- public ----------------------------------------------------------

    def _decode_function(self) -> Decode:
        """`decode`, a closure over the per-type decoders: per call, one
        Python frame around msgspec's (no attribute look-ups, no method
        binding), which is most of the cost of decoding a small message."""
        decoders = self._decoders
        decoder_for = self._decoder_for
        slow = self._decode_slow

        def decode(data: bytes | str | memoryview, type: Any) -> Any:
            try:
                return decoders[type](data)
            except ValidationError:
                return slow(data, type)  # the lenient rules may still accept it
            except DecodeError:
                raise
            except KeyError:
                if type in decoders:  # raised while decoding
                    raise _unexpected(KeyError(type)) from None
                decoder_for(type)
                return decode(data, type)
            except RecursionError:
                raise _too_deep() from None
            except Exception as error:
                raise _unexpected(error) from error

        return decode

    def decoder(self, type: Any) -> Callable[[Any], Any]:
        """The first, strict pass of `decode` for `type` (built once, then kept).

        What it returns is what ``decode(data, type)`` returns; when it raises
        (whatever it raises), ``decode(data, type)`` gives the answer: the
        lenient rules, or the error.  For hot loops over one type: it saves
        `decode`'s Python frame around msgspec's decoder.
        """
        strict = self._decoders.get(type)
        return strict if strict is not None else self._decoder_for(type)

    def _decode_slow(self, data: bytes | str | memoryview, type: Any) -> Any:
        try:
            obj = msgspec.json.decode(data)
        except RecursionError:
            raise _too_deep() from None
        return self._lenient_pass(obj, type)

    def _decoder_for(self, type: Any) -> Callable[[Any], Any]:
        target = type
        if _lone_tagged(type):  # decoded alone, a variant still needs its tag
            target = type | tag_guard(type.__struct_config__.tag_field)
        strict: Callable[[Any], Any]
        if _is_shape(type) or _forbidden_of(type):
            # A by-shape union itself (its wire is no answer), or a Struct that
            # forbids properties msgspec would drop as unknown: the walk checks.
            untyped = msgspec.json.Decoder().decode

            def shaped(data: Any) -> Any:
                return self._lenient_pass(untyped(data), type)

            strict = shaped
        else:
            strict = msgspec.json.Decoder(target, dec_hook=_dec_hook).decode
        self._decoders[type] = strict
        return strict

    @overload
    def convert(self, obj: Any, type: type[T]) -> T: ...
    @overload
    def convert(self, obj: Any, type: Any) -> Any: ...
    def convert(self, obj: Any, type: Any) -> Any:
        """Builtins (decoded JSON) -> `type`, with the same rules as `decode`.

        Raises `msgspec.ValidationError` only.
        """
        target = type
        if _lone_tagged(type):
            target = type | tag_guard(type.__struct_config__.tag_field)
        if _is_shape(type):
            return self._lenient_pass(obj, type)
        try:
            return _convert(obj, target)
        except ValidationError:
            return self._lenient_pass(obj, type)
        except RecursionError:
            raise ValidationError("Value is nested too deeply") from None
        except Exception as error:
            raise _unexpected(error) from error

    def _lenient_pass(self, obj: Any, type: Any) -> Any:
        """The lenient rules over a whole message, within `LENIENT_LIMITS`."""
        try:
            return self._lenient(obj, type, "$", _Work(LENIENT_LIMITS))
        except ValidationError as error:
            bounded = _bounded(error)
            if bounded is error:
                raise
            raise bounded from None
        except RecursionError:
            raise ValidationError("Value is nested too deeply") from None
        except Exception as error:
            raise _unexpected(error) from error

    def encode(self, obj: Any) -> bytes:
        """Any generated value -> JSON bytes; unknown variants exactly as received."""
        return self._encoder.encode(obj)

    def resolve_shapes(self, obj: msgspec.Struct) -> None:
        """Resolve the by-shape union fields of `obj` (its ``__post_init__``)."""
        try:
            resolve = self._shape_plans[type(obj)]
        except KeyError:
            resolve = self._shape_plans[type(obj)] = self._compile_resolve(type(obj))
        resolve(obj)

    def _compile_resolve(self, cls: type) -> Callable[[Any], None]:
        """`cls`'s field resolution as one function, compiled once (as
        `dataclasses` does): the common case, a field decoded into a wire
        Struct (or a list of them), is a type check and a builder call."""
        lines = ["def resolve(obj):"]
        names: dict[str, Any] = {"UNSET": UNSET}
        for i, field in enumerate(self._plan(cls)):
            resolver = self._resolver(field.type)
            if resolver is None:
                continue
            names[f"R{i}"] = resolver
            attr, path = field.attr, f"$.{field.wire}"
            inner, in_list = _shape_slot(field.type)
            wire = None if inner is None else typing.get_args(inner)[0]
            lines.append(f"    v = obj.{attr}")
            if not (isinstance(wire, type) and issubclass(wire, msgspec.Struct)):
                lines.append("    if v is not UNSET:")
                lines.append(f"        obj.{attr} = R{i}(v, {path!r})")
                continue
            marker = _shape_marker(inner)
            assert marker is not None
            names[f"W{i}"] = wire
            names[f"B{i}"] = _wire_builder(marker, wire)
            if in_list:
                lines.append("    if v:")
                lines.append(f"        if type(v[0]) is W{i}:")
                lines.append(f"            obj.{attr} = list(map(B{i}, v))")
                lines.append("        else:")
                lines.append(f"            obj.{attr} = R{i}(v, {path!r})")
            else:
                lines.append(f"    if type(v) is W{i}:")
                lines.append(f"        obj.{attr} = B{i}(v)")
                lines.append("    elif v is not UNSET:")
                lines.append(f"        obj.{attr} = R{i}(v, {path!r})")
        if len(lines) == 1:
            lines.append("    pass")
        exec("\n".join(lines), names)
        resolve: Callable[[Any], None] = names["resolve"]
        return resolve

    # -- lenient path ----------------------------------------------------

    def _rules_of(self) -> Mapping[type, Mapping[str, FieldRule]]:
        if self._rules is None:
            self._rules = self._rules_table()
        return self._rules

    def _plan(self, cls: type) -> list[_FieldPlan]:
        plan = self._plans.get(cls)
        if plan is None:
            rules: dict[str, FieldRule] = {}
            for base in reversed(cls.__mro__):
                rules.update(self._rules_of().get(base, {}))
            uint64 = getattr(cls, "_uint64", ())
            plan = self._plans[cls] = [
                _FieldPlan(
                    f.name,
                    f.encode_name,
                    f.type,
                    f.required,
                    rules.get(f.name),
                    f.name in uint64,
                )
                for f in msgspec.structs.fields(cls)
            ]
        return plan

    def _shape_resolver(self, marker: ShapeUnion, wire: Any) -> _Resolver:
        shape = self._shape
        pick = _shape_pick(marker)
        build = _wire_builder(marker, wire)
        # (typing.Any is a class from Python 3.11 on, but no isinstance target)
        typed = tuple(
            c for c in marker.candidates if isinstance(c, type) and c is not Any
        )

        def resolve_shape(value: Any, path: str) -> Any:
            kind: Any = value.__class__
            if kind is wire:
                return build(value)
            if kind is dict:
                picked = pick(value)
                if picked is not _NO_PICK:
                    return picked
            elif isinstance(value, typed):
                return value  # already typed (built by hand, or resolved)
            # Strict only: a value that needs the lenient rules fails the
            # one-pass decode, which then reruns on the lenient path.
            return shape(value, marker, path, None)

        return resolve_shape

    def _resolver(self, hint: Any) -> _Resolver | None:
        """A function resolving the by-shape unions inside `hint`, or None if none.

        Built once per hint, so ``__post_init__`` does no type introspection.
        """
        try:
            return self._resolvers[hint]
        except KeyError:
            resolver = self._resolvers[hint] = self._new_resolver(hint)
            return resolver
        except TypeError:  # unhashable
            return self._new_resolver(hint)

    def _new_resolver(self, hint: Any) -> _Resolver | None:
        marker = _shape_marker(hint)
        if marker is not None:
            return self._shape_resolver(marker, typing.get_args(hint)[0])
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
            wire = None if item_marker is None else typing.get_args(item_hint)[0]
            build = None if item_marker is None else _wire_builder(item_marker, wire)

            def resolve_list(value: Any, path: str) -> Any:
                if value.__class__ is not list:
                    return value
                items: list[Any] = value
                if build is not None and items and items[0].__class__ is wire:
                    return [build(v) for v in items]  # decoded: all are wires
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
                return {
                    k: resolve_value(v, f"{path}.{_key(k)}") for k, v in items.items()
                }

            return resolve_dict
        if origin is typing.Union or origin is types.UnionType:
            for arg in typing.get_args(hint):
                inner = self._resolver(arg)
                if inner is not None:
                    return _optional(inner)
        return None

    def _lenient(self, value: Any, hint: Any, path: str, work: _Work) -> Any:
        meta = getattr(hint, "__metadata__", None)
        if meta is not None:
            base = typing.get_args(hint)[0]
            for marker in meta:
                if isinstance(marker, OpenUnion):
                    return self._open(value, base, marker, path, work)
                if isinstance(marker, ShapeUnion):
                    return self._shape(value, marker, path, work)
            if isinstance(base, type) and issubclass(base, msgspec.Struct):
                return self._lenient(value, base, path, work)
            if typing.get_origin(base) in (list, dict):
                # Annotated[list[X], msgspec.Meta(min_length=1)]: the items
                # under the lenient rules (an open union's unknown tag), then
                # the container's own constraints.
                got = self._lenient(value, base, path, work)
                return _constrained(got, hint, path)
            return _strict(value, hint, path)  # Annotated[int, msgspec.Meta(...)]
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            return self._struct(value, hint, path, work)
        if _is_other_class(hint):
            return self._other(value, hint, path, work)
        origin = typing.get_origin(hint)
        if origin is list:
            if not _is_list(value):
                raise _error(f"Expected `array`, got `{_json_type(value)}`", path)
            (item,) = typing.get_args(hint)
            return [
                self._value(v, item, f"{path}[{i}]", work) for i, v in enumerate(value)
            ]
        if origin is dict:
            if not _is_dict(value):
                raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
            _, item = typing.get_args(hint)
            return {
                k: self._value(v, item, f"{path}.{_key(k)}", work)
                for k, v in value.items()
            }
        if origin is typing.Union or origin is types.UnionType:
            return self._union(value, typing.get_args(hint), path, work)
        return _strict(value, hint, path)

    def _value(self, value: Any, hint: Any, path: str, work: _Work) -> Any:
        """`_lenient`, after a strict conversion (in C) that usually succeeds: of
        a value that failed, only the path to the failure is walked in Python."""
        if self._resolver(hint) is not None:
            # By-shape unions inside: msgspec takes any value there, and a
            # failure must meet the lenient rules of this field, not later.
            return self._lenient(value, hint, path, work)
        try:
            return _convert(value, hint)
        except ValidationError:
            return self._lenient(value, hint, path, work)

    def _union(self, value: Any, args: tuple[Any, ...], path: str, work: _Work) -> Any:
        if value is None and type(None) in args:
            return None
        candidates = [a for a in args if a is not type(None) and a is not UnsetType]
        if len(candidates) == 1:
            return self._lenient(value, candidates[0], path, work)
        if _is_dict(value):
            for candidate in candidates:
                config = getattr(candidate, "__struct_config__", None)
                if config is not None and config.tag_field is not None:
                    if value.get(config.tag_field) == config.tag:
                        return self._struct(value, candidate, path, work)
        first_error: ValidationError | None = None
        for candidate in candidates:
            try:
                return self._lenient(value, candidate, path, work)
            except LenientLimitError:
                raise
            except ValidationError as error:
                first_error = first_error or error
        raise first_error or _error("No union member matches", path)

    def _struct(
        self, value: Any, cls: type[msgspec.Struct], path: str, work: _Work
    ) -> Any:
        if not _is_dict(value):
            raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
        config = cls.__struct_config__
        if config.tag_field is not None and value.get(config.tag_field) != config.tag:
            if config.tag_field not in value:
                raise _error(
                    f"Object missing required field `{config.tag_field}`", path
                )
            raise _error(
                f"Invalid value {_show(value[config.tag_field])}",
                f"{path}.{config.tag_field}",
            )
        for key in _forbidden_of(cls):
            if key in value:  # the schema's `not: {required: [key]}`
                raise _error(f"Object has forbidden field `{key}`", path)
        kwargs: dict[str, Any] = {}
        alternatives = _alternatives_of(cls)
        dropped: dict[str, ValidationError] = {}  # attr -> why, see below
        for field in self._plan(cls):
            if field.wire not in value:
                if field.required:
                    raise _error(f"Object missing required field `{field.wire}`", path)
                continue
            field_path = f"{path}.{field.wire}"
            rule = field.rule
            if rule is not None and rule.null_json is not None:
                if value[field.wire] is None:  # x-deserialize-default-on-null
                    work.repair(field_path)
                    null_default = msgspec.json.decode(rule.null_json)
                    kwargs[field.attr] = self._value(
                        null_default, field.type, field_path, work
                    )
                    continue
            try:
                if rule is not None and rule.skip_invalid_items:
                    got = self._skip_invalid(
                        value[field.wire], field.type, field_path, work
                    )
                else:
                    got = self._value(value[field.wire], field.type, field_path, work)
                if field.uint64 and type(got) is int and got > UINT64_MAX:
                    raise _error(f"Expected `int` <= {UINT64_MAX}", field_path)
                kwargs[field.attr] = got
            except LenientLimitError:
                raise
            except ValidationError as error:
                if rule is not None and rule.default_on_error:
                    work.repair(field_path)
                    if rule.default is not UNSET:
                        kwargs[field.attr] = self._value(
                            rule.default, field.type, field_path, work
                        )
                    elif field.required:
                        raise
                elif any(field.attr in only for _, only in alternatives):
                    # Declared by some alternatives only: the value may fit
                    # another one, for which this is an unknown property.
                    dropped[field.attr] = error
                else:
                    raise
        if dropped:
            fits = any(
                all(a in kwargs for a in required) and not dropped.keys() & set(only)
                for required, only in alternatives
            )
            if not fits:
                raise next(iter(dropped.values()))
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as error:  # raised by its __post_init__
            if isinstance(error, ValidationError):
                raise
            raise _error(str(error), path) from None

    def _skip_invalid(self, value: Any, hint: Any, path: str, work: _Work) -> Any:
        """``x-deserialize-skip-invalid-items``: keep the array items that decode."""
        if not _is_list(value):
            return self._value(value, hint, path, work)
        item = _list_item(hint)
        if item is None:
            return self._value(value, hint, path, work)
        fast = self._resolver(item) is None  # by-shape items need `_lenient`
        convert = _convert
        kept: list[Any] = []
        for i, v in enumerate(value):
            if fast:
                try:
                    kept.append(convert(v, item))  # in C: the common case
                    continue
                except ValidationError:
                    pass
            try:
                kept.append(self._lenient(v, item, f"{path}[{i}]", work))
            except LenientLimitError:
                raise
            except ValidationError:
                work.repair(f"{path}[{i}]")
        return _constrained(kept, hint, path)  # `minItems` holds after the skips

    def _other(
        self, value: Any, cls: type[RawObject], path: str, work: _Work | None
    ) -> RawObject:
        """`value` kept raw as `cls`, once its tag and what the schema declares
        for it are checked (strictly only, when `work` is None)."""
        if not _is_dict(value):
            raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
        if issubclass(cls, OtherVariant):
            self._check_tag(value, cls, path)
        if not cls.checks:
            return cls(value)
        first_error: ValidationError | None = None
        for check in cls.checks:
            if _is_shape(check):
                continue  # msgspec takes any value there: the walk checks
            try:
                _convert(value, check)
                return cls(value)
            except ValidationError as error:
                first_error = first_error or _at(error, path)
        if work is None:
            raise first_error or _error("Invalid value", path)
        for check in cls.checks:
            try:
                typed = self._lenient(value, check, path, work)
            except LenientLimitError:
                raise
            except ValidationError as error:
                first_error = first_error or error
                continue
            return cls(self._repaired_raw(value, typed))
        raise first_error or _error("Invalid value", path)

    @staticmethod
    def _check_tag(value: dict[str, Any], cls: type[OtherVariant], path: str) -> None:
        tag = value.get(cls.tag_field)
        if not isinstance(tag, str):
            raise _error(
                f"Expected `str`, got `{_json_type(tag)}`", f"{path}.{cls.tag_field}"
            )
        if cls.fixed_tag is not None and tag != cls.fixed_tag:
            raise _error(f"Invalid value {_show(tag)}", f"{path}.{cls.tag_field}")
        if cls.fixed_tag is None and tag in cls.known_tags:
            raise _error(f"Invalid value {_show(tag)}", f"{path}.{cls.tag_field}")

    def _repaired_raw(self, value: dict[str, Any], typed: Any) -> Any:
        """`value` with the declared fields the lenient rules changed, changed."""
        if isinstance(typed, RawObject):
            return dict(typed)  # itself kept raw, once repaired
        if not isinstance(typed, msgspec.Struct):
            return value
        raw = dict(value)
        struct: msgspec.Struct = typed
        for field in self._plan(type(struct)):
            if field.wire not in raw:
                continue
            got = getattr(typed, field.attr)
            if got is UNSET:
                del raw[field.wire]  # dropped by a rule
                continue
            try:
                _convert(raw[field.wire], field.type)
            except ValidationError:
                raw[field.wire] = msgspec.to_builtins(got)  # replaced by a rule
        return raw

    def _open(
        self, value: Any, known: Any, union: OpenUnion, path: str, work: _Work
    ) -> Any:
        if not _is_dict(value):
            raise _error(f"Expected `object`, got `{_json_type(value)}`", path)
        tag = value.get(union.tag_field)
        if not isinstance(tag, str):
            where = f"{path}.{union.tag_field}"
            if tag is None:
                raise _error(f"Object missing required field `{union.tag_field}`", path)
            raise _error(f"Expected `str`, got `{_json_type(tag)}`", where)
        for cls in _union_members(known):
            if cls.__struct_config__.tag == tag and tag != _GUARD_TAG:
                # A known tag with a malformed body is an error, never "unknown".
                return self._struct(value, cls, path, work)
        raw = union.raw.get(tag)
        if raw is not None:  # a known variant kept raw: checked as its payload
            return self._other(value, raw, path, work)
        if union.other is None:
            raise _error(f"Invalid value {_show(tag)}", f"{path}.{union.tag_field}")
        # A tag the schema reserves (in the `other` branch's `not`) without
        # defining a variant for it is invalid, not "unknown".
        return self._other(value, union.other, path, work)

    def _shape(
        self, value: Any, union: ShapeUnion, path: str, work: _Work | None
    ) -> Any:
        """The first candidate, in schema order, that accepts `value`, strictly
        or else under its lenient rules (as the upstream SDKs read an untagged
        union: each variant whole, in turn; never a later variant's strict
        match over an earlier one's repaired one). With `work` None (resolved
        in ``__post_init__``), the lenient rules have a budget of their own."""
        first_error: ValidationError | None = None
        for candidate in union.tried(value):
            if not _is_other_class(candidate):
                if not _tag_matches(value, candidate):
                    continue  # msgspec would accept a lone tagged Struct untagged
                try:
                    return _convert(value, candidate)
                except ValidationError as error:
                    first_error = first_error or _at(error, path)
                    if not _may_repair(value, candidate):
                        continue
            if work is None:
                work = _Work(LENIENT_LIMITS)
            try:
                return self._lenient(value, candidate, path, work)
            except LenientLimitError:
                raise
            except ValidationError as error:
                first_error = first_error or error
        names = ", ".join(getattr(c, "__name__", repr(c)) for c in union.candidates)
        detail = f" (first: {first_error})" if first_error else ""
        raise _error(
            f"Value matches no variant of {union.name} [{names}]{detail}", path
        )


#: Struct class -> the wire names of its required fields.
_REQUIRED: dict[type, frozenset[str]] = {}


def _may_repair(value: Any, candidate: Any) -> bool:
    """Whether `candidate`, which refused `value` strictly, might take it
    under the lenient rules: a Struct only with every required key present
    (no rule adds one), anything else only if `value` is a container."""
    if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
        required = _REQUIRED.get(candidate)
        if required is None:
            required = _REQUIRED[candidate] = frozenset(
                f.encode_name for f in msgspec.structs.fields(candidate) if f.required
            )
        return _is_dict(value) and value.keys() >= required
    return _is_dict(value) or _is_list(value)


def _strict(value: Any, hint: Any, path: str) -> Any:
    """`msgspec.convert`, with the path of a failure rooted at `path`."""
    try:
        return _convert(value, hint)
    except ValidationError as error:
        if type(value) is float and value.is_integer():
            # JSON Schema's `integer` includes 1.0 (msgspec reads it as a float).
            try:
                return _convert(int(value), hint)
            except ValidationError:
                pass
        raise _at(error, path) from None


_NO_PICK: Any = object()


def _wire_builder(union: ShapeUnion, wire: Any) -> Callable[[Any], Any]:
    """`union`'s variant built from its wire Struct, decoded in one pass.

    The wire has every variant's fields, typed as the variants type them, so
    the fields it holds are valid; what is left is `Codec._shape`'s choice:
    the variant the tag names (a string tag: never an untagged one), else the
    first, in schema order, whose required fields are all there. Anything
    else (an unknown tag: a variant kept raw, whose payload the wire does not
    hold) fails the one-pass decode, which then reruns on the lenient path.
    """
    if not (isinstance(wire, type) and issubclass(wire, msgspec.Struct)):
        return _no_wire
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


def _shape_slot(hint: Any) -> tuple[Any, bool]:
    """(the ``Annotated[wire, ShapeUnion]`` in `hint`, whether in a list) for
    ``X``, ``X | None | UnsetType``, ``list[X]`` and ``list[X] | UnsetType``."""
    args = [
        a for a in typing.get_args(hint) if a is not type(None) and a is not UnsetType
    ]
    origin = typing.get_origin(hint)
    if (origin is typing.Union or origin is types.UnionType) and len(args) == 1:
        hint = args[0]
    if _shape_marker(hint) is not None:
        return hint, False
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        if _shape_marker(item) is not None:
            return item, True
    return None, False


def _no_wire(value: Any) -> Any:
    raise ValueError("not a wire Struct")


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
        tag: [
            (c, req)
            for c, field, t, req in steps
            if t == tag or (field is None and union.tag_field is None)
        ]
        for _, field, tag, _ in steps
        if field is not None
    }
    convert = _convert

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
                    return _NO_PICK
        return _NO_PICK

    return pick


def _optional(inner: _Resolver) -> _Resolver:
    def resolve_optional(value: Any, path: str) -> Any:
        if value is None or value is UNSET:
            return value
        return inner(value, path)

    return resolve_optional


def _forbidden_of(candidate: Any) -> tuple[str, ...]:
    """Properties whose presence makes a value not `candidate` (the schema's
    ``"not": {"required": [...]}``), declared by the generated class."""
    forbidden: tuple[str, ...] = getattr(candidate, "_forbidden", ())
    return forbidden


def _tag_of(candidate: Any) -> str | None:
    """The tag of a tagged Struct candidate, else None (Others included)."""
    config = getattr(candidate, "__struct_config__", None)
    return None if config is None else config.tag


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


def _shell(hint: Any) -> Any:
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


def _constrained(value: Any, hint: Any, path: str) -> Any:
    """`value` (a list or dict the lenient rules built) once the length
    constraints `hint` states hold for it."""
    shell = _shell(hint)
    if shell is not None and (_is_list(value) or _is_dict(value)):
        _strict(value, shell, path)
    return value
