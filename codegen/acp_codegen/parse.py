"""Schema -> intermediate model.

Reads one spec folder (``schema.json``, ``meta.json``, ``UPSTREAM.json``) and
builds an `ir.Module`. Every rule of the naming and decoding design lives here;
`codegen/README.md` states them in prose.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import keyword
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from . import ir

_REF = "#/$defs/"


class SchemaError(Exception):
    """The schema has a shape this generator does not know how to model."""


def load_module(spec_dir: Path) -> ir.Module:
    """Parse the spec folder `spec_dir` (one protocol version) into an `ir.Module`.

    The types come from ``schema.unstable.json`` when the folder has one: it
    is a superset of ``schema.json`` (the stable types plus the fields,
    variants and methods still in preview), so one class per concept serves
    both surfaces and a stable connection keeps what real peers already send
    (``sessionCapabilities.fork``, ``PromptResponse.usage``). A `$defs` entry
    only the stable schema has is kept too. The method tables come from both
    ``meta.json`` (`ir.Module.methods`, the stable surface) and
    ``meta.unstable.json`` (`ir.Module.unstable_methods`, every method).
    Where the unstable schema changes the shape of a stable type rather than
    adding to it, the unstable shape is used (a superset on the wire) and the
    type is listed in `ir.Module.reshaped`.
    """
    stable_path = spec_dir / "schema.json"
    stable_raw = stable_path.read_bytes()
    stable = json.loads(stable_raw)
    meta = json.loads((spec_dir / "meta.json").read_text())
    unstable_path = spec_dir / "schema.unstable.json"
    unstable_meta_path = spec_dir / "meta.unstable.json"
    if unstable_path.is_file():
        unstable_raw = unstable_path.read_bytes()
        unstable = json.loads(unstable_raw)
        unstable_meta = json.loads(unstable_meta_path.read_text())
        files = [stable_path, unstable_path]
    else:
        unstable_raw, unstable, unstable_meta = stable_raw, stable, meta
        files = [stable_path]
    schema = dict(unstable)
    schema["$defs"] = {**unstable["$defs"]}
    for name, node in stable["$defs"].items():
        schema["$defs"].setdefault(name, node)  # dropped from the preview: keep it
    reshaped = sorted(
        name
        for name, node in stable["$defs"].items()
        if not node.get("x-docs-ignore")
        and not extends(node, unstable["$defs"].get(name, node))
    )
    upstream = read_upstream(spec_dir, int(meta["version"]))
    module = _Parser(schema, meta, unstable_meta).module(
        schema_version=upstream.get("schema_version", "unknown"),
        schema_files=[f"{spec_dir.name}/{f.name}" for f in files],
        schema_sha256=hashlib.sha256(stable_raw + unstable_raw).hexdigest()
        if len(files) > 1
        else hashlib.sha256(stable_raw).hexdigest(),
    )
    module.reshaped = reshaped
    return module


def read_upstream(spec_dir: Path, protocol_version: int) -> dict[str, Any]:
    """``UPSTREAM.json`` of a spec folder, checked against the schema it describes.

    Two sources: a published npm package (``package``, ``version``: what
    ``nox -s bump`` writes; ``schema_version`` only where the package states
    one), or the upstream repository (``repository``, ``commit``,
    ``schema_version``). A ``schema_version`` must belong to the protocol
    version ``meta.json`` declares and be the latest release in the folder's
    ``CHANGELOG.md`` when there is one (upstream ships the two together): a
    schema copied in without updating ``UPSTREAM.json`` fails here, not in a
    user's bug report. The returned ``schema_version`` is what the generated
    module's ``SCHEMA_VERSION`` says: the stated one, else
    ``package@version``.
    """
    path = spec_dir / "UPSTREAM.json"
    if not path.is_file():
        raise SchemaError(
            f"{path}: missing (where the schema was copied from: package and "
            "version, or repository, commit and schema_version)"
        )
    upstream: dict[str, Any] = json.loads(path.read_text())
    version = upstream.get("schema_version")
    if version is None and isinstance(upstream.get("package"), str):
        upstream["schema_version"] = f"{upstream['package']}@{upstream['version']}"
        return upstream
    if not isinstance(version, str):
        raise SchemaError(f"{path}: no schema_version (nor package and version)")
    if version.split(".")[0] != str(protocol_version):
        raise SchemaError(
            f"{path}: schema_version {version} is not protocol version "
            f"{protocol_version} (meta.json)"
        )
    changelog = spec_dir / "CHANGELOG.md"
    if changelog.is_file():
        released = re.search(r"^## \[(\d[^\]]*)\]", changelog.read_text(), re.M)
        if released and released.group(1) != version:
            raise SchemaError(
                f"{path}: schema_version {version}, but CHANGELOG.md's latest "
                f"release is {released.group(1)}: update UPSTREAM.json"
            )
    return upstream


_ANNOTATIONS = frozenset({"title", "description", "examples", "$comment"})
_LENIENT_KEYS = frozenset(
    {
        "x-deserialize-default-on-error",
        "x-deserialize-default-on-null",
        "x-deserialize-skip-invalid-items",
    }
)
#: The value of each JSON type that a receiver's ``Default`` gives (what
#: ``x-deserialize-default-on-null`` reads a ``null`` as when the property
#: states no ``default``): the upstream SDKs' empty list and empty map.
_EMPTY: dict[str, Any] = {"array": [], "object": {}}


def _null_default(prop: dict[str, Any]) -> Any:
    """What ``null`` decodes as in a property marked
    ``x-deserialize-default-on-null``: its ``default``, else the empty value
    of its type (an array's ``[]``, an object's ``{}``)."""
    if "default" in prop:
        return prop["default"]
    types = prop.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    kinds = [t for t in types if t != "null"]
    if len(kinds) != 1 or kinds[0] not in _EMPTY:
        raise SchemaError(
            "x-deserialize-default-on-null without a default on a property "
            f"whose empty value is not known (an array or an object): {prop}"
        )
    return _EMPTY[kinds[0]]


def _keywords(node: dict[str, Any]) -> dict[str, Any]:
    """`node` without its annotations (JSON Schema keywords that constrain
    nothing): ``{"title": "Other"}`` is ``{}``, any JSON value."""
    return {k: v for k, v in node.items() if k not in _ANNOTATIONS}


def _forbidden(node: dict[str, Any]) -> tuple[str, ...]:
    """The properties an object schema forbids: ``"not": {"type": "object",
    "required": [...]}`` (any other ``not`` of an object is not modelled)."""
    negated = node.get("not")
    if negated is None:
        return ()
    if set(negated) - {"type", "required"} or negated.get("type", "object") != (
        "object"
    ):
        raise SchemaError(f"`not` not modelled: {negated}")
    return tuple(negated.get("required", []))


def extends(stable: Any, unstable: Any) -> bool:
    """Whether the unstable schema node only adds to the stable one.

    Added optional properties, added union variants (and the `other`
    branch's ``not`` list growing with them), added enum values, changed
    descriptions and defaults: every stable value keeps its Python shape.
    Anything else (a property removed or retyped, a new requirement, an
    object turned into a union) reshapes the type.
    """
    if stable == unstable:
        return True
    if not (isinstance(stable, dict) and isinstance(unstable, dict)):
        return False
    for key in stable.keys() | unstable.keys():
        if key in ("description", "default", "title", "not"):
            continue
        if key not in stable or key not in unstable:
            return False
        old, new = stable[key], unstable[key]
        if key == "properties":
            if any(p not in new or not extends(v, new[p]) for p, v in old.items()):
                return False
        elif key == "required":
            if not set(new) <= set(old):
                return False
        elif key in ("anyOf", "oneOf"):
            if not all(any(extends(a, b) for b in new) for a in old):
                return False
        elif key == "enum":
            if not set(old) <= set(new):
                return False
        elif not extends(old, new):
            return False
    return True


# --- names ------------------------------------------------------------------


def pascal(text: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk``; ``value_id`` -> ``ValueId``."""
    words = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(word[:1].upper() + word[1:] for word in words if word)


def snake(wire: str) -> str:
    """``toolCallId`` -> ``tool_call_id``; ``_meta`` -> ``meta``; keywords get ``_``."""
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire.lstrip("_")).lower()
    name = re.sub(r"[^0-9a-z_]", "_", name)
    if keyword.iskeyword(name) or name[:1].isdigit():
        name += "_"
    return name


def camel_of(attr: str) -> str:
    """The wire name msgspec's ``rename="camel"`` gives attribute `attr`."""
    probe = msgspec.defstruct("Probe", [(attr, int)], rename="camel")
    return msgspec.structs.fields(probe)[0].encode_name


def upper_snake(text: str) -> str:
    return snake(pascal(text)).upper().rstrip("_")


def _ref_name(ref: str) -> str:
    if not ref.startswith(_REF):
        raise SchemaError(f"only local $defs references are supported: {ref}")
    return ref[len(_REF) :]


def _alternatives(node: dict[str, Any]) -> list[dict[str, Any]] | None:
    alts = node.get("anyOf", node.get("oneOf"))
    return list(alts) if alts is not None else None


def _single_ref(node: dict[str, Any]) -> str | None:
    """The `$defs` name of ``{"allOf": [{"$ref": ...}]}`` or ``{"$ref": ...}``."""
    if "$ref" in node:
        return _ref_name(node["$ref"])
    all_of = node.get("allOf")
    if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
        return _ref_name(all_of[0]["$ref"])
    return None


def _walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield _ref_name(value)
            else:
                yield from _walk_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_refs(item)


#: Integer `format`s of the schema and their ranges: a peer in a typed language
#: cannot send a value outside them, so neither do we accept one.
INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    f"{sign}int{bits}": (
        (0, 2**bits - 1) if sign else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    for sign in ("", "u")
    for bits in (8, 16, 32, 64)
}


def _integer(node: dict[str, Any]) -> ir.Prim:
    """``int`` with the bounds of `minimum`/`maximum` and of an integer `format`.

    Bounds that are exactly the format's give the format's named alias
    (``UInt32``); narrower ones are spelled out.
    """
    low, high = node.get("minimum"), node.get("maximum")
    fmt = node.get("format")
    if fmt is None:
        return ir.Prim("int", low, high)
    if fmt not in INTEGER_FORMATS:
        raise SchemaError(f"unknown integer format {fmt!r}: {node}")
    fmt_low, fmt_high = INTEGER_FORMATS[fmt]
    low = fmt_low if low is None else max(low, fmt_low)
    high = fmt_high if high is None else min(high, fmt_high)
    if (low, high) == (fmt_low, fmt_high):
        return ir.Prim("int", low, high, format=fmt)
    return ir.Prim("int", low, high)


#: Validation keywords the generated types do not express: a schema that starts
#: using one fails generation rather than decoding more than it allows.
_UNSUPPORTED = frozenset(
    {
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
        "contains",
        # what a property or an untagged variant may say that `_type` does
        # not read: refused, never read as "any value"
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "prefixItems",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)


# --- variants ---------------------------------------------------------------


class _Variant:
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
        self.payload = _single_ref(node)
        if self.payload is None and node.get("allOf"):
            raise SchemaError(f"variant with a composite allOf: {node}")
        self.mixins = _alternatives(node)

    @property
    def is_object(self) -> bool:
        return (
            self.node.get("type") == "object"
            or self.payload is not None
            or "properties" in self.node
        )


def _other_tag_field(other: _Variant, known: list[_Variant]) -> str:
    fields = {v.tag_field for v in known if v.tag_field}
    if len(fields) == 1:
        return fields.pop()
    props = other.node.get("properties", {})
    if len(props) >= 1:
        return str(next(iter(props)))
    raise SchemaError(f"cannot tell the tag field of an `other` variant: {other.node}")


def _other_known_tags(
    other: _Variant, tag_field: str, known: list[_Variant]
) -> tuple[str, ...]:
    """Known tags from the `other` branch's ``not`` clause (and the known variants)."""
    tags: list[str] = []
    negated = other.node.get("not", {})
    for branch in _alternatives(negated) or []:
        const = branch.get("properties", {}).get(tag_field, {}).get("const")
        if isinstance(const, str) and const not in tags:
            tags.append(const)
    for variant in known:
        if variant.tag is not None and variant.tag not in tags:
            tags.append(variant.tag)
    return tuple(tags)


# --- the parser -------------------------------------------------------------


class _Parser:
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
        for name in _walk_refs(
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
        self._plan_wires()
        self._mark_shape_resolution()
        return ir.Module(
            version=int(self.meta["version"]),
            schema_version=schema_version,
            schema_files=schema_files,
            schema_sha256=schema_sha256,
            doc=self.schema.get("title", ""),
            structs=self._ordered_structs(),
            aliases=self.aliases,
            enums=self.enums,
            constants=self.constants,
            others=self.others,
            unions=self.unions,
            methods=self._methods(self.meta),
            unstable_methods=self._preview(self._methods(self.unstable_meta)),
            integer_formats=self._integer_formats(),
        )

    # -- classification --------------------------------------------------

    def _is_object_union(self, node: dict[str, Any]) -> bool:
        alts = _alternatives(node)
        if alts is None:
            return False
        return any(_Variant(a).is_object for a in alts if a.get("type") != "null")

    def _define(self, name: str, node: dict[str, Any]) -> None:
        alts = _alternatives(node)
        doc = node.get("description", "")
        if "properties" in node or (node.get("type") == "object" and alts is None):
            if alts is not None and any(_Variant(a).tag for a in alts):
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
                    _integer(alt) if alt["type"] == "integer" else ir.Prim("str")
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
        for variant in map(_Variant, _alternatives(node) or []):
            if (
                variant.tag is not None
                and variant.payload is not None
                and not variant.extra_props
                and not variant.mixins
                and self.ref_counts.get(variant.payload, 0) == 1
                and "properties" in self.defs[variant.payload]
                and not _alternatives(self.defs[variant.payload])
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
            _Variant(a) for a in _alternatives(node) or [] if a.get("type") != "null"
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
                    forbidden=_forbidden(variant.node),
                )
                members.append(ir.Ref(cls))
            elif variant.payload is None and not variant.mixins:
                # No properties: the variant is what its keywords say, as a
                # property would be. Only a title (v2 `ErrorData`'s `Other`)
                # constrains nothing: any JSON value.
                type_, nullable = self._type(_keywords(variant.node))
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
            ),
        )

    def _is_union_def(self, name: str) -> bool:
        """Whether `name` becomes a union: alternatives without properties,
        or an object whose alternatives carry tags (`_object_union`)."""
        node = self.defs[name]
        alts = _alternatives(node)
        if alts is None:
            return False
        return "properties" not in node or any(_Variant(a).tag for a in alts)

    def _finish_union(
        self,
        name: str,
        doc: str,
        known: list[_Variant],
        other: _Variant | None,
        members: list[ir.TypeExpr],
        raw_variants: list[str] | None = None,
        *,
        other_declares: tuple[
            dict[str, Any], list[str], list[dict[str, Any]] | None
        ] = ({}, [], None),
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
            other_tag_field = _other_tag_field(other, known)
            if not tagged:  # v2 AvailableCommandInput: `unstructured` or other
                shape_tag_field = other_tag_field
            other_name = self._claim(name + "Other", name + "OtherVariant")
            props, required, mixins = other_declares
            self.others.append(
                ir.Other(
                    name=other_name,
                    union=name,
                    doc=other.doc,
                    tag_field=other_tag_field,
                    known_tags=_other_known_tags(other, other_tag_field, known),
                    checks=self._check_struct(
                        other_name,
                        {k: v for k, v in props.items() if k != other_tag_field},
                        [r for r in required if r != other_tag_field],
                        mixins,
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
        variants = [_Variant(a) for a in _alternatives(node) or []]
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
                    k: v for k, v in props.get(key, {}).items() if k in _LENIENT_KEYS
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
            ref = _single_ref(mixin)
            target = self.defs[ref] if ref else mixin
            if _Variant(target).tag is not None:
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
                    _alternatives(node),
                ),
            )
        )

    def _struct(self, name: str, node: dict[str, Any]) -> None:
        props = dict(node.get("properties", {}))
        required = list(node.get("required", []))
        alternatives = self._add_mixins(_alternatives(node), props, required)
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
            forbidden=_forbidden(node),
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
                    null_default=_null_default(prop) if on_null else None,
                )
            )
        return fields

    def _doc_of(self, name: str | None) -> str:
        return str(self.defs.get(name or "", {}).get("description", ""))

    # -- types -----------------------------------------------------------

    def _type(self, node: dict[str, Any]) -> tuple[ir.TypeExpr, bool]:
        """(type, nullable) of a property or item schema."""
        unsupported = _UNSUPPORTED & node.keys()
        if unsupported:
            raise SchemaError(
                f"constraints not modelled ({sorted(unsupported)}): {node}"
            )
        ref = _single_ref(node)
        if ref is not None:
            return ir.Ref(ref), False
        alts = _alternatives(node)
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
            return _integer(node), nullable
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

    def _integer_formats(self) -> list[ir.IntegerFormat]:
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

        for struct in self.structs.values():
            for field in struct.fields:
                visit(field.type)
        for alias in self.aliases:
            visit(alias.type)
        for union in self.unions:
            for variant in union.variants:
                visit(variant)
        for enum in self.enums:
            if enum.open_type is not None:
                visit(enum.open_type)
        return [
            ir.IntegerFormat(fmt, *INTEGER_FORMATS[fmt])
            for fmt in INTEGER_FORMATS
            if fmt in used
        ]

    def _plan_wires(self) -> None:
        """A wire Struct for each by-shape union of Structs (`ir.Union.wire`)."""

        def all_fields(struct: ir.Struct) -> list[ir.Field]:
            base = self.structs.get(struct.base) if struct.base else None
            return [*(all_fields(base) if base else []), *struct.fields]

        for union in self.unions:
            if union.strategy != "shape":
                continue
            variants = [
                self.structs.get(v.name) if isinstance(v, ir.Ref) else None
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
            name = self._claim(f"_{union.name}Wire", f"_{union.name}WireFields")
            self.structs[name] = ir.Struct(
                name=name,
                doc=f"Every field of the `{union.name}` variants, all optional: decoded"
                " in one pass, then the variant is picked and built from it.",
                fields=fields,
            )
            union.wire = name

    def _mark_shape_resolution(self) -> None:
        shape = {u.name for u in self.unions if u.strategy == "shape"}
        alias_refs = {a.name: a.type.refs() for a in self.aliases}

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
            base = self.structs.get(struct.base) if struct.base else None
            return [*(all_fields(base) if base else []), *struct.fields]

        def is_uint64(type_: ir.TypeExpr) -> bool:
            while isinstance(type_, ir.Nullable):
                type_ = type_.inner
            if isinstance(type_, ir.ListOf | ir.DictOf) and "uint64" in repr(type_):
                raise SchemaError(f"uint64 inside a container: {type_}")
            return isinstance(type_, ir.Prim) and type_.format == "uint64"

        def alternatives(struct: ir.Struct) -> list[ir.Alternative]:
            base = self.structs.get(struct.base) if struct.base else None
            return struct.alternatives or (alternatives(base) if base else [])

        for struct in self.structs.values():
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

    def _ordered_structs(self) -> list[ir.Struct]:
        """Schema order, except that a base class comes before its subclasses."""
        ordered: list[ir.Struct] = []
        placed: set[str] = set()

        def place(struct: ir.Struct) -> None:
            if struct.name in placed:
                return
            if struct.base is not None:
                place(self.structs[struct.base])
            placed.add(struct.name)
            ordered.append(struct)

        for struct in self.structs.values():
            place(struct)
        return ordered

    def _preview(self, methods: list[ir.Method]) -> list[ir.Method]:
        """The unstable surface's table: every method, those missing from the
        stable one marked ``preview``; a stable method the unstable meta lost
        stays (the unstable surface is a superset)."""
        stable = {(m.side, m.wire): m for m in self._methods(self.meta)}
        listed = set()
        for method in methods:
            listed.add((method.side, method.wire))
            method.preview = (method.side, method.wire) not in stable
        return methods + [m for key, m in stable.items() if key not in listed]

    def _methods(self, meta: dict[str, Any]) -> list[ir.Method]:
        kinds: dict[str, str] = {}
        # The JSON-RPC envelopes (`AgentRequest`, `ProxyNotification`, ...:
        # marked x-docs-ignore) say which types are requests, notifications
        # and responses.
        for envelope, node in self.defs.items():
            kind = next(
                (
                    k.lower()
                    for k in ("Request", "Notification", "Response")
                    if envelope.endswith(k)
                ),
                None,
            )
            if node.get("x-docs-ignore") and kind is not None:
                for ref in _walk_refs(node):
                    kinds.setdefault(ref, kind)
        by_method: dict[tuple[str, str], dict[str, str]] = {}
        for name, node in self.defs.items():
            if "x-method" in node:
                sides = (
                    ("agent", "client")
                    if node["x-side"] == "both"
                    else (node["x-side"],)
                )
                for side in sides:
                    found = by_method.setdefault((side, node["x-method"]), {})
                    found[kinds.get(name, "request")] = name
        methods = []
        for table, side in (
            ("agentMethods", "agent"),
            ("clientMethods", "client"),
            ("protocolMethods", "protocol"),
            ("proxyMethods", "proxy"),  # a proxy chain's conductor and proxies
        ):
            for handler, wire in meta.get(table, {}).items():
                entry = by_method.get((side, wire))
                if not entry:
                    raise SchemaError(
                        f"meta.json names {wire!r} but no type has x-method for it"
                    )
                # A method may be both a request and a notification (`mcp/message`
                # in the unstable surface): the request is the method, the
                # notification form rides along.
                params = entry.get("request") or entry.get("notification")
                if params is None:
                    raise SchemaError(f"no params type for {wire!r}")
                is_request = "request" in entry
                methods.append(
                    ir.Method(
                        wire=wire,
                        handler=handler,
                        side=side,
                        params=params,
                        result=entry.get("response") if is_request else None,
                        doc=self._doc_of(params),
                        notification=entry.get("notification") if is_request else None,
                    )
                )
        return methods
