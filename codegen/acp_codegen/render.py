"""Intermediate model -> Python source, through the Jinja2 templates.

Everything a template prints is computed in `views.py` as a plain string or
list; the templates only lay it out. This module picks the views a template
gets, the order of names and imports, and writes the package.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import jinja2

from . import ir
from .literal import py_literal
from .views import (
    HandlerView,
    OtherView,
    TableView,
    common_meta_doc,
    definition_views,
    docstring,
    first_paragraph,
    handler_view,
    integer_format_lines,
    known_tags_lines,
    natural_order,
    rule_view,
    struct_doc,
    struct_view,
)

TEMPLATES = Path(__file__).parent / "templates"
#: The output package's hand-written subpackage, which the generated modules
#: import: a normal package of ``acp_schema`` (linted, type-checked, tested in
#: place), copied into a package written elsewhere.
RUNTIME_PACKAGE = (
    Path(__file__).resolve().parents[2] / "generated" / "acp_schema" / "_runtime"
)


def _dunder_all_order(name: str) -> tuple[int, list[str | int]]:
    """``__all__`` order as ruff's RUF022 sorts it: CONSTANTS, then Classes,
    then the rest, each in natural order (``Item2`` before ``Item10``)."""
    if name.upper() == name:
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, natural_order(name)


def _import_order(name: str) -> tuple[int, list[str | int]]:
    """A ``from x import (...)`` list as ruff's isort orders it: like
    `_dunder_all_order`, but case-insensitive within each group."""
    return _dunder_all_order(name)[0], natural_order(name.lower())


#: Who handles a method: one table per side (``AGENT_METHODS``, ...).
SIDES = ("agent", "client", "protocol", "proxy")


def public_names(module: ir.Module) -> list[str]:
    """Every public name of the generated module, in ``__all__`` order."""
    fixed = [
        *(
            f"{side}_METHODS{suffix}"
            for side in (s.upper() for s in SIDES)
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
        "decoder",
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
        *(f.alias for f in module.integer_formats),
    }
    return sorted((n for n in names if not n.startswith("_")), key=_dunder_all_order)


def _runtime_imports(module: ir.Module) -> list[str]:
    """What the module imports from ``_runtime``: what it uses, no more."""
    names = [
        "UNSET",
        "Codec",
        "FieldRule",
        "Method",
        "OpenUnion",
        "OtherVariant",
        "ShapeUnion",
        "UnsetType",
    ]
    if any(o.tag_field is None for o in module.others):
        names.insert(names.index("ShapeUnion"), "RawObject")
    if any(s.checks_alternatives for s in module.structs):
        names.append("check_alternatives")
    if any(s.uint64_checks for s in module.structs):
        names.append("check_uint64")
    if any(u.strategy == "open" and len(u.variants) == 1 for u in module.unions):
        names.append("tag_guard")
    return names


def _views(module: ir.Module) -> dict[str, object]:
    meta_doc = common_meta_doc(module)
    structs = [struct_view(s, meta_doc) for s in module.structs]
    rules = [view for s in module.structs if (view := rule_view(s)) is not None]
    others = [
        OtherView(
            name=o.name,
            doc=o.doc or f"A `{o.union}` variant this version does not define.",
            tag_field=o.tag_field,
            known_tags=known_tags_lines(o.known_tags),
            fixed_tag=o.fixed_tag,
            checks=o.checks,
        )
        for o in module.others
    ]
    tables: list[TableView] = []
    handlers: dict[str, list[HandlerView]] = {}
    for side in SIDES:
        stable = [m for m in module.methods if m.side == side]
        every = [m for m in module.unstable_methods if m.side == side]
        tables.append(TableView(f"{side.upper()}_METHODS", stable))
        tables.append(TableView(f"{side.upper()}_METHODS_UNSTABLE", every))
        handlers[side] = [handler_view(m) for m in stable]
        handlers[f"{side}_preview"] = [handler_view(m) for m in every if m.preview]
    return {
        "public_names": public_names(module),
        "module": module,
        "definitions": definition_views(module, structs, others),
        "runtime_imports": _runtime_imports(module),
        "uses_builtins": any(
            "builtins." in f.annotation for s in structs for f in s.fields
        ),
        "struct_doc": struct_doc(common_meta_doc(module)),
        "rules": rules,
        "tables": tables,
        "handlers": handlers,
        "constants": module.constants,
        "integer_formats": [integer_format_lines(f) for f in module.integer_formats],
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
    env.filters["pyrepr"] = py_literal
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
    "PROXY_METHODS": "PROXY_METHODS_UNSTABLE",
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


def render_package(modules: dict[str, ir.Module]) -> dict[str, str]:
    """File name -> source of every generated file of the `acp_schema` package
    (all but `RUNTIME_PACKAGE`, which is written by hand)."""
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
    files["py.typed"] = ""
    return files
