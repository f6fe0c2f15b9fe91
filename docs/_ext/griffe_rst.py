"""Griffe extension: the reStructuredText bits of our docstrings, as Markdown.

The generated ``acp_schema`` docstrings are the schema's own Markdown; the
runtime's use a little reST (``:class:`X```, ``text::`` literal blocks,
``#:`` attribute comments, ``>>>`` examples).  MkDocs renders Markdown, so
this rewrites those bits when griffe loads a package:

- ``:class:`~acp_trio.X``` (and ``:func:``, ``:meth:``, ``:attr:``, ...)
  becomes a cross-reference when it names a documented public object, else
  inline code (a private helper has no page to link to);
- a paragraph ending in ``::`` and the indented block after it become a
  fenced Python block; ``>>>`` examples become a fenced ``pycon`` block;
- an attribute without a docstring takes the ``#:`` comment above it.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

#: Modules whose docstrings are the schema's Markdown (everything else is reST).
_GENERATED = {f"acp_schema.{m}" for m in ("v1", "v2", "v1_unstable", "v2_unstable")}
_RUST_LINK = re.compile(r"\[`([A-Za-z_][\w:]*)`\](?![(\[])")
_ROLE = re.compile(r":(?:class|func|meth|attr|data|exc|mod|obj):`(~?)([^`]+)`")


def _public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


class RstToMarkdown(griffe.Extension):
    """Rewrites reST roles, literal blocks, doctests and ``#:`` comments."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._exported = set(pkg.exports or ()) if pkg.exports is not None else set()
        self._pkg = pkg
        self._walk(pkg, seen=set())

    # -- walking ---------------------------------------------------------------

    def _walk(self, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.is_attribute and obj.docstring is None:
            self._hash_colon(obj)
        if obj.docstring is not None:
            obj.docstring.value = self._convert(obj.docstring.value, obj)
        for member in list(obj.members.values()):
            if isinstance(member, griffe.Alias):
                continue  # converted where it is defined
            self._walk(member, seen)

    def _hash_colon(self, attr: griffe.Object) -> None:
        lines = attr.module.lines
        if not lines or attr.lineno is None or attr.lineno > len(lines):
            return
        comment: list[str] = []
        index = attr.lineno - 2
        while index >= 0 and lines[index].strip().startswith("#:"):
            comment.insert(0, lines[index].strip()[2:].strip())
            index -= 1
        if comment:
            attr.docstring = griffe.Docstring(" ".join(comment), parent=attr)

    # -- rewriting -------------------------------------------------------------

    def _convert(self, text: str, obj: griffe.Object) -> str:
        generated = obj.module.path in _GENERATED
        text = self._blocks(text, definitions=not generated)
        if generated:
            return _RUST_LINK.sub(lambda m: self._rust_link(m.group(1), obj), text)
        return _ROLE.sub(lambda m: self._role(m.group(1), m.group(2), obj), text)

    def _rust_link(self, target: str, obj: griffe.Object) -> str:
        """The schema's Rust doc links: ``[`Type`]``, ``[`Type::field`]``."""
        module = obj.module
        name, _, member = target.partition("::")
        candidates = [name] if not member else []
        if member and member[:1].islower():
            candidates.append(f"{name}.{member}")
        elif member:
            candidates.append(f"{name}{member}")  # McpServer::Http -> McpServerHttp
        for candidate in candidates:
            try:
                found = module[candidate]
            except KeyError:
                continue
            if found.is_alias or not found.docstring:
                continue  # not rendered (mkdocstrings hides undocumented members)
            return f"[`{candidate}`][{module.path}.{candidate}]"
        return f"`{target}`"

    def _role(self, tilde: str, target: str, obj: griffe.Object) -> str:
        target = target.strip()
        shown = target.rsplit(".", 1)[-1] if tilde else target
        path = self._resolve(target, obj)
        if path is None:
            return f"`{shown}`"
        return f"[`{shown}`][{path}]"

    def _resolve(self, target: str, obj: griffe.Object) -> str | None:
        """The documented path ``target`` names, or None (shown as code)."""
        pkg = self._pkg.name
        name = target.removeprefix(pkg + ".")
        head = name.partition(".")[0]
        candidates = []
        if head in self._exported:
            candidates.append(f"{pkg}.{name}")
        # a member of the class the docstring belongs to (or its class)
        owner = obj if obj.is_class else obj.parent
        while owner is not None and not owner.is_class:
            owner = owner.parent
        if owner is not None and owner.name in self._exported and "." not in target:
            candidates.append(f"{pkg}.{owner.name}.{target}")
        for path in candidates:
            if not _public(path.removeprefix(pkg + ".")):
                continue
            try:
                found = self._pkg[path.removeprefix(pkg + ".")]
                documented = bool(found.docstring)
            except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue
            if documented:  # mkdocstrings renders (and anchors) documented ones only
                return path
        return None

    @staticmethod
    def _blocks(text: str, definitions: bool) -> str:
        """Fence ``::`` literal blocks and ``>>>`` examples; definition lists
        become bullets (``definitions``: the docstring is reST, not the
        schema's Markdown)."""
        lines = text.split("\n")
        out: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.rstrip().endswith("::") and i + 1 < len(lines):
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                indent = len(line) - len(line.lstrip())
                block_start = j
                while j < len(lines) and (
                    not lines[j].strip()
                    or len(lines[j]) - len(lines[j].lstrip()) > indent
                ):
                    j += 1
                while j > block_start and not lines[j - 1].strip():
                    j -= 1
                if j > block_start:
                    stripped = line.rstrip()[:-1]
                    if stripped.endswith(" :"):
                        stripped = stripped[:-2]  # "text ::" shows no colon
                    out.append(stripped)
                    out.append("")
                    code = textwrap.dedent("\n".join(lines[block_start:j]))
                    out.append(" " * indent + "```python")
                    out.extend(" " * indent + c if c else "" for c in code.split("\n"))
                    out.append(" " * indent + "```")
                    i = j
                    continue
            if line.lstrip().startswith(">>> "):
                indent = len(line) - len(line.lstrip())
                j = i
                while j < len(lines) and lines[j].strip():
                    j += 1
                out.append(" " * indent + "```pycon")
                out.extend(lines[i:j])
                out.append(" " * indent + "```")
                i = j
                continue
            if definitions and _is_term(lines, i):
                # reST definition list item -> Markdown bullet "term: body"
                indent = len(line) - len(line.lstrip())
                j = i + 1
                while j < len(lines) and (
                    lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent
                ):
                    j += 1
                body = textwrap.dedent("\n".join(lines[i + 1 : j])).split("\n")
                pad = " " * indent
                out.append(f"{pad}- {line.strip()}: {body[0]}")
                out.extend(f"{pad}  {b}" if b else "" for b in body[1:])
                i = j
                continue
            out.append(line)
            i += 1
        return "\n".join(out)


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_term(lines: list[str], i: int) -> bool:
    """A reST definition term: starts a paragraph, the next line is indented more."""
    line = lines[i]
    if not line.strip() or _LIST_ITEM.match(line) or i + 1 >= len(lines):
        return False
    after = lines[i + 1]
    if not after.strip() or _indent(after) <= _indent(line):
        return False
    return i == 0 or not lines[i - 1].strip() or _indent(lines[i - 1]) > _indent(line)
