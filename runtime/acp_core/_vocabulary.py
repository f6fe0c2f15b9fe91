"""The generated classes the runtime builds and reads, found without their names.

A spec bump may rename any generated class (draft 2.0.0-alpha.3 renamed
``SessionNotification`` to ``UpdateSessionNotification``), so the runtime
never names one: it starts from a method's wire name in the generated
tables and follows wire field names and variant tags, which are the
protocol itself::

    vocab = vocabulary(v1)
    vocab.update("agent_message_chunk")      # v1.AgentMessageChunk
    vocab.content("text")                    # v1.TextContent
    vocab.member(vocab.update("tool_call_update"), "locations")
                                             # v1.ToolCallLocation

A lookup the module cannot answer raises :class:`NotInSchema` (a
``ValueError``) when it is made, naming the version and schema: a version
whose schema lacks something loses that one feature, never the import.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, TypeGuard

import msgspec

__all__ = [
    "NotInSchema",
    "Vocabulary",
    "members",
    "variant_tag",
    "vocabulary",
]


class NotInSchema(ValueError):
    """The generated module of a protocol version has no such method, field or variant."""


def members(hint: Any) -> list[Any]:
    """The classes a field of type ``hint`` may hold, in declaration order.

    Unwraps ``Optional``/``UnsetType``, unions, list items and dict values,
    and the markers of open unions (their known variants, then the variants
    kept raw) and by-shape unions (their candidates).
    """
    found: list[Any] = []
    _collect(hint, found)
    return found


def _collect(hint: Any, found: list[Any]) -> None:
    metadata = getattr(hint, "__metadata__", None)
    if metadata is not None:
        _collect(typing.get_args(hint)[0], found)
        for marker in metadata:
            for candidate in getattr(marker, "candidates", ()):  # ShapeUnion
                _collect(candidate, found)
            other = getattr(marker, "other", None)  # OpenUnion
            raw = getattr(marker, "raw", None)
            if _is_dict(raw):
                found.extend(raw.values())
            if isinstance(other, type):
                found.append(other)
        return
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        for arg in typing.get_args(hint):
            _collect(arg, found)
    elif origin is list:
        _collect(typing.get_args(hint)[0], found)
    elif origin is dict:
        _collect(typing.get_args(hint)[1], found)
    elif (
        isinstance(hint, type)
        and hint is not type(None)
        and hint is not msgspec.UnsetType
        and hint not in found
    ):
        found.append(hint)


def _is_dict(value: Any) -> TypeGuard[dict[Any, Any]]:
    return isinstance(value, dict)


def _is_struct_class(cls: Any) -> TypeGuard[type[msgspec.Struct]]:
    return isinstance(cls, type) and issubclass(cls, msgspec.Struct)


def variant_tag(obj: object) -> str | None:
    """The tag of a generated union variant: its Struct tag, or the tag of a
    variant kept raw (``OtherVariant``); None for anything else."""
    config = getattr(type(obj), "__struct_config__", None)
    if config is not None:
        tag = config.tag
        return tag if isinstance(tag, str) else None
    tag_field = getattr(type(obj), "tag_field", None)
    if isinstance(tag_field, str) and _is_dict(obj):
        value: Any = obj.get(tag_field)
        return value if isinstance(value, str) else None
    return None


def _tag_of(cls: Any) -> tuple[str | None, str | None]:
    """(tag field, tag) of a variant class: a tagged Struct or a fixed raw one."""
    config = getattr(cls, "__struct_config__", None)
    if config is not None:
        return config.tag_field, config.tag
    return getattr(cls, "tag_field", None), getattr(cls, "fixed_tag", None)


class Vocabulary:
    """What the runtime needs from one generated module, found by wire names.

    Lookups are cached; each raises :class:`NotInSchema` when the module
    has no answer.
    """

    def __init__(self, module: Any) -> None:
        self.module = module
        self.version: int = module.PROTOCOL_VERSION
        self.schema_version: str = getattr(module, "SCHEMA_VERSION", "unknown")
        self._cache: dict[tuple[Any, ...], Any] = {}

    def __repr__(self) -> str:
        return f"<Vocabulary v{self.version} (schema {self.schema_version})>"

    def missing(self, what: str) -> NotInSchema:
        return NotInSchema(
            f"protocol v{self.version} (schema {self.schema_version}) has no {what}"
        )

    def _cached(self, key: tuple[Any, ...], find: Callable[[], Any]) -> Any:
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = find()
            return value

    # -- methods -------------------------------------------------------------

    def method(self, wire: str) -> Any:
        """The generated ``Method`` of ``wire`` (either side, unstable tables too)."""

        def find() -> Any:
            for table in (
                "AGENT_METHODS_UNSTABLE",
                "CLIENT_METHODS_UNSTABLE",
                "PROTOCOL_METHODS_UNSTABLE",
                "AGENT_METHODS",
                "CLIENT_METHODS",
                "PROTOCOL_METHODS",
            ):
                found = getattr(self.module, table, {}).get(wire)
                if found is not None:
                    return found
            raise self.missing(f"method {wire!r}")

        return self._cached(("method", wire), find)

    def has_method(self, wire: str) -> bool:
        try:
            self.method(wire)
        except NotInSchema:
            return False
        return True

    def params(self, wire: str) -> Any:
        """The params class of method ``wire``."""
        return self.method(wire).params

    # -- fields and variants -------------------------------------------------

    def field(self, cls: Any, wire: str) -> Any:
        """The type of ``cls``'s field named ``wire`` on the wire."""

        def find() -> Any:
            if _is_struct_class(cls):
                for info in msgspec.structs.fields(cls):
                    if info.encode_name == wire:
                        return info.type
            raise self.missing(f"field {wire!r} in {getattr(cls, '__name__', cls)}")

        return self._cached(("field", cls, wire), find)

    def requires(self, cls: Any, wire: str) -> bool:
        """Whether ``cls`` (a Struct class) declares a required field named ``wire``."""

        def find() -> bool:
            return any(
                info.required and info.encode_name == wire
                for info in msgspec.structs.fields(cls)
            )

        return bool(self._cached(("requires", cls, wire), find))

    def member(self, cls: Any, *path: str) -> Any:
        """The first Struct class held at ``path`` (wire field names) from ``cls``.

        ``member(ToolCallUpdate, "locations")`` is ``ToolCallLocation``.
        """
        current = cls
        for wire in path:
            candidates = [
                m
                for m in members(self.field(current, wire))
                if issubclass(m, msgspec.Struct)
            ]
            if not candidates:
                raise self.missing(f"object in field {wire!r} of {current.__name__}")
            current = candidates[0]
        return current

    def variant(self, hint: Any, tag: str, what: str) -> Any:
        """The variant of the union ``hint`` whose tag is ``tag``."""

        def find() -> Any:
            for cls in members(hint):
                if _tag_of(cls)[1] == tag:
                    return cls
            raise self.missing(f"{what} {tag!r}")

        return self._cached(("variant", hint, tag), find)

    def with_field(self, hint: Any, wire: str, what: str) -> Any:
        """The first Struct of the union ``hint`` that has a field ``wire``."""

        def find() -> Any:
            for cls in members(hint):
                if issubclass(cls, msgspec.Struct) and any(
                    f.encode_name == wire for f in msgspec.structs.fields(cls)
                ):
                    return cls
            raise self.missing(f"{what} with {wire!r}")

        return self._cached(("with_field", hint, wire), find)

    # -- what the builders and the transcript use ----------------------------

    @property
    def notification(self) -> Any:
        """The params class of ``session/update``."""
        return self.params("session/update")

    @property
    def update_type(self) -> Any:
        """The type of the ``update`` field of ``session/update`` (the union)."""
        return self.field(self.notification, "update")

    def update(self, tag: str) -> Any:
        """The ``session/update`` variant tagged ``sessionUpdate: tag``."""
        return self._cached(
            ("update", tag),
            lambda: self.variant(self.update_type, tag, "session update"),
        )

    def has_update(self, tag: str) -> bool:
        try:
            self.update(tag)
        except NotInSchema:
            return False
        return True

    @property
    def content_type(self) -> Any:
        """The content block union (the items of ``session/prompt``'s ``prompt``)."""
        return self.field(self.params("session/prompt"), "prompt")

    def content(self, tag: str) -> Any:
        """The content block class tagged ``type: tag`` (``text``, ``resource``, ...)."""
        return self._cached(
            ("content", tag),
            lambda: self.variant(self.content_type, tag, "content block"),
        )

    def tool_content(self, tag: str) -> Any:
        """The tool call content class tagged ``type: tag`` (``content``, ``diff``, ...)."""
        hint = self.field(self.update("tool_call_update"), "content")
        return self.variant(hint, tag, "tool call content")


_VOCABULARIES: dict[Any, Vocabulary] = {}


def vocabulary(module: Any) -> Vocabulary:
    """The (cached) :class:`Vocabulary` of a generated module."""
    found = _VOCABULARIES.get(module)
    if found is None:
        found = _VOCABULARIES[module] = Vocabulary(module)
    return found
