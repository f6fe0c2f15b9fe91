"""One alternative of a union as the schema writes it, and what an ``other``
branch says about the known tags."""

from __future__ import annotations

from typing import Any

from .nodes import SchemaError, alternatives_of, single_ref


class Variant:
    """One alternative of a union as the schema writes it."""

    def __init__(self, node: dict[str, Any]) -> None:
        self.node = node
        self.is_other = node.get("title") == "other"
        self.title: str | None = node.get("title")
        self.doc: str = node.get("description", "")
        props = node.get("properties", {})
        self.tag_field: str | None = None
        self.tag: str | None = None
        for name, prop in props.items():
            if isinstance(prop.get("const"), str):
                self.tag_field, self.tag = name, prop["const"]
                break
        self.extra_props = {
            name: prop for name, prop in props.items() if name != self.tag_field
        }
        self.required = [r for r in node.get("required", []) if r != self.tag_field]
        self.payload = single_ref(node)
        if self.payload is None and node.get("allOf"):
            raise SchemaError(f"variant with a composite allOf: {node}")
        self.mixins = alternatives_of(node)

    @property
    def is_object(self) -> bool:
        return (
            self.node.get("type") == "object"
            or self.payload is not None
            or "properties" in self.node
        )


def tag_field_of_other(other: Variant, known: list[Variant]) -> str:
    fields = {v.tag_field for v in known if v.tag_field}
    if len(fields) == 1:
        return fields.pop()
    props = other.node.get("properties", {})
    if len(props) >= 1:
        return str(next(iter(props)))
    raise SchemaError(f"cannot tell the tag field of an `other` variant: {other.node}")


def known_tags_of_other(
    other: Variant, tag_field: str, known: list[Variant]
) -> tuple[str, ...]:
    """Known tags from the `other` branch's ``not`` clause (and the known variants)."""
    tags: list[str] = []
    negated = other.node.get("not", {})
    for branch in alternatives_of(negated) or []:
        const = branch.get("properties", {}).get(tag_field, {}).get("const")
        if isinstance(const, str) and const not in tags:
            tags.append(const)
    for variant in known:
        if variant.tag is not None and variant.tag not in tags:
            tags.append(variant.tag)
    return tuple(tags)
