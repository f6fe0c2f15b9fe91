"""The intermediate model: what the schema means, before any template sees it.

The parser (`load.py`, `parse.py`) turns one schema folder into a `Module`; the renderer
(`render.py`) hands that `Module` to the Jinja2 templates. Every decision about
names, types, tags and lenient rules is made here, in Python; templates only
lay the result out.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .literal import py_literal

#: Names that generated annotations use and that a field of the same name would
#: shadow inside its class body.
SHADOWABLE_BUILTINS = frozenset({"list", "dict", "str", "int", "float", "bool"})


def format_alias(fmt: str) -> str:
    """The alias of an integer format: ``uint32`` -> ``UInt32``, ``int64`` -> ``Int64``."""
    return "UInt" + fmt[4:] if fmt.startswith("uint") else "Int" + fmt[3:]


@dataclasses.dataclass(frozen=True)
class IntegerFormat:
    """An integer `format` of the schema (``uint32``) and its range."""

    format: str
    minimum: int
    maximum: int

    @property
    def alias(self) -> str:
        return format_alias(self.format)


# --- type expressions -------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Prim:
    """A builtin scalar or `Any`: ``str``, ``int``, ``float``, ``bool``, ``Any``."""

    name: str
    minimum: int | float | None = None
    maximum: int | float | None = None
    #: An integer `format` whose range the bounds are exactly: rendered as
    #: that format's alias (``UInt32``).
    format: str | None = None
    #: String constraints (``minLength``, ``maxLength``, ``pattern``).
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None

    def render(self, shadowed: frozenset[str]) -> str:
        if self.format is not None:
            return format_alias(self.format)
        text = f"builtins.{self.name}" if self.name in shadowed else self.name
        bounds = []
        for keyword, value in (
            ("ge", self.minimum),
            ("le", self.maximum),
            ("min_length", self.min_length),
            ("max_length", self.max_length),
            ("pattern", self.pattern),
        ):
            if value is not None:
                bounds.append(f"{keyword}={py_literal(value)}")
        if not bounds:
            return text
        return f"Annotated[{text}, msgspec.Meta({', '.join(bounds)})]"

    def refs(self) -> set[str]:
        return set()


@dataclasses.dataclass(frozen=True)
class Ref:
    """A named type of this module (a Struct or a type alias)."""

    name: str

    def render(self, shadowed: frozenset[str]) -> str:
        return self.name

    def refs(self) -> set[str]:
        return {self.name}


@dataclasses.dataclass(frozen=True)
class ListOf:
    item: TypeExpr
    min_items: int | None = None
    max_items: int | None = None

    def render(self, shadowed: frozenset[str]) -> str:
        name = "builtins.list" if "list" in shadowed else "list"
        text = f"{name}[{self.item.render(shadowed)}]"
        bounds = [
            f"{keyword}={py_literal(value)}"
            for keyword, value in (
                ("min_length", self.min_items),
                ("max_length", self.max_items),
            )
            if value is not None
        ]
        if not bounds:
            return text
        return f"Annotated[{text}, msgspec.Meta({', '.join(bounds)})]"

    def refs(self) -> set[str]:
        return self.item.refs()


@dataclasses.dataclass(frozen=True)
class DictOf:
    value: TypeExpr

    def render(self, shadowed: frozenset[str]) -> str:
        name = "builtins.dict" if "dict" in shadowed else "dict"
        key = "builtins.str" if "str" in shadowed else "str"
        return f"{name}[{key}, {self.value.render(shadowed)}]"

    def refs(self) -> set[str]:
        return self.value.refs()


@dataclasses.dataclass(frozen=True)
class LiteralOf:
    values: tuple[str | int, ...]

    def render(self, shadowed: frozenset[str]) -> str:
        return f"Literal[{', '.join(py_literal(v) for v in self.values)}]"

    def refs(self) -> set[str]:
        return set()


@dataclasses.dataclass(frozen=True)
class Nullable:
    inner: TypeExpr

    def render(self, shadowed: frozenset[str]) -> str:
        return f"{self.inner.render(shadowed)} | None"

    def refs(self) -> set[str]:
        return self.inner.refs()


TypeExpr = Prim | Ref | ListOf | DictOf | LiteralOf | Nullable


# --- definitions ------------------------------------------------------------


@dataclasses.dataclass
class Field:
    """One property of an object type."""

    attr: str  # Python attribute name (snake_case)
    wire: str  # JSON property name
    explicit_wire: bool  # `rename="camel"` does not give `wire` back from `attr`
    type: TypeExpr
    required: bool
    nullable: bool
    doc: str
    default_on_error: bool = False
    skip_invalid_items: bool = False
    has_default: bool = False
    default: Any = None  # the schema's default (JSON value), when has_default
    #: ``x-deserialize-default-on-null``: a ``null`` decodes as `null_default`
    default_on_null: bool = False
    null_default: Any = None  # the schema's default, else the type's empty value

    @property
    def has_rule(self) -> bool:
        return self.default_on_error or self.skip_invalid_items or self.default_on_null


@dataclasses.dataclass(frozen=True)
class Alternative:
    """One untagged alternative of an object: the attributes it requires, and
    those it declares that the object itself does not (which may be dropped
    when invalid, if the value fits an alternative that does not declare them)."""

    required: tuple[str, ...]
    declared: tuple[str, ...]


@dataclasses.dataclass
class Struct:
    """A `msgspec.Struct` class: a `$defs` object, or one variant of a union."""

    name: str
    doc: str
    fields: list[Field]
    base: str | None = None  # a payload Struct this variant extends
    tag_field: str | None = None
    tag: str | None = None
    #: Set by the parser when a field's type is a union msgspec cannot decode
    #: natively: the class then resolves it in `__post_init__`.
    resolves_shapes: bool = False
    #: Attributes (own or inherited) that hold by-shape unions only inside a
    #: list or dict: when all are empty, absent or null there is nothing to
    #: resolve and `__post_init__` returns at once. Empty: always resolve.
    shape_guard: tuple[str, ...] = ()
    #: Attributes (own or inherited) of format ``uint64``, whose upper bound
    #: msgspec cannot express (`msgspec.Meta` bounds fit in an int64): the
    #: class checks it in `__post_init__`. Empty when a base class does.
    uint64_checks: tuple[str, ...] = ()
    #: Untagged alternatives flattened into this class (elicitation scopes):
    #: a value must hold the required fields of one of them, and a field only
    #: some of them declare is dropped if invalid where the value fits another.
    alternatives: list[Alternative] = dataclasses.field(default_factory=list)
    #: `__post_init__` checks the alternatives (own or inherited).
    checks_alternatives: bool = False
    #: The alternatives are a ``oneOf``: a value fitting two of them (their
    #: required fields all present) is not one of this class.
    one_alternative: bool = False
    #: Properties the schema forbids (``"not": {"required": [...]}``: v2
    #: ``UnstructuredCommandInput`` is no such input once ``type`` is there).
    forbidden: tuple[str, ...] = ()


@dataclasses.dataclass
class Alias:
    """A plain alias: ``SessionId = str``."""

    name: str
    doc: str
    type: TypeExpr


@dataclasses.dataclass
class EnumValue:
    value: str | int
    doc: str
    title: str | None = None


@dataclasses.dataclass
class Enum:
    """A string or integer enumeration; `open` ones accept any other value too."""

    name: str
    doc: str
    kind: str  # "str" or "int"
    values: list[EnumValue]
    #: The type of the other values an open enumeration accepts, else None.
    open_type: Prim | None

    @property
    def open(self) -> bool:
        return self.open_type is not None


@dataclasses.dataclass
class Constant:
    name: str
    value: int | str
    doc: str


@dataclasses.dataclass
class Other:
    """The `other` variant of an open union: kept as its raw JSON object. With
    no `tag_field`: an object of its own kept raw (a `RawObject`: declared
    properties and ``additionalProperties: true``, v1 `McpError`)."""

    name: str
    union: str
    doc: str
    tag_field: str | None
    known_tags: tuple[str, ...]
    #: Set for a known variant kept raw: its payload is itself a union, which a
    #: single msgspec tag cannot express (a later draft's `state_update`).
    fixed_tag: str | None = None
    #: Types a raw value must fit (one of them): what the schema declares for
    #: it, checked while the payload is kept raw (Structs; for a known variant
    #: kept raw, its payload's union). Empty: nothing declared.
    checks: tuple[str, ...] = ()
    #: Not in the schema: the union has an untagged default variant and no
    #: `other` branch, and a value with an unknown tag is kept raw here
    #: (checked as the default variant) rather than read as the default.
    implicit: bool = False


@dataclasses.dataclass
class Union:
    """A union of variants.

    `strategy` says how msgspec decodes it:
    - ``"tagged"``: a native msgspec tagged union (one pass, in C);
    - ``"open"``: the known variants are a native tagged union; a value with
      another tag is kept as the `other` variant by the lenient path;
    - ``"shape"``: no single tag tells the variants apart; the value is decoded
      untyped and the first variant (in schema order) that accepts it wins;
    - ``"single"``: one untagged variant: that type itself;
    - ``"scalar"``: a union of scalars (``RequestId``), native.
    """

    name: str
    doc: str
    strategy: str
    variants: list[TypeExpr]  # schema order, the `other` variant excluded
    other: str | None = None
    tag_field: str | None = None
    raw_variants: list[str] = dataclasses.field(default_factory=list)
    #: For a ``shape`` union with tagged variants: their tag property. A value
    #: with a string there is never read as an untagged variant.
    shape_tag_field: str | None = None
    #: For a ``shape`` union of Structs whose fields agree: a Struct with every
    #: variant's fields, all optional, that msgspec decodes in one pass (in C)
    #: before the variant is picked and built from it.
    wire: str | None = None

    def refs(self) -> set[str]:
        found: set[str] = set()
        for variant in self.variants:
            found |= variant.refs()
        if self.other:
            found.add(self.other)
        if self.wire:
            found.add(self.wire)
        found.update(self.raw_variants)
        return found


@dataclasses.dataclass
class Method:
    wire: str
    handler: str
    side: str  # "agent", "client", "protocol" or "proxy": who handles it
    params: str
    result: str | None  # None: a notification
    doc: str
    #: The params type of the same method sent as a notification, when the
    #: schema defines both forms.
    notification: str | None = None
    #: Only in the unstable surface's table.
    preview: bool = False


@dataclasses.dataclass
class Module:
    version: int
    schema_version: str
    schema_files: list[str]  # spec-relative: the stable schema, then the unstable
    schema_sha256: str
    doc: str
    structs: list[Struct]
    aliases: list[Alias]
    enums: list[Enum]
    constants: list[Constant]
    others: list[Other]
    unions: list[Union]
    #: The stable surface's methods (``meta.json``).
    methods: list[Method]
    #: Every method of the unstable surface (``meta.unstable.json``), the
    #: stable ones included.
    unstable_methods: list[Method] = dataclasses.field(default_factory=list)
    #: Stable `$defs` whose shape the unstable schema changed (the unstable
    #: shape is generated).
    reshaped: list[str] = dataclasses.field(default_factory=list)
    integer_formats: list[IntegerFormat] = dataclasses.field(default_factory=list)

    def struct(self, name: str) -> Struct:
        for struct in self.structs:
            if struct.name == name:
                return struct
        raise KeyError(name)
