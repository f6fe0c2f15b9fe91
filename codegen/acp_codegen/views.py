"""Intermediate model -> view objects: every line a template prints, computed
as a plain string or list (`StructView`-like records per struct, union,
handler, method table), wrapped as ``ruff format`` writes it. `render.py`
hands them to the templates, which only lay them out.
"""

from __future__ import annotations

import dataclasses
import json
import re

from . import ir
from .literal import py_literal, py_str

_LINE = 88


def natural_order(text: str) -> list[str | int]:
    """A sort key that orders ``V2`` before ``V10``."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def docstring(text: str, indent: int) -> str:
    """A docstring literal for `text`, formatted as ruff format leaves it."""
    pad = " " * indent
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = [line.rstrip() for line in body.splitlines()] or [""]
    if body.endswith('"'):
        lines[-1] += " "
    if len(lines) == 1:
        return f'{pad}"""{lines[0]}"""'
    out = [f'{pad}"""{lines[0]}']
    out += [f"{pad}{line}" if line else "" for line in lines[1:]]
    out.append(f'{pad}"""')
    return "\n".join(out)


def first_paragraph(text: str) -> str:
    return text.strip().split("\n\n")[0].strip()


@dataclasses.dataclass
class _FieldView:
    attr: str
    annotation: str
    default: str | None
    doc: str

    @property
    def lines(self) -> list[str]:
        """The declaration, wrapped the way ruff format wraps it."""
        tail = f" = {self.default}" if self.default else ""
        line = f"    {self.attr}: {self.annotation}{tail}"
        if len(line) <= _LINE:
            return [line]
        return [f"    {self.attr}: (", f"        {self.annotation}", f"    ){tail}"]


@dataclasses.dataclass
class _StructView:
    """One generated class. `uint64_lines` declare its ``uint64`` attributes
    (read by ``check_uint64`` and by the lenient path)."""

    name: str
    bases: str
    doc: str
    fields: list[_FieldView]
    resolves_shapes: bool
    shape_guard: tuple[str, ...]
    uint64_checks: tuple[str, ...]
    alternatives: list[ir.Alternative]
    checks_alternatives: bool
    one_alternative: bool
    forbidden: tuple[str, ...] = ()

    @property
    def class_lines(self) -> list[str]:
        """Class attributes read by the checks of ``__post_init__`` and by the
        lenient path: ``_uint64``, ``_alternatives``; ``_forbidden``, read by
        the codec (properties whose presence makes a value not this type)."""
        lines = []
        if self.forbidden:
            lines.append(f"    _forbidden = {_tuple_text(self.forbidden)}")
        if self.uint64_checks:
            names = [py_str(attr) for attr in self.uint64_checks]
            if len(names) == 1:
                names[0] += ","
            line = f"    _uint64 = ({', '.join(names)})"
            if len(line) <= _LINE:
                lines.append(line)
            else:
                lines += ["    _uint64 = (", *(f"        {n}," for n in names), "    )"]
        if self.alternatives:
            lines.append(
                "    # (required, declared only here) of each untagged alternative"
            )
            lines.append("    _alternatives = (")
            for alt in self.alternatives:
                parts = [_tuple_text(alt.required), _tuple_text(alt.declared)]
                lines.append(f"        ({', '.join(parts)}),")
            lines.append("    )")
            if self.one_alternative:
                lines.append("    # a oneOf: a value fitting two of them is none")
                lines.append("    _one_alternative = True")
        return lines

    @property
    def has_post_init(self) -> bool:
        return (
            self.resolves_shapes or bool(self.uint64_checks) or self.checks_alternatives
        )

    @property
    def post_init(self) -> list[str]:
        """The body of ``__post_init__``: check the ``uint64`` upper bounds, and
        resolve the by-shape unions, skipping the call when every container
        holding them is empty (a common case: ``authMethods: []``)."""
        lines = []
        if self.uint64_checks:
            lines.append("        check_uint64(self)")
        if self.checks_alternatives:
            lines.append("        check_alternatives(self)")
        if not self.resolves_shapes:
            return lines
        call = "_CODEC.resolve_shapes(self)"
        guard = " or ".join(f"self.{attr}" for attr in self.shape_guard)
        line = f"        if {guard}:"
        if not guard or len(line) > _LINE:
            return [*lines, f"        {call}"]
        return [*lines, line, f"            {call}"]

    @property
    def header(self) -> list[str]:
        line = f"class {self.name}({self.bases}):"
        if len(line) <= _LINE:
            return [line]
        return [f"class {self.name}(", f"    {self.bases}", "):"]


@dataclasses.dataclass
class _AliasView:
    name: str
    doc: str
    static: list[str]  # lines of the TYPE_CHECKING alias
    runtime: list[str] | None  # lines of the runtime alias, when it differs


@dataclasses.dataclass
class OtherView:
    name: str
    doc: str
    tag_field: str | None
    known_tags: list[str]
    fixed_tag: str | None
    checks: tuple[str, ...]

    @property
    def checks_line(self) -> str | None:
        if not self.checks:
            return None
        return f"checks = {_tuple_text(self.checks).replace(chr(34), '')}"


@dataclasses.dataclass
class _RuleView:
    struct: str
    lines: list[str]  # the entry of the struct in the rule table, at indent 8


#: ``_rules`` keyword of the fields with one of the shared rules.
_SHARED_RULES = {
    (True, False): "default",
    (True, True): "_default_skip",
    (False, True): "_skip",
}


def rule_view(struct: ir.Struct) -> _RuleView | None:
    """``Struct: _rules("attr attr", _default_skip="attr", attr=FieldRule(...)),``
    wrapped as ruff format wraps it."""
    shared: dict[str, list[str]] = {}
    spelled: list[tuple[str, list[str]]] = []  # attr -> its FieldRule(...) parts
    for field in struct.fields:
        if not field.has_rule:
            continue
        key = (field.default_on_error, field.skip_invalid_items)
        if not field.has_default and not field.default_on_null:
            shared.setdefault(_SHARED_RULES[key], []).append(field.attr)
            continue
        parts = []
        if field.default_on_error:
            parts.append("default_on_error=True")
        if field.skip_invalid_items:
            parts.append("skip_invalid_items=True")
        # JSON text: one token however long, decoded only when used.
        if field.has_default:
            text = json.dumps(field.default, separators=(",", ":"))
            parts.append(f"default_json={py_literal(text)}")
        if field.default_on_null:
            text = json.dumps(field.null_default, separators=(",", ":"))
            parts.append(f"null_json={py_literal(text)}")
        spelled.append((field.attr, parts))
    if not shared and not spelled:
        return None
    args: list[list[str]] = []  # each argument's lines, at indent 0
    for keyword in ("default", "_default_skip", "_skip"):
        if keyword in shared:
            value = py_literal(" ".join(shared[keyword]))
            args.append(
                [value if keyword == "default" and not args else f"{keyword}={value}"]
            )
    for attr, parts in spelled:
        one_line = f"{attr}=FieldRule({', '.join(parts)})"
        if len(one_line) + 13 <= _LINE:  # at indent 12, with a trailing comma
            args.append([one_line])
        else:
            args.append([f"{attr}=FieldRule(", *(f"    {p}," for p in parts), ")"])
    head = f"{struct.name}: _rules("
    if all(len(a) == 1 for a in args):
        flat = ", ".join(a[0] for a in args)
        if len(head) + len(flat) + 2 + 8 <= _LINE:  # "),", at indent 8
            return _RuleView(struct.name, [f"{head}{flat}),"])
        if len(flat) + 12 <= _LINE:
            return _RuleView(struct.name, [head, f"    {flat}", "),"])
    lines = [head]
    for arg in args:
        lines += [f"    {line}" for line in arg[:-1]]
        lines.append(f"    {arg[-1]},")
    lines.append("),")
    return _RuleView(struct.name, lines)


_META_WIRE = "_meta"


def _beyond(doc: str, shared: str) -> str:
    """``doc`` without the paragraphs of ``shared``, when it has the first
    (the text; a field may link another docs page after it)."""
    paragraphs = [p.strip() for p in doc.strip().split("\n\n")]
    common = [p.strip() for p in shared.split("\n\n")]
    if common[0] not in paragraphs:
        return doc
    return "\n\n".join(p for p in paragraphs if p not in common)


def struct_doc(meta_doc: str) -> str:
    doc = (
        "Base of every generated Struct: keyword-only, camelCase on the wire.\n\n"
        "Its repr leaves out absent fields (UNSET), so a decoded message prints\n"
        "what was sent. Instances are not tracked by the cyclic garbage collector\n"
        "(msgspec's ``gc=False``: cheaper to create and to free): they hold plain\n"
        "data, and a reference cycle built through one would never be freed."
    )
    if meta_doc:
        doc += (
            f"\n\n``meta`` (``_meta`` on the wire), on almost every type:\n{meta_doc}"
        )
    return doc


def common_meta_doc(module: ir.Module) -> str:
    """The ``_meta`` description most types share: written once, on `_Struct`."""
    docs = [
        f.doc.strip() for s in module.structs for f in s.fields if f.wire == _META_WIRE
    ]
    return max(set(docs), key=docs.count) if docs else ""


@dataclasses.dataclass
class HandlerView:
    handler: str
    params: str
    result: str
    doc: str

    @property
    def signature(self) -> list[str]:
        params = f"self, params: {self.params}"
        line = f"    async def {self.handler}({params}) -> {self.result}:"
        if len(line) <= _LINE:
            return [line]
        return [
            f"    async def {self.handler}(",
            f"        self, params: {self.params}",
            f"    ) -> {self.result}:",
        ]


@dataclasses.dataclass
class TableView:
    name: str  # AGENT_METHODS, AGENT_METHODS_UNSTABLE, ...
    methods: list[ir.Method]


def handler_view(method: ir.Method) -> HandlerView:
    doc = first_paragraph(method.doc) or method.wire
    if method.notification is None:
        return HandlerView(method.handler, method.params, method.result or "None", doc)
    # Also sent as a notification (no id): the handler then gets that form's
    # params and its return value is not sent.
    return HandlerView(
        handler=method.handler,
        params=f"{method.params} | {method.notification}",
        result=f"{method.result} | None",
        doc=f"{doc}\n\nSent without an id (as a notification), ``params`` is a\n"
        f"``{method.notification}`` and the return value is not sent.",
    )


def _field_view(
    field: ir.Field, shadowed: frozenset[str], meta_doc: str = ""
) -> _FieldView:
    annotation = field.type.render(shadowed)
    default = None
    if not field.required:
        # a property that can only be null (`{"type": "null"}`): None last
        annotation = (
            "UnsetType | None" if annotation == "None" else annotation + " | UnsetType"
        )
        default = "UNSET"
    if field.nullable and not isinstance(field.type, ir.Nullable):
        if not (isinstance(field.type, ir.Prim) and field.type.name == "Any"):
            annotation += " | None"  # last, as ruff's RUF036 wants it
    if field.explicit_wire:
        default = (
            f"msgspec.field(default=UNSET, name={py_str(field.wire)})"
            if default
            else f"msgspec.field(name={py_str(field.wire)})"
        )
    doc = field.doc
    if field.wire == _META_WIRE and meta_doc:
        doc = _beyond(doc, meta_doc)  # the shared text is written once, on `_Struct`
    if field.has_default:
        shown = json.dumps(field.default)
        doc = f"{doc}\n\nSchema default: ``{shown}`` (UNSET here means absent)."
    if field.default_on_null:
        shown = json.dumps(field.null_default)
        doc = f"{doc}\n\nA ``null`` received here decodes as ``{shown}``."
    return _FieldView(
        attr=field.attr, annotation=annotation, default=default, doc=doc.strip()
    )


def _tuple_text(items: tuple[str, ...]) -> str:
    if len(items) == 1:
        return f"({py_str(items[0])},)"
    return "(" + ", ".join(py_str(i) for i in items) + ")"


def struct_view(struct: ir.Struct, meta_doc: str = "") -> _StructView:
    shadowed = frozenset(f.attr for f in struct.fields) & ir.SHADOWABLE_BUILTINS
    options = ["kw_only=True"]
    if struct.tag_field is not None:
        options.append(f"tag_field={py_str(struct.tag_field)}")
        options.append(f"tag={py_literal(struct.tag)}")
    base = struct.base or "_Struct"
    bases = ", ".join([base, *options])
    return _StructView(
        name=struct.name,
        bases=bases,
        doc=struct.doc or struct.name,
        fields=[_field_view(f, shadowed, meta_doc) for f in struct.fields],
        resolves_shapes=struct.resolves_shapes,
        shape_guard=struct.shape_guard,
        uint64_checks=struct.uint64_checks,
        alternatives=struct.alternatives,
        checks_alternatives=struct.checks_alternatives,
        one_alternative=struct.one_alternative,
        forbidden=struct.forbidden,
    )


def _wrap(head: str, items: list[str], tail: str = "]", indent: int = 4) -> list[str]:
    """``head[item, item]`` on one line if it fits, else one item per line."""
    one_line = f"{head}{', '.join(items)}{tail}"
    if len(one_line) <= _LINE - indent:
        return [one_line]
    return [head, *(f"    {item}," for item in items), tail]


def _union_views(
    module: ir.Module,
) -> tuple[dict[str, _AliasView], dict[str, set[str]]]:
    """Every alias, enum and union, and the names each one's value uses."""
    views: dict[str, _AliasView] = {}
    deps: dict[str, set[str]] = {}
    for alias in module.aliases:
        views[alias.name] = _AliasView(
            alias.name,
            alias.doc,
            [f"{alias.name}: TypeAlias = {alias.type.render(frozenset())}"],
            None,
        )
        deps[alias.name] = alias.type.refs()
    for enum in module.enums:
        values = [py_literal(v.value) for v in enum.values]
        head = f"{enum.name}: TypeAlias = "
        if enum.open_type is not None:
            # Any other value is accepted too (an extension or a later version's).
            other = enum.open_type.render(frozenset())
            one_line = f"{head}Literal[{', '.join(values)}] | {other}"
            if len(one_line) <= _LINE:
                lines = [one_line]
            else:
                literal = _wrap("Literal[", values, indent=4)
                lines = [
                    f"{head}Union[",
                    *(f"    {x}" for x in literal),
                    f"    {other},",
                    "]",
                ]
                lines[-3] += ","
        else:
            lines = _wrap(head + "Literal[", values)
        views[enum.name] = _AliasView(enum.name, enum.doc, lines, None)
        deps[enum.name] = set()
    for union in module.unions:
        members = [v.render(frozenset()) for v in union.variants]
        static_members = [*members, *union.raw_variants]
        if union.other:
            static_members.append(union.other)
        if union.strategy == "scalar":
            static = [f"{union.name}: TypeAlias = {' | '.join(members)}"]
            runtime = None
        else:
            if len(static_members) == 1:  # Union[X] is no union: X itself
                static = [f"{union.name}: TypeAlias = {static_members[0]}"]
            else:
                static = _wrap(f"{union.name}: TypeAlias = Union[", static_members)
            if union.strategy in ("tagged", "single"):
                runtime = None
            elif union.strategy == "open":
                raw = ", ".join(union.raw_variants)
                marker = (
                    f"OpenUnion({py_literal(union.tag_field)}, {union.other or 'None'}"
                )
                marker += f", ({raw},))" if union.raw_variants else ")"
                guarded = list(members)
                if len(guarded) == 1:
                    # msgspec reads a lone tagged Struct without its tag: a
                    # guard variant makes it a real tagged union.
                    guarded.append(f"tag_guard({py_literal(union.tag_field)})")
                inner = _wrap("Union[", guarded)
                runtime = [f"{union.name} = Annotated["]
                if len(inner) == 1:
                    runtime.append(f"    {inner[0]},")
                else:
                    runtime.append(f"    {inner[0]}")
                    runtime += [f"    {line}" for line in inner[1:-1]]
                    runtime.append(f"    {inner[-1]},")
                runtime.append(f"    {marker},")
                runtime.append("]")
            else:  # shape
                candidates = [*members, *([union.other] if union.other else [])]
                tag_arg = (
                    [f"        tag_field={py_str(union.shape_tag_field)},"]
                    if union.shape_tag_field
                    else []
                )
                runtime = [
                    f"{union.name} = Annotated[",
                    f"    {union.wire or 'Any'},",
                    "    ShapeUnion(",
                    f"        {py_str(union.name)},",
                    *(
                        [f"        ({candidates[0]},),"]
                        if len(candidates) == 1
                        else [
                            "        (",
                            *(f"            {c}," for c in candidates),
                            "        ),",
                        ]
                    ),
                    *tag_arg,
                    "    ),",
                    "]",
                ]
        views[union.name] = _AliasView(union.name, union.doc, static, runtime)
        deps[union.name] = union.refs()
    return views, deps


@dataclasses.dataclass
class _Definition:
    kind: str  # "struct", "other" or "alias"
    view: _StructView | OtherView | _AliasView


def definition_views(
    module: ir.Module, structs: list[_StructView], others: list[OtherView]
) -> list[_Definition]:
    """Every class and alias of the module, each after what it uses.

    What a definition evaluates when the module runs must come first: a
    class's base, an alias's members. What a class's fields name only in
    annotations (not evaluated) comes first too when it can, so a reader
    meets `ContentBlock` before the classes that hold one; where that would
    form a cycle, the annotation is the edge given up. Otherwise the schema's
    order.
    """
    aliases, alias_deps = _union_views(module)
    defs: dict[str, _Definition] = {}
    hard: dict[str, set[str]] = {}  # evaluated at import
    soft: dict[str, list[str]] = {}  # annotations only
    for struct, view in zip(module.structs, structs, strict=True):
        defs[struct.name] = _Definition("struct", view)
        hard[struct.name] = {struct.base} if struct.base else set()
        soft[struct.name] = sorted(
            {r for f in struct.fields for r in f.type.refs()}, key=natural_order
        )
    for other in others:
        defs[other.name] = _Definition("other", other)
        hard[other.name] = set(other.checks)  # evaluated: `checks = (...)`
        soft[other.name] = []
    for name, alias in aliases.items():
        defs[name] = _Definition("alias", alias)
        hard[name] = set(alias_deps[name])
        soft[name] = []
    ordered: list[_Definition] = []
    placed: set[str] = set()
    visiting: set[str] = set()

    def needs(name: str, seen: set[str]) -> set[str]:
        """Everything ``name`` needs evaluated first, transitively."""
        for dep in hard.get(name, ()):
            if dep not in seen:
                seen.add(dep)
                needs(dep, seen)
        return seen

    def place(name: str) -> None:
        if name in placed or name in visiting or name not in defs:
            return
        visiting.add(name)
        for dep in sorted(hard[name], key=natural_order):
            place(dep)
        for dep in soft[name]:
            if not needs(dep, {dep}) & visiting:  # no cycle back to us
                place(dep)
        visiting.discard(name)
        placed.add(name)
        ordered.append(defs[name])

    for name in defs:
        place(name)
    return ordered


def known_tags_lines(tags: tuple[str, ...]) -> list[str]:
    if not tags:
        return ["known_tags = frozenset()"]
    items = [py_literal(t) for t in tags]
    one_line = "known_tags = frozenset({" + ", ".join(items) + "})"
    if len(one_line) <= _LINE - 4:
        return [one_line]
    return [
        "known_tags = frozenset(",
        "    {",
        *(f"        {i}," for i in items),
        "    }",
        ")",
    ]


def integer_format_lines(fmt: ir.IntegerFormat) -> list[str]:
    bits = fmt.format.removeprefix("u").removeprefix("int")
    doc = f"An integer of format ``{fmt.format}``: {fmt.minimum} to {fmt.maximum}."
    if fmt.format == "uint64":
        # msgspec.Meta bounds must fit in an int64: the Structs check the top.
        bounds = "ge=0"
        doc += "\n\nThe upper bound is checked by the Structs' ``__post_init__``."
    elif fmt.minimum == 0:
        bounds = f"ge=0, le=2**{bits} - 1"
    else:
        bounds = f"ge=-(2**{int(bits) - 1}), le=2**{int(bits) - 1} - 1"
    return [
        f"{fmt.alias}: TypeAlias = Annotated[int, msgspec.Meta({bounds})]",
        docstring(doc, 0),
    ]
