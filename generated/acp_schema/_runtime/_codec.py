"""`Codec`: strict msgspec decoding with the schema's lenient rules as the
fallback; one per generated module."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, overload

import msgspec
from msgspec import UNSET, DecodeError, UnsetType, ValidationError

from ._bounds import (
    LENIENT_LIMITS,
    LenientLimitError,
    Work,
    error_at,
    is_dict,
    is_list,
    json_type,
    key_shown,
    rerooted,
    shown,
    text_bounded,
    too_deep,
    unexpected,
)
from ._checks import GUARD_TAG, UINT64_MAX, alternatives_of, lone_tagged, tag_guard
from ._hints import (
    NO_PICK,
    Resolver,
    constrained,
    dec_hook,
    is_raw_class,
    is_shape,
    list_item,
    may_repair,
    optional,
    shape_marker,
    shape_pick,
    shape_slot,
    strict,
    strict_convert,
    tag_matches,
    union_members,
    wire_builder,
)
from ._markers import (
    FieldPlan,
    FieldRule,
    OpenUnion,
    OtherVariant,
    RawObject,
    ShapeUnion,
    forbidden_of,
)

T = TypeVar("T")


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
        self._plans: dict[type, list[FieldPlan]] = {}
        self._shape_plans: dict[type, Callable[[Any], None]] = {}
        self._resolvers: dict[Any, Resolver | None] = {}
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
                    raise unexpected(KeyError(type)) from None
                decoder_for(type)
                return decode(data, type)
            except RecursionError:
                raise too_deep() from None
            except Exception as error:
                raise unexpected(error) from error

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
            raise too_deep() from None
        return self._lenient_pass(obj, type)

    def _decoder_for(self, type: Any) -> Callable[[Any], Any]:
        target = type
        if lone_tagged(type):  # decoded alone, a variant still needs its tag
            target = type | tag_guard(type.__struct_config__.tag_field)
        strict: Callable[[Any], Any]
        if is_shape(type) or forbidden_of(type):
            # A by-shape union itself (its wire is no answer), or a Struct that
            # forbids properties msgspec would drop as unknown: the walk checks.
            untyped = msgspec.json.Decoder().decode

            def shaped(data: Any) -> Any:
                return self._lenient_pass(untyped(data), type)

            strict = shaped
        else:
            strict = msgspec.json.Decoder(target, dec_hook=dec_hook).decode
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
        if lone_tagged(type):
            target = type | tag_guard(type.__struct_config__.tag_field)
        if is_shape(type):
            return self._lenient_pass(obj, type)
        try:
            return strict_convert(obj, target)
        except ValidationError:
            return self._lenient_pass(obj, type)
        except RecursionError:
            raise ValidationError("Value is nested too deeply") from None
        except Exception as error:
            raise unexpected(error) from error

    def _lenient_pass(self, obj: Any, type: Any) -> Any:
        """The lenient rules over a whole message, within `LENIENT_LIMITS`."""
        try:
            return self._lenient(obj, type, "$", Work(LENIENT_LIMITS))
        except ValidationError as error:
            bounded = text_bounded(error)
            if bounded is error:
                raise
            raise bounded from None
        except RecursionError:
            raise ValidationError("Value is nested too deeply") from None
        except Exception as error:
            raise unexpected(error) from error

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
            inner, in_list = shape_slot(field.type)
            wire = None if inner is None else typing.get_args(inner)[0]
            lines.append(f"    v = obj.{attr}")
            if not (isinstance(wire, type) and issubclass(wire, msgspec.Struct)):
                lines.append("    if v is not UNSET:")
                lines.append(f"        obj.{attr} = R{i}(v, {path!r})")
                continue
            marker = shape_marker(inner)
            assert marker is not None
            names[f"W{i}"] = wire
            names[f"B{i}"] = wire_builder(marker, wire)
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

    def _plan(self, cls: type) -> list[FieldPlan]:
        plan = self._plans.get(cls)
        if plan is None:
            rules: dict[str, FieldRule] = {}
            for base in reversed(cls.__mro__):
                rules.update(self._rules_of().get(base, {}))
            uint64 = getattr(cls, "_uint64", ())
            plan = self._plans[cls] = [
                FieldPlan(
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

    def _shape_resolver(self, marker: ShapeUnion, wire: Any) -> Resolver:
        shape = self._shape
        pick = shape_pick(marker)
        build = wire_builder(marker, wire)
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
                if picked is not NO_PICK:
                    return picked
            elif isinstance(value, typed):
                return value  # already typed (built by hand, or resolved)
            # Strict only: a value that needs the lenient rules fails the
            # one-pass decode, which then reruns on the lenient path.
            return shape(value, marker, path, None)

        return resolve_shape

    def _resolver(self, hint: Any) -> Resolver | None:
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

    def _new_resolver(self, hint: Any) -> Resolver | None:
        marker = shape_marker(hint)
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
            item_marker = shape_marker(item_hint)
            pick = None if item_marker is None else shape_pick(item_marker)
            wire = None if item_marker is None else typing.get_args(item_hint)[0]
            build = None if item_marker is None else wire_builder(item_marker, wire)

            def resolve_list(value: Any, path: str) -> Any:
                if value.__class__ is not list:
                    return value
                items: list[Any] = value
                if build is not None and items and items[0].__class__ is wire:
                    return [build(v) for v in items]  # decoded: all are wires
                if pick is not None:  # a list of by-shape items: try the common case
                    out: list[Any] = []
                    for v in items:
                        picked = pick(v) if v.__class__ is dict else NO_PICK
                        if picked is NO_PICK:
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
                    k: resolve_value(v, f"{path}.{key_shown(k)}")
                    for k, v in items.items()
                }

            return resolve_dict
        if origin is typing.Union or origin is types.UnionType:
            for arg in typing.get_args(hint):
                inner = self._resolver(arg)
                if inner is not None:
                    return optional(inner)
        return None

    def _lenient(self, value: Any, hint: Any, path: str, work: Work) -> Any:
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
                return constrained(got, hint, path)
            return strict(value, hint, path)  # Annotated[int, msgspec.Meta(...)]
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            return self._struct(value, hint, path, work)
        if is_raw_class(hint):
            return self._other(value, hint, path, work)
        origin = typing.get_origin(hint)
        if origin is list:
            if not is_list(value):
                raise error_at(f"Expected `array`, got `{json_type(value)}`", path)
            (item,) = typing.get_args(hint)
            return [
                self._value(v, item, f"{path}[{i}]", work) for i, v in enumerate(value)
            ]
        if origin is dict:
            if not is_dict(value):
                raise error_at(f"Expected `object`, got `{json_type(value)}`", path)
            _, item = typing.get_args(hint)
            return {
                k: self._value(v, item, f"{path}.{key_shown(k)}", work)
                for k, v in value.items()
            }
        if origin is typing.Union or origin is types.UnionType:
            return self._union(value, typing.get_args(hint), path, work)
        return strict(value, hint, path)

    def _value(self, value: Any, hint: Any, path: str, work: Work) -> Any:
        """`_lenient`, after a strict conversion (in C) that usually succeeds: of
        a value that failed, only the path to the failure is walked in Python."""
        if self._resolver(hint) is not None:
            # By-shape unions inside: msgspec takes any value there, and a
            # failure must meet the lenient rules of this field, not later.
            return self._lenient(value, hint, path, work)
        try:
            return strict_convert(value, hint)
        except ValidationError:
            return self._lenient(value, hint, path, work)

    def _union(self, value: Any, args: tuple[Any, ...], path: str, work: Work) -> Any:
        if value is None and type(None) in args:
            return None
        candidates = [a for a in args if a is not type(None) and a is not UnsetType]
        if len(candidates) == 1:
            return self._lenient(value, candidates[0], path, work)
        if is_dict(value):
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
        raise first_error or error_at("No union member matches", path)

    def _struct(
        self, value: Any, cls: type[msgspec.Struct], path: str, work: Work
    ) -> Any:
        if not is_dict(value):
            raise error_at(f"Expected `object`, got `{json_type(value)}`", path)
        config = cls.__struct_config__
        if config.tag_field is not None and value.get(config.tag_field) != config.tag:
            if config.tag_field not in value:
                raise error_at(
                    f"Object missing required field `{config.tag_field}`", path
                )
            raise error_at(
                f"Invalid value {shown(value[config.tag_field])}",
                f"{path}.{config.tag_field}",
            )
        for key in forbidden_of(cls):
            if key in value:  # the schema's `not: {required: [key]}`
                raise error_at(f"Object has forbidden field `{key}`", path)
        kwargs: dict[str, Any] = {}
        alternatives = alternatives_of(cls)
        dropped: dict[str, ValidationError] = {}  # attr -> why, see below
        for field in self._plan(cls):
            if field.wire not in value:
                if field.required:
                    raise error_at(
                        f"Object missing required field `{field.wire}`", path
                    )
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
                    raise error_at(f"Expected `int` <= {UINT64_MAX}", field_path)
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
            raise error_at(str(error), path) from None

    def _skip_invalid(self, value: Any, hint: Any, path: str, work: Work) -> Any:
        """``x-deserialize-skip-invalid-items``: keep the array items that decode."""
        if not is_list(value):
            return self._value(value, hint, path, work)
        item = list_item(hint)
        if item is None:
            return self._value(value, hint, path, work)
        fast = self._resolver(item) is None  # by-shape items need `_lenient`
        convert = strict_convert
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
        return constrained(kept, hint, path)  # `minItems` holds after the skips

    def _other(
        self, value: Any, cls: type[RawObject], path: str, work: Work | None
    ) -> RawObject:
        """`value` kept raw as `cls`, once its tag and what the schema declares
        for it are checked (strictly only, when `work` is None)."""
        if not is_dict(value):
            raise error_at(f"Expected `object`, got `{json_type(value)}`", path)
        if issubclass(cls, OtherVariant):
            self._check_tag(value, cls, path)
        if not cls.checks:
            return cls(value)
        first_error: ValidationError | None = None
        for check in cls.checks:
            if is_shape(check):
                continue  # msgspec takes any value there: the walk checks
            try:
                strict_convert(value, check)
                return cls(value)
            except ValidationError as error:
                first_error = first_error or rerooted(error, path)
        if work is None:
            raise first_error or error_at("Invalid value", path)
        for check in cls.checks:
            try:
                typed = self._lenient(value, check, path, work)
            except LenientLimitError:
                raise
            except ValidationError as error:
                first_error = first_error or error
                continue
            return cls(self._repaired_raw(value, typed))
        raise first_error or error_at("Invalid value", path)

    @staticmethod
    def _check_tag(value: dict[str, Any], cls: type[OtherVariant], path: str) -> None:
        tag = value.get(cls.tag_field)
        if not isinstance(tag, str):
            raise error_at(
                f"Expected `str`, got `{json_type(tag)}`", f"{path}.{cls.tag_field}"
            )
        if cls.fixed_tag is not None and tag != cls.fixed_tag:
            raise error_at(f"Invalid value {shown(tag)}", f"{path}.{cls.tag_field}")
        if cls.fixed_tag is None and tag in cls.known_tags:
            raise error_at(f"Invalid value {shown(tag)}", f"{path}.{cls.tag_field}")

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
                strict_convert(raw[field.wire], field.type)
            except ValidationError:
                raw[field.wire] = msgspec.to_builtins(got)  # replaced by a rule
        return raw

    def _open(
        self, value: Any, known: Any, union: OpenUnion, path: str, work: Work
    ) -> Any:
        if not is_dict(value):
            raise error_at(f"Expected `object`, got `{json_type(value)}`", path)
        tag = value.get(union.tag_field)
        if not isinstance(tag, str):
            where = f"{path}.{union.tag_field}"
            if tag is None:
                raise error_at(
                    f"Object missing required field `{union.tag_field}`", path
                )
            raise error_at(f"Expected `str`, got `{json_type(tag)}`", where)
        for cls in union_members(known):
            if cls.__struct_config__.tag == tag and tag != GUARD_TAG:
                # A known tag with a malformed body is an error, never "unknown".
                return self._struct(value, cls, path, work)
        raw = union.raw.get(tag)
        if raw is not None:  # a known variant kept raw: checked as its payload
            return self._other(value, raw, path, work)
        if union.other is None:
            raise error_at(f"Invalid value {shown(tag)}", f"{path}.{union.tag_field}")
        # A tag the schema reserves (in the `other` branch's `not`) without
        # defining a variant for it is invalid, not "unknown".
        return self._other(value, union.other, path, work)

    def _shape(
        self, value: Any, union: ShapeUnion, path: str, work: Work | None
    ) -> Any:
        """The first candidate, in schema order, that accepts `value`, strictly
        or else under its lenient rules (as the upstream SDKs read an untagged
        union: each variant whole, in turn; never a later variant's strict
        match over an earlier one's repaired one). With `work` None (resolved
        in ``__post_init__``), the lenient rules have a budget of their own."""
        first_error: ValidationError | None = None
        for candidate in union.tried(value):
            if not is_raw_class(candidate):
                if not tag_matches(value, candidate):
                    continue  # msgspec would accept a lone tagged Struct untagged
                try:
                    return strict_convert(value, candidate)
                except ValidationError as error:
                    first_error = first_error or rerooted(error, path)
                    if not may_repair(value, candidate):
                        continue
            if work is None:
                work = Work(LENIENT_LIMITS)
            try:
                return self._lenient(value, candidate, path, work)
            except LenientLimitError:
                raise
            except ValidationError as error:
                first_error = first_error or error
        names = ", ".join(getattr(c, "__name__", repr(c)) for c in union.candidates)
        detail = f" (first: {first_error})" if first_error else ""
        raise error_at(
            f"Value matches no variant of {union.name} [{names}]{detail}", path
        )
