"""What the generated modules declare with: raw objects and unknown
variants (`RawObject`, `OtherVariant`), union markers (`OpenUnion`,
`ShapeUnion`), lenient rules (`FieldRule`) and method table rows (`Method`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec
from msgspec import UNSET

from ._bounds import is_dict, shown


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
                f"{shown(tag)} is a defined {self.tag_field!r}; use its own class"
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
        if self.tag_field is None or not is_dict(value):
            return list(self.candidates)
        tag: Any = value.get(self.tag_field)
        if type(tag) is not str:
            present = self.tag_field in value
            return [
                c
                for c in self.candidates
                if tag_of(c) is None
                and not (present and self.tag_field in forbidden_of(c))
            ]
        tagged = [c for c in self.candidates if tag_of(c) == tag]
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


class FieldPlan:
    """How `Codec` decodes one field of a Struct on the lenient path: its rule
    and what the strict pass cannot check."""

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


def forbidden_of(candidate: Any) -> tuple[str, ...]:
    """Properties whose presence makes a value not `candidate` (the schema's
    ``"not": {"required": [...]}``), declared by the generated class."""
    forbidden: tuple[str, ...] = getattr(candidate, "_forbidden", ())
    return forbidden


def tag_of(candidate: Any) -> str | None:
    """The tag of a tagged Struct candidate, else None (Others included)."""
    config = getattr(candidate, "__struct_config__", None)
    return None if config is None else config.tag
