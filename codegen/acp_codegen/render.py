"""Intermediate model -> Python source, through the Jinja2 templates.

Everything a template prints is computed here as a plain string or list
(`_StructView`, `_UnionView`, ...); the templates only lay it out.
"""

from __future__ import annotations

import dataclasses
import json
import re
import textwrap
from pathlib import Path

import jinja2

from . import ir

TEMPLATES = Path(__file__).parent / "templates"
_LINE = 88


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


def _py(value: object) -> str:
    """A JSON value as a Python literal (double-quoted strings, as ruff writes them)."""
    if isinstance(value, str):
        if '"' in value and "'" not in value and "\\" not in value:
            return f"'{value}'"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    return repr(value)


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
    name: str
    bases: str
    doc: str
    fields: list[_FieldView]
    resolves_shapes: bool
    shape_guard: tuple[str, ...]

    @property
    def post_init(self) -> list[str]:
        """The body of ``__post_init__``: resolve the by-shape unions, skipping
        the call when every container holding them is empty (a common case:
        ``authMethods: []``, ``mcpServers: []``)."""
        call = "_CODEC.resolve_shapes(self)"
        guard = " or ".join(f"self.{attr}" for attr in self.shape_guard)
        line = f"        if {guard}:"
        if not guard or len(line) > _LINE:
            return [f"        {call}"]
        return [line, f"            {call}"]

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
class _OtherView:
    name: str
    doc: str
    tag_field: str
    known_tags: list[str]
    fixed_tag: str | None


@dataclasses.dataclass
class _RuleView:
    struct: str
    fields: list[list[str]]  # the lines of each field's entry


@dataclasses.dataclass
class _HandlerView:
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
class _TableView:
    name: str  # AGENT_METHODS, AGENT_METHODS_UNSTABLE, ...
    methods: list[ir.Method]


def _handler_view(method: ir.Method) -> _HandlerView:
    doc = first_paragraph(method.doc) or method.wire
    if method.notification is None:
        return _HandlerView(method.handler, method.params, method.result or "None", doc)
    # Also sent as a notification (no id): the handler then gets that form's
    # params and its return value is not sent.
    return _HandlerView(
        handler=method.handler,
        params=f"{method.params} | {method.notification}",
        result=f"{method.result} | None",
        doc=f"{doc}\n\nSent without an id (as a notification), ``params`` is a\n"
        f"``{method.notification}`` and the return value is not sent.",
    )


def _field_view(field: ir.Field, shadowed: frozenset[str]) -> _FieldView:
    annotation = field.type.render(shadowed)
    default = None
    if not field.required:
        annotation += " | UnsetType"
        default = "UNSET"
    if field.nullable and not isinstance(field.type, ir.Nullable):
        if not (isinstance(field.type, ir.Prim) and field.type.name == "Any"):
            annotation += " | None"  # last, as ruff's RUF036 wants it
    if field.explicit_wire:
        default = (
            f'msgspec.field(default=UNSET, name="{field.wire}")'
            if default
            else f'msgspec.field(name="{field.wire}")'
        )
    doc = field.doc
    if field.has_default:
        shown = json.dumps(field.default)
        doc = f"{doc}\n\nSchema default: ``{shown}`` (UNSET here means absent)."
    return _FieldView(
        attr=field.attr, annotation=annotation, default=default, doc=doc.strip()
    )


def _struct_view(struct: ir.Struct) -> _StructView:
    shadowed = frozenset(f.attr for f in struct.fields) & ir.SHADOWABLE_BUILTINS
    options = ["kw_only=True"]
    if struct.tag_field is not None:
        options.append(f'tag_field="{struct.tag_field}"')
        options.append(f'tag="{struct.tag}"')
    base = struct.base or "_Struct"
    bases = ", ".join([base, *options])
    return _StructView(
        name=struct.name,
        bases=bases,
        doc=struct.doc or struct.name,
        fields=[_field_view(f, shadowed) for f in struct.fields],
        resolves_shapes=struct.resolves_shapes,
        shape_guard=struct.shape_guard,
    )


def _wrap(head: str, items: list[str], tail: str = "]", indent: int = 4) -> list[str]:
    """``head[item, item]`` on one line if it fits, else one item per line."""
    one_line = f"{head}{', '.join(items)}{tail}"
    if len(one_line) <= _LINE - indent:
        return [one_line]
    return [head, *(f"    {item}," for item in items), tail]


def _union_views(module: ir.Module) -> list[_AliasView]:
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
        values = [_py(v.value) for v in enum.values]
        head = f"{enum.name}: TypeAlias = "
        if enum.open:
            # Any other value is accepted too (an extension or a later version's).
            one_line = f"{head}Literal[{', '.join(values)}] | {enum.kind}"
            if len(one_line) <= _LINE:
                lines = [one_line]
            else:
                literal = _wrap("Literal[", values, indent=4)
                lines = [
                    f"{head}Union[",
                    *(f"    {x}" for x in literal),
                    f"    {enum.kind},",
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
            static = _wrap(f"{union.name}: TypeAlias = Union[", static_members)
            if union.strategy in ("tagged", "single"):
                runtime = None
            elif union.strategy == "open":
                raw = ", ".join(union.raw_variants)
                marker = f'OpenUnion("{union.tag_field}", {union.other or "None"}'
                marker += f", ({raw},))" if union.raw_variants else ")"
                inner = _wrap("Union[", members)
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
                runtime = [
                    f"{union.name} = Annotated[",
                    "    Any,",
                    "    ShapeUnion(",
                    f'        "{union.name}",',
                    *(
                        [f"        ({candidates[0]},),"]
                        if len(candidates) == 1
                        else [
                            "        (",
                            *(f"            {c}," for c in candidates),
                            "        ),",
                        ]
                    ),
                    "    ),",
                    "]",
                ]
        views[union.name] = _AliasView(union.name, union.doc, static, runtime)
        deps[union.name] = union.refs()
    # Runtime aliases evaluate their members: order them after what they use.
    ordered: list[_AliasView] = []
    placed: set[str] = set()

    def place(name: str) -> None:
        if name in placed or name not in views:
            return
        placed.add(name)
        for dep in sorted(deps[name]):
            place(dep)
        ordered.append(views[name])

    for name in views:
        place(name)
    return ordered


def _known_tags_lines(tags: tuple[str, ...]) -> list[str]:
    if not tags:
        return ["known_tags = frozenset()"]
    items = [_py(t) for t in tags]
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


def _dunder_all_order(name: str) -> tuple[int, list[str | int]]:
    """``__all__`` order as ruff's RUF022 sorts it: CONSTANTS, then Classes,
    then the rest, each in natural order (``Item2`` before ``Item10``)."""
    if name.upper() == name:
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, _natural(name)


def _import_order(name: str) -> tuple[int, list[str | int]]:
    """A ``from x import (...)`` list as ruff's isort orders it: like
    `_dunder_all_order`, but case-insensitive within each group."""
    return _dunder_all_order(name)[0], _natural(name.lower())


def _natural(text: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def public_names(module: ir.Module) -> list[str]:
    """Every public name of the generated module, in ``__all__`` order."""
    fixed = [
        *(
            f"{side}_METHODS{suffix}"
            for side in ("AGENT", "CLIENT", "PROTOCOL")
            for suffix in ("", "_UNSTABLE")
        ),
        "PROTOCOL_VERSION",
        "SCHEMA_SHA256",
        "SCHEMA_VERSION",
        "UNSET",
        "Agent",
        "AgentUnstable",
        "Client",
        "ClientUnstable",
        "Method",
        "OtherVariant",
        "UnsetType",
        "convert",
        "decode",
        "encode",
    ]
    names = {
        *fixed,
        *(s.name for s in module.structs),
        *(o.name for o in module.others),
        *(a.name for a in module.aliases),
        *(e.name for e in module.enums),
        *(u.name for u in module.unions),
        *(c.name for c in module.constants),
    }
    return sorted((n for n in names if not n.startswith("_")), key=_dunder_all_order)


def _views(module: ir.Module) -> dict[str, object]:
    structs = [_struct_view(s) for s in module.structs]
    rules = []
    for struct in module.structs:
        entries = []
        for field in struct.fields:
            if not field.has_rule:
                continue
            parts = []
            if field.default_on_error:
                parts.append("default_on_error=True")
            if field.skip_invalid_items:
                parts.append("skip_invalid_items=True")
            if field.has_default:
                # JSON text: one token however long, decoded only when used.
                text = json.dumps(field.default, separators=(",", ":"))
                parts.append(f"default_json={_py(text)}")
            one_line = f'"{field.attr}": FieldRule({", ".join(parts)}),'
            if len(one_line) <= _LINE - 12:
                entries.append([one_line])
            else:
                entries.append(
                    [f'"{field.attr}": FieldRule(', *(f"    {p}," for p in parts), "),"]
                )
        if entries:
            rules.append(_RuleView(struct.name, entries))
    others = [
        _OtherView(
            name=o.name,
            doc=o.doc or f"A `{o.union}` variant this version does not define.",
            tag_field=o.tag_field,
            known_tags=_known_tags_lines(o.known_tags),
            fixed_tag=o.fixed_tag,
        )
        for o in module.others
    ]
    tables: list[_TableView] = []
    handlers: dict[str, list[_HandlerView]] = {}
    for side in ("agent", "client", "protocol"):
        stable = [m for m in module.methods if m.side == side]
        every = [m for m in module.unstable_methods if m.side == side]
        tables.append(_TableView(f"{side.upper()}_METHODS", stable))
        tables.append(_TableView(f"{side.upper()}_METHODS_UNSTABLE", every))
        handlers[side] = [_handler_view(m) for m in stable]
        handlers[f"{side}_preview"] = [_handler_view(m) for m in every if m.preview]
    return {
        "public_names": public_names(module),
        "module": module,
        "structs": structs,
        "aliases": _union_views(module),
        "others": others,
        "rules": rules,
        "tables": tables,
        "handlers": handlers,
        "constants": module.constants,
    }


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["docstring"] = docstring
    env.filters["first_paragraph"] = first_paragraph
    env.filters["pyrepr"] = _py
    env.filters["indent_doc"] = lambda text, n: textwrap.indent(text, " " * n)
    return env


def render_module(name: str, module: ir.Module) -> str:
    template = environment().get_template("module.py.jinja")
    return template.render(name=name, **_views(module))


#: What ``vN_unstable`` defines itself (from ``vN``'s unstable tables); every
#: other public name of ``vN`` it re-exports as the same object.
UNSTABLE_ALIASES = {
    "AGENT_METHODS": "AGENT_METHODS_UNSTABLE",
    "CLIENT_METHODS": "CLIENT_METHODS_UNSTABLE",
    "PROTOCOL_METHODS": "PROTOCOL_METHODS_UNSTABLE",
    "Agent": "AgentUnstable",
    "Client": "ClientUnstable",
}


def render_unstable(name: str, module: ir.Module) -> str:
    """``vN_unstable``: the classes of ``vN`` and its unstable-surface tables."""
    names = sorted(
        (n for n in public_names(module) if n not in UNSTABLE_ALIASES),
        key=_import_order,
    )
    public = sorted([*names, *UNSTABLE_ALIASES], key=_dunder_all_order)
    template = environment().get_template("unstable.py.jinja")
    return template.render(
        name=name,
        module=module,
        names=names,
        aliases=UNSTABLE_ALIASES,
        public_names=public,
    )


def render_static(name: str) -> str:
    return (TEMPLATES / name).read_text()


def render_package(modules: dict[str, ir.Module]) -> dict[str, str]:
    """File name -> source for the whole `acp_schema` package."""
    env = environment()
    files: dict[str, str] = {}
    listed: list[tuple[str, ir.Module, bool]] = []
    for name, module in modules.items():
        files[f"{name}.py"] = render_module(name, module)
        files[f"{name}_unstable.py"] = render_unstable(name, module)
        listed += [(name, module, False), (f"{name}_unstable", module, True)]
    files["__init__.py"] = env.get_template("__init__.py.jinja").render(
        modules=sorted(listed, key=lambda entry: entry[0])
    )
    files["_runtime.py"] = render_static("_runtime.py")
    files["py.typed"] = ""
    return files
