"""Passes over the parsed definitions, once every one is built: the wire
Structs of by-shape unions, which Structs resolve shapes after decoding, the
integer formats in use, and the order classes are written in."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from . import ir
from .names import camel_of, snake
from .nodes import INTEGER_FORMATS, SchemaError


def integer_formats(
    structs: dict[str, ir.Struct],
    aliases: list[ir.Alias],
    unions: list[ir.Union],
    enums: list[ir.Enum],
) -> list[ir.IntegerFormat]:
    """The integer formats the module's types use, in a fixed order."""
    used: set[str] = set()

    def visit(type_: ir.TypeExpr) -> None:
        if isinstance(type_, ir.Prim) and type_.format is not None:
            used.add(type_.format)
        elif isinstance(type_, ir.ListOf):
            visit(type_.item)
        elif isinstance(type_, ir.DictOf):
            visit(type_.value)
        elif isinstance(type_, ir.Nullable):
            visit(type_.inner)

    for struct in structs.values():
        for field in struct.fields:
            visit(field.type)
    for alias in aliases:
        visit(alias.type)
    for union in unions:
        for variant in union.variants:
            visit(variant)
    for enum in enums:
        if enum.open_type is not None:
            visit(enum.open_type)
    return [
        ir.IntegerFormat(fmt, *INTEGER_FORMATS[fmt])
        for fmt in INTEGER_FORMATS
        if fmt in used
    ]


def plan_wires(
    structs: dict[str, ir.Struct],
    unions: list[ir.Union],
    claim: Callable[[str, str], str],
) -> None:
    """A wire Struct for each by-shape union of Structs (`ir.Union.wire`)."""

    def all_fields(struct: ir.Struct) -> list[ir.Field]:
        base = structs.get(struct.base) if struct.base else None
        return [*(all_fields(base) if base else []), *struct.fields]

    for union in unions:
        if union.strategy != "shape":
            continue
        variants = [
            structs.get(v.name) if isinstance(v, ir.Ref) else None
            for v in union.variants
        ]
        if not variants or any(v is None for v in variants):
            continue  # lists (SessionConfigSelectOptions), or an alias
        merged: dict[str, ir.Field] = {}
        agree = True
        tag = union.shape_tag_field
        for variant in variants:
            assert variant is not None
            if variant.tag_field is not None and variant.tag_field != tag:
                agree = False
            for field in all_fields(variant):
                seen = merged.setdefault(field.attr, field)
                same = (seen.wire, seen.type, seen.nullable) == (
                    field.wire,
                    field.type,
                    field.nullable,
                )
                agree = agree and same and field.wire != tag
        if not agree:
            continue
        fields = [
            dataclasses.replace(
                f,
                required=False,
                doc="",
                has_default=False,
                default_on_error=False,
                skip_invalid_items=False,
                default_on_null=False,
            )
            for f in merged.values()
        ]
        if tag is not None:
            attr = snake(tag)
            fields.insert(
                0,
                ir.Field(
                    attr=attr,
                    wire=tag,
                    explicit_wire=camel_of(attr) != tag,
                    type=ir.Prim("str"),
                    required=False,
                    nullable=False,
                    doc="",
                ),
            )
        name = claim(f"_{union.name}Wire", f"_{union.name}WireFields")
        structs[name] = ir.Struct(
            name=name,
            doc=f"Every field of the `{union.name}` variants, all optional: decoded"
            " in one pass, then the variant is picked and built from it.",
            fields=fields,
        )
        union.wire = name


def mark_shape_resolution(
    structs: dict[str, ir.Struct], unions: list[ir.Union], aliases: list[ir.Alias]
) -> None:
    """Which Structs resolve by-shape unions, check uint64 bounds or exclusive
    alternatives after decoding (their ``__post_init__``)."""
    shape = {u.name for u in unions if u.strategy == "shape"}
    alias_refs = {a.name: a.type.refs() for a in aliases}

    def needs(type_: ir.TypeExpr) -> bool:
        for ref in type_.refs():
            if ref in shape or any(r in shape for r in alias_refs.get(ref, ())):
                return True
        return False

    def in_container(type_: ir.TypeExpr) -> bool:
        while isinstance(type_, ir.Nullable):
            type_ = type_.inner
        return isinstance(type_, ir.ListOf | ir.DictOf)

    def all_fields(struct: ir.Struct) -> list[ir.Field]:
        base = structs.get(struct.base) if struct.base else None
        return [*(all_fields(base) if base else []), *struct.fields]

    def is_uint64(type_: ir.TypeExpr) -> bool:
        while isinstance(type_, ir.Nullable):
            type_ = type_.inner
        if isinstance(type_, ir.ListOf | ir.DictOf) and "uint64" in repr(type_):
            raise SchemaError(f"uint64 inside a container: {type_}")
        return isinstance(type_, ir.Prim) and type_.format == "uint64"

    def alternatives(struct: ir.Struct) -> list[ir.Alternative]:
        base = structs.get(struct.base) if struct.base else None
        return struct.alternatives or (alternatives(base) if base else [])

    for struct in structs.values():
        own_need = (
            any(needs(f.type) or is_uint64(f.type) for f in struct.fields)
            or struct.alternatives
        )
        if not own_need and struct.base is not None:
            continue  # its base's `__post_init__` does all it needs
        fields = all_fields(struct)
        struct.resolves_shapes = any(needs(f.type) for f in fields)
        shaped = [f for f in fields if needs(f.type)]
        if struct.resolves_shapes and all(in_container(f.type) for f in shaped):
            struct.shape_guard = tuple(f.attr for f in shaped)
        struct.uint64_checks = tuple(f.attr for f in fields if is_uint64(f.type))
        struct.checks_alternatives = bool(alternatives(struct))


def ordered_structs(structs: dict[str, ir.Struct]) -> list[ir.Struct]:
    """Schema order, except that a base class comes before its subclasses."""
    ordered: list[ir.Struct] = []
    placed: set[str] = set()

    def place(struct: ir.Struct) -> None:
        if struct.name in placed:
            return
        if struct.base is not None:
            place(structs[struct.base])
        placed.add(struct.name)
        ordered.append(struct)

    for struct in structs.values():
        place(struct)
    return ordered
