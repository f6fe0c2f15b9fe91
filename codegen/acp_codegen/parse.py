"""Schema -> intermediate model: the parser of one merged schema.

`load.py` reads a spec folder and hands its schema here. The parser builds a
definition per ``$defs`` entry, then runs the passes over all of them
(`passes.py`) and builds the method tables (`methods.py`). Every rule of the naming
and decoding design lives in these modules (`names.py`, `nodes.py`,
`variants.py` beside them); `codegen/README.md` states them in prose.
"""

from __future__ import annotations

from typing import Any

from . import ir
from .methods import method_table, preview_table
from .names import camel_of, pascal, snake, upper_snake
from .nodes import (
    LENIENT_KEYS,
    UNSUPPORTED,
    SchemaError,
    alternatives_of,
    constraining_keywords,
    forbidden_properties,
    integer_prim,
    null_default,
    one_alternative,
    single_ref,
    walk_refs,
)
from .passes import integer_formats, mark_shape_resolution, ordered_structs, plan_wires
from .variants import Variant, known_tags_of_other, tag_field_of_other

__all__ = ["Parser"]


class Parser:
    """One merged schema (stable and unstable ``$defs``) and its method tables -> `ir.Module`."""

    def __init__(
        self,
        schema: dict[str, Any],
        meta: dict[str, Any],
        unstable_meta: dict[str, Any],
    ) -> None:
        self.schema = schema
        self.meta = meta
        self.unstable_meta = unstable_meta
        self.defs: dict[str, dict[str, Any]] = schema["$defs"]
        self.ref_counts: dict[str, int] = {}
        for name in walk_refs(
            {k: v for k, v in schema["$defs"].items() if not v.get("x-docs-ignore")}
        ):
            self.ref_counts[name] = self.ref_counts.get(name, 0) + 1
        self.taken: set[str] = set(self.defs)
        self.structs: dict[str, ir.Struct] = {}
        self.aliases: list[ir.Alias] = []
        self.enums: list[ir.Enum] = []
        self.constants: list[ir.Constant] = []
        self.others: list[ir.Other] = []
        self.unions: list[ir.Union] = []
        #: payload `$defs` object -> (tag field, tag): the payload *is* the variant
        self.tag_of: dict[str, tuple[str, str]] = {}

    # -- entry -----------------------------------------------------------

    def module(
        self, *, schema_version: str, schema_files: list[str], schema_sha256: str
    ) -> ir.Module:
        # Tags first: a payload that serves a single variant carries the tag itself,
        # and that must be known before its Struct is built.
        for name, node in self.defs.items():
            if "properties" not in node and self._is_object_union(node):
                self._plan_tags(name, node)
        for name, node in self.defs.items():
            if node.get("x-docs-ignore"):
                continue  # JSON-RPC envelopes: the method tables carry what they say
            self._define(name, node)
        plan_wires(self.structs, self.unions, self._claim)
        mark_shape_resolution(self.structs, self.unions, self.aliases)
        methods = method_table(self.defs, self.meta)
        return ir.Module(
            version=int(self.meta["version"]),
            schema_version=schema_version,
            schema_files=schema_files,
            schema_sha256=schema_sha256,
            doc=self.schema.get("title", ""),
            structs=ordered_structs(self.structs),
            aliases=self.aliases,
            enums=self.enums,
            constants=self.constants,
            others=self.others,
            unions=self.unions,
            methods=methods,
            unstable_methods=preview_table(
                method_table(self.defs, self.unstable_meta), methods
            ),
            integer_formats=integer_formats(
                self.structs, self.aliases, self.unions, self.enums
            ),
        )

    # -- classification --------------------------------------------------

    def _is_object_union(self, node: dict[str, Any]) -> bool:
        alts = alternatives_of(node)
        if alts is None:
            return False
        return any(Variant(a).is_object for a in alts if a.get("type") != "null")

    def _define(self, name: str, node: dict[str, Any]) -> None:
        alts = alternatives_of(node)
        doc = node.get("description", "")
        if "properties" in node or (node.get("type") == "object" and alts is None):
            if alts is not None and any(Variant(a).tag for a in alts):
                self._object_union(name, node)
            elif alts is None and node.get("additionalProperties") is True:
                self._raw_object(name, node)
            else:
                self._struct(name, node)
        elif alts is not None:
            if self._is_object_union(node):
                self._union(name, node)
            elif self._is_enum(alts):
                self._enum(name, doc, alts)
            else:
                self._scalar_union(name, doc, alts)
        else:
            type_, _nullable = self._type(node)
            self.aliases.append(ir.Alias(name=name, doc=doc, type=type_))

    # -- enums and scalar unions -----------------------------------------

    @staticmethod
    def _is_enum(alts: list[dict[str, Any]]) -> bool:
        kinds = set()
        for alt in alts:
            if "const" in alt:
                kinds.add(type(alt["const"]).__name__)
            elif "enum" in alt:
                kinds.update(type(v).__name__ for v in alt["enum"])
            elif alt.get("type") in ("string", "integer") and "title" in alt:
                pass  # the open branch ("other", "unknown", "Other")
            else:
                return False
        return len(kinds) == 1

    def _enum(self, name: str, doc: str, alts: list[dict[str, Any]]) -> None:
        values: list[ir.EnumValue] = []
        open_type: ir.Prim | None = None
        kind = "str"
        for alt in alts:
            if "const" in alt:
                kind = "int" if isinstance(alt["const"], int) else "str"
                values.append(
                    ir.EnumValue(
                        alt["const"], alt.get("description", ""), alt.get("title")
                    )
                )
            elif "enum" in alt:
                for value in alt["enum"]:
                    kind = "int" if isinstance(value, int) else "str"
                    values.append(ir.EnumValue(value, alt.get("description", "")))
            else:
                # the open branch ("other"): any value of its type, within its format
                open_type = (
                    integer_prim(alt) if alt["type"] == "integer" else ir.Prim("str")
                )
        self.enums.append(
            ir.Enum(name=name, doc=doc, kind=kind, values=values, open_type=open_type)
        )
        for value in values:
            if value.title and kind == "int":
                self.constants.append(
                    ir.Constant(
                        name=f"{upper_snake(name)}_{upper_snake(value.title)}",
                        value=value.value,
                        doc=value.doc or value.title,
                    )
                )

    def _scalar_union(self, name: str, doc: str, alts: list[dict[str, Any]]) -> None:
        types = [self._type(alt)[0] for alt in alts if alt.get("type") != "null"]
        nullable = any(alt.get("type") == "null" for alt in alts)
        if sum(isinstance(t, ir.ListOf) for t in types) > 1:
            # Two array types: msgspec cannot tell them apart, decode by shape.
            self.unions.append(
                ir.Union(name=name, doc=doc, strategy="shape", variants=types)
            )
            return
        self.unions.append(
            ir.Union(
                name=name,
                doc=doc,
                strategy="scalar",
                variants=[*types, ir.Prim("None")] if nullable else types,
            )
        )

    # -- tagged unions ---------------------------------------------------

    def _plan_tags(self, name: str, node: dict[str, Any]) -> None:
        for variant in map(Variant, alternatives_of(node) or []):
            if (
                variant.tag is not None
                and variant.payload is not None
                and not variant.extra_props
                and not variant.mixins
                and self.ref_counts.get(variant.payload, 0) == 1
                and "properties" in self.defs[variant.payload]
                and not alternatives_of(self.defs[variant.payload])
            ):
                assert variant.tag_field is not None
                self.tag_of[variant.payload] = (variant.tag_field, variant.tag)

    def _claim(self, preferred: str, fallback: str) -> str:
        for candidate in (preferred, fallback):
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        raise SchemaError(f"no free class name for {preferred!r} / {fallback!r}")

    def _union(self, name: str, node: dict[str, Any]) -> None:
        variants = [
            Variant(a) for a in alternatives_of(node) or [] if a.get("type") != "null"
        ]
        known = [v for v in variants if not v.is_other]
        other = next((v for v in variants if v.is_other), None)
        members: list[ir.TypeExpr] = []
        raw_variants: list[str] = []
        for variant in known:
            if variant.tag is not None:
                assert variant.tag_field is not None
                if variant.payload is not None and self._is_union_def(variant.payload):
                    raw = self._claim(
                        name + pascal(variant.tag),
                        name + pascal(variant.tag) + "Variant",
                    )
                    self.others.append(
                        ir.Other(
                            name=raw,
                            union=name,
                            doc=variant.doc or self._doc_of(variant.payload),
                            tag_field=variant.tag_field,
                            known_tags=(variant.tag,),
                            fixed_tag=variant.tag,
                            # the payload stays raw, but must be one
                            checks=(variant.payload,),
                        )
                    )
                    raw_variants.append(raw)
                    continue
                if variant.payload in self.tag_of and self.tag_of[variant.payload] == (
                    variant.tag_field,
                    variant.tag,
                ):
                    members.append(ir.Ref(variant.payload))
                    continue
                if variant.payload is not None and not variant.extra_props:
                    cls = self._claim(pascal(variant.tag), name + pascal(variant.tag))
                else:
                    cls = self._claim(
                        name + pascal(variant.tag),
                        name + pascal(variant.tag) + "Variant",
                    )
                self.structs[cls] = ir.Struct(
                    name=cls,
                    doc=variant.doc or self._doc_of(variant.payload),
                    fields=self._fields(variant.extra_props, variant.required),
                    base=variant.payload,
                    tag_field=variant.tag_field,
                    tag=variant.tag,
                )
                members.append(ir.Ref(cls))
            elif variant.payload is not None and not variant.extra_props:
                members.append(ir.Ref(variant.payload))
            elif variant.payload is None and "properties" in variant.node:
                # An inline object alternative (v1 `MessageMcpResponse`'s
                # `Result` / `Error`): a class of its own, named by its title.
                suffix = pascal(variant.title or f"variant{len(members)}")
                cls = self._claim(name + suffix, name + suffix + "Variant")
                self.structs[cls] = ir.Struct(
                    name=cls,
                    doc=variant.doc,
                    fields=self._fields(variant.extra_props, variant.required),
                    forbidden=forbidden_properties(variant.node),
                )
                members.append(ir.Ref(cls))
            elif variant.payload is None and not variant.mixins:
                # No properties: the variant is what its keywords say, as a
                # property would be. Only a title (v2 `ErrorData`'s `Other`)
                # constrains nothing: any JSON value.
                type_, nullable = self._type(constraining_keywords(variant.node))
                members.append(ir.Nullable(type_) if nullable else type_)
            else:
                raise SchemaError(
                    f"{name}: untagged variant without a payload: {variant.node}"
                )
        self._finish_union(
            name,
            node.get("description", ""),
            known,
            other,
            members,
            raw_variants,
            other_declares=(
                other.extra_props if other else {},
                other.required if other else [],
                other.mixins if other else None,
                one_alternative(other.node) if other else False,
            ),
        )

    def _is_union_def(self, name: str) -> bool:
        """Whether `name` becomes a union: alternatives without properties,
        or an object whose alternatives carry tags (`_object_union`)."""
        node = self.defs[name]
        alts = alternatives_of(node)
        if alts is None:
            return False
        return "properties" not in node or any(Variant(a).tag for a in alts)

    def _finish_union(
        self,
        name: str,
        doc: str,
        known: list[Variant],
        other: Variant | None,
        members: list[ir.TypeExpr],
        raw_variants: list[str] | None = None,
        *,
        other_declares: tuple[
            dict[str, Any], list[str], list[dict[str, Any]] | None, bool
        ] = ({}, [], None, False),
    ) -> None:
        """Decide how the union decodes (see `ir.Union`), and add its `other`
        variant: the schema's, or an implicit one (see `ir.Other.implicit`)."""
        tag_fields = {v.tag_field for v in known}
        all_tagged = None not in tag_fields and len(tag_fields) == 1
        other_name = None
        tag_field = next(iter(tag_fields)) if all_tagged else None
        tagged = {v.tag_field for v in known if v.tag_field is not None}
        untagged = [
            m for v, m in zip(known, members, strict=False) if v.tag_field is None
        ]
        shape_tag_field = next(iter(tagged)) if len(tagged) == 1 else None
        if other is not None:
            other_tag_field = tag_field_of_other(other, known)
            if not tagged:  # v2 AvailableCommandInput: `unstructured` or other
                shape_tag_field = other_tag_field
            other_name = self._claim(name + "Other", name + "OtherVariant")
            props, required, mixins, exclusive = other_declares
            self.others.append(
                ir.Other(
                    name=other_name,
                    union=name,
                    doc=other.doc,
                    tag_field=other_tag_field,
                    known_tags=known_tags_of_other(other, other_tag_field, known),
                    checks=self._check_struct(
                        other_name,
                        {k: v for k, v in props.items() if k != other_tag_field},
                        [r for r in required if r != other_tag_field],
                        mixins,
                        exclusive,
                    ),
                )
            )
            if all_tagged and other_tag_field != tag_field:
                all_tagged = False
        elif (
            shape_tag_field is not None
            and untagged
            and not raw_variants
            and len(known) == len(members)
            and all(
                (isinstance(m, ir.Ref) and self.defs.get(m.name, {}).get("properties"))
                or (isinstance(m, ir.Ref) and m.name in self.structs)
                for m in untagged
            )
        ):
            # Tagged variants and an untagged default (v1 AuthMethod, McpServer):
            # an unknown tag is kept raw, never read as the default.
            other_name = self._claim(name + "Other", name + "OtherVariant")
            self.others.append(
                ir.Other(
                    name=other_name,
                    union=name,
                    doc=f"A `{name}` whose `{shape_tag_field}` is none of the known"
                    " ones: kept raw, checked as the untagged variant"
                    f" ({', '.join(m.render(frozenset()) for m in untagged)}) that"
                    " the schema would read it as.",
                    tag_field=shape_tag_field,
                    known_tags=tuple(v.tag for v in known if v.tag is not None),
                    checks=tuple(m.render(frozenset()) for m in untagged),
                    implicit=True,
                )
            )
        if all_tagged and members:
            strategy = "open" if other is not None or raw_variants else "tagged"
        elif other_name is None and not raw_variants and len(members) == 1:
            strategy = "single"  # one untagged variant: just that type, natively
        else:
            strategy = "shape"
        self.unions.append(
            ir.Union(
                name=name,
                doc=doc,
                strategy=strategy,
                variants=members,
                other=other_name,
                tag_field=tag_field,
                raw_variants=raw_variants or [],
                shape_tag_field=shape_tag_field if strategy == "shape" else None,
            )
        )

    def _object_union(self, name: str, node: dict[str, Any]) -> None:
        """An object with common properties and one of several tagged variants."""
        common = node.get("properties", {})
        common_required = node.get("required", [])
        variants = [Variant(a) for a in alternatives_of(node) or []]
        known = [v for v in variants if not v.is_other]
        other = next((v for v in variants if v.is_other), None)
        members: list[ir.TypeExpr] = []
        for variant in known:
            suffix = pascal(variant.tag or variant.title or "")
            if not suffix:
                raise SchemaError(f"{name}: a variant with neither tag nor title")
            cls = self._claim(name + suffix, name + suffix + "Variant")
            # A common property that is the variant's tag (v2
            # `IdleStateUpdate`'s `stopReason`) is narrowed to the tag.
            props = {k: v for k, v in common.items() if k != variant.tag_field}
            for key, prop in variant.extra_props.items():
                # Both apply (an allOf): the variant narrows the common
                # property (v2 `IdleStateUpdate` "none": `stopReason` null),
                # whose lenient rules still hold.
                rules = {
                    k: v for k, v in props.get(key, {}).items() if k in LENIENT_KEYS
                }
                props[key] = {**prop, **rules}
            required = [
                *(r for r in common_required if r != variant.tag_field),
                *variant.required,
            ]
            alternatives = self._add_mixins(variant.mixins, props, required)
            self.structs[cls] = ir.Struct(
                name=cls,
                doc=variant.doc or node.get("description", ""),
                fields=self._fields(props, required),
                base=variant.payload,
                tag_field=variant.tag_field,
                tag=variant.tag,
                alternatives=alternatives,
                one_alternative=one_alternative(variant.node),
            )
            members.append(ir.Ref(cls))
        self._finish_union(
            name,
            node.get("description", ""),
            known,
            other,
            members,
            other_declares=(
                {**common, **other.extra_props} if other else {},
                [*common_required, *(other.required if other else [])],
                other.mixins if other else None,
                one_alternative(other.node) if other else False,
            ),
        )

    # -- structs ---------------------------------------------------------

    def _add_mixins(
        self,
        mixins: list[dict[str, Any]] | None,
        props: dict[str, Any],
        required: list[str],
    ) -> list[ir.Alternative]:
        """Flatten untagged alternatives (``anyOf`` of property sets) into `props`.

        A property every alternative requires stays required; the others become
        optional. What the flattening loses is returned, per alternative (the
        attributes it requires and declares), for the class to check.
        """
        if not mixins:
            return []
        common = set(props)
        sets: list[set[str]] = []
        alternatives = []
        for mixin in mixins:
            ref = single_ref(mixin)
            target = self.defs[ref] if ref else mixin
            if Variant(target).tag is not None:
                raise SchemaError(f"tagged alternative inside an object: {mixin}")
            own = target.get("properties", {})
            for prop_name, prop in own.items():
                if props.setdefault(prop_name, prop) != prop:
                    raise SchemaError(f"alternatives disagree on {prop_name!r}")
            sets.append(set(target.get("required", [])))
            alternatives.append(
                ir.Alternative(
                    required=tuple(snake(r) for r in target.get("required", [])),
                    declared=tuple(snake(p) for p in own if p not in common),
                )
            )
        for prop_name in set.intersection(*sets) if sets else set():
            if prop_name not in required:
                required.append(prop_name)
        return alternatives

    def _check_struct(
        self,
        other_name: str,
        props: dict[str, Any],
        required: list[str],
        mixins: list[dict[str, Any]] | None,
        exclusive: bool,
    ) -> tuple[str, ...]:
        """The Struct that checks what the schema declares for a raw variant."""
        props = dict(props)
        required = list(required)
        alternatives = self._add_mixins(mixins, props, required)
        if not props:
            return ()
        name = self._claim(f"_{other_name}Fields", f"_{other_name}DeclaredFields")
        self.structs[name] = ir.Struct(
            name=name,
            doc=f"What the schema declares for an `{other_name}` (checked; the"
            " payload is kept raw).",
            fields=self._fields(props, required),
            alternatives=alternatives,
            one_alternative=exclusive,
        )
        return (name,)

    def _raw_object(self, name: str, node: dict[str, Any]) -> None:
        """Declared properties and ``additionalProperties: true`` said on
        purpose (v1 `McpError`: "inner error fields are preserved"): the
        undeclared properties are part of the value, which a Struct would drop.
        Kept raw (a `RawObject`), its declared properties checked."""
        self.others.append(
            ir.Other(
                name=name,
                union="",
                doc=node.get("description", ""),
                tag_field=None,
                known_tags=(),
                checks=self._check_struct(
                    name,
                    dict(node.get("properties", {})),
                    list(node.get("required", [])),
                    alternatives_of(node),
                    one_alternative(node),
                ),
            )
        )

    def _struct(self, name: str, node: dict[str, Any]) -> None:
        props = dict(node.get("properties", {}))
        required = list(node.get("required", []))
        alternatives = self._add_mixins(alternatives_of(node), props, required)
        tag_field, tag = self.tag_of.get(name, (None, None))
        self.structs[name] = ir.Struct(
            name=name,
            doc=node.get("description", ""),
            fields=self._fields(
                {k: v for k, v in props.items() if k != tag_field},
                required,
            ),
            tag_field=tag_field,
            tag=tag,
            alternatives=alternatives,
            one_alternative=one_alternative(node),
            forbidden=forbidden_properties(node),
        )

    def _fields(self, props: dict[str, Any], required: list[str]) -> list[ir.Field]:
        fields = []
        for wire, prop in props.items():
            type_, nullable = self._type(prop)
            attr = snake(wire)
            default = prop.get("default")
            on_null = bool(prop.get("x-deserialize-default-on-null"))
            # A null never survives decoding there: the strict pass refuses
            # it, and the lenient one puts the default in its place.
            nullable = nullable and not on_null
            fields.append(
                ir.Field(
                    attr=attr,
                    wire=wire,
                    explicit_wire=camel_of(attr) != wire,
                    type=type_,
                    required=wire in required,
                    nullable=nullable,
                    doc=prop.get("description", ""),
                    default_on_error=bool(prop.get("x-deserialize-default-on-error")),
                    skip_invalid_items=bool(
                        prop.get("x-deserialize-skip-invalid-items")
                    ),
                    has_default="default" in prop,
                    default=default,
                    default_on_null=on_null,
                    null_default=null_default(prop) if on_null else None,
                )
            )
        return fields

    def _doc_of(self, name: str | None) -> str:
        return str(self.defs.get(name or "", {}).get("description", ""))

    # -- types -----------------------------------------------------------

    def _type(self, node: dict[str, Any]) -> tuple[ir.TypeExpr, bool]:
        """(type, nullable) of a property or item schema."""
        unsupported = UNSUPPORTED & node.keys()
        if unsupported:
            raise SchemaError(
                f"constraints not modelled ({sorted(unsupported)}): {node}"
            )
        ref = single_ref(node)
        if ref is not None:
            return ir.Ref(ref), False
        alts = alternatives_of(node)
        if alts is not None:
            non_null = [a for a in alts if a.get("type") != "null"]
            if len(non_null) != 1:
                raise SchemaError(f"inline union (give it a $defs name): {node}")
            type_, nullable = self._type(non_null[0])
            return type_, nullable or len(non_null) < len(alts)
        json_type = node.get("type")
        nullable = False
        if isinstance(json_type, list):
            nullable = "null" in json_type
            rest = [t for t in json_type if t != "null"]
            if len(rest) != 1:
                raise SchemaError(f"multi-type property: {node}")
            json_type = rest[0]
        if "const" in node:
            return ir.LiteralOf((node["const"],)), nullable
        if "enum" in node:
            return ir.LiteralOf(tuple(node["enum"])), nullable
        if json_type is None:
            return ir.Prim("Any"), False
        if json_type == "string":
            return (
                ir.Prim(
                    "str",
                    min_length=node.get("minLength"),
                    max_length=node.get("maxLength"),
                    pattern=node.get("pattern"),
                ),
                nullable,
            )
        if json_type == "integer":
            return integer_prim(node), nullable
        if json_type == "number":
            return ir.Prim("float", node.get("minimum"), node.get("maximum")), nullable
        if json_type == "boolean":
            return ir.Prim("bool"), nullable
        if json_type == "null":
            return ir.Prim("None"), False
        if json_type == "array":
            item, item_nullable = self._type(node.get("items", {}))
            return (
                ir.ListOf(
                    ir.Nullable(item) if item_nullable else item,
                    min_items=node.get("minItems"),
                    max_items=node.get("maxItems"),
                ),
                nullable,
            )
        if json_type == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                value, value_nullable = self._type(extra)
                return ir.DictOf(
                    ir.Nullable(value) if value_nullable else value
                ), nullable
            return ir.DictOf(ir.Prim("Any")), nullable
        raise SchemaError(f"unknown JSON type {json_type!r}: {node}")

    # -- post passes -----------------------------------------------------
