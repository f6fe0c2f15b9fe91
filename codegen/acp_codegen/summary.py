"""What a spec bump changed, read from the generated source before and after.

`snapshot` reads a generated ``vN.py`` (ours: its layout is known) with
`ast`, without importing it: the public types with a fingerprint of their
shape, and the method tables. `changes` compares two snapshots and names
what was added, removed and renamed. A rename is a removed and an added
name of the same shape (fields and tag of a class, the text of an alias
with renamed names mapped), paired only when the pair is unambiguous; a
method is renamed when its params type is the same or renamed, or when its
wire name keeps its last segment (``logout`` -> ``auth/logout``), and the
params and result types of a renamed method are renamed with it.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib

__all__ = ["Changes", "Snapshot", "changes", "diff_report", "snapshot"]


@dataclasses.dataclass
class Snapshot:
    """The public API of one generated module."""

    schema_version: str = "unknown"
    #: name -> a fingerprint of its shape (kind, fields / alias text)
    types: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    #: (table, wire name) -> (handler, params, result)
    methods: dict[tuple[str, str], tuple[str, str, str]] = dataclasses.field(
        default_factory=dict
    )
    #: class -> attribute -> its annotation's text
    fields: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)


def _class_fingerprint(node: ast.ClassDef) -> tuple[str, ...]:
    fields = sorted(
        stmt.target.id
        for stmt in node.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    )
    tags = [
        f"{k.arg}={ast.unparse(k.value)}"
        for k in node.keywords
        if k.arg in ("tag", "tag_field")
    ]
    return ("class", *tags, *fields)


def snapshot(source: str) -> Snapshot:
    """The public types and method tables of a generated module's source."""
    found = Snapshot()
    body = list(ast.parse(source).body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.If):  # TYPE_CHECKING: the static alias
            body[:0] = node.body
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            found.types[node.name] = _class_fingerprint(node)
            found.fields[node.name] = {
                stmt.target.id: ast.unparse(stmt.annotation)
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and not ast.unparse(stmt.annotation).startswith("ClassVar")
            }
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if isinstance(node.value, ast.Dict) and name.endswith(
                ("_METHODS", "_METHODS_UNSTABLE")
            ):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(value, ast.Call):
                        kw = {k.arg: ast.unparse(k.value) for k in value.keywords}
                        found.methods[(name, str(key.value))] = (
                            kw.get("handler", "").strip("'\""),
                            kw.get("params", ""),
                            kw.get("result", ""),
                        )
            elif node.value is not None and not name.startswith("_"):
                if ast.unparse(node.annotation) == "TypeAlias":
                    found.types[name] = ("alias", ast.unparse(node.value))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == "SCHEMA_VERSION":
                if isinstance(node.value, ast.Constant):
                    found.schema_version = str(node.value.value)
    return found


@dataclasses.dataclass
class Changes:
    """What changed between two snapshots of one module."""

    old_version: str
    new_version: str
    types_added: list[str]
    types_removed: list[str]
    types_renamed: dict[str, str]
    methods_added: list[str]
    methods_removed: list[str]
    methods_renamed: dict[str, str]
    #: ``Union.Variant`` of unions kept (by name or renamed)
    variants_added: list[str] = dataclasses.field(default_factory=list)
    variants_removed: list[str] = dataclasses.field(default_factory=list)
    #: ``Class.attribute`` of classes kept; changed: its type's text changed
    fields_added: list[str] = dataclasses.field(default_factory=list)
    fields_removed: list[str] = dataclasses.field(default_factory=list)
    fields_changed: list[str] = dataclasses.field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(
            self.types_added
            or self.types_removed
            or self.types_renamed
            or self.methods_added
            or self.methods_removed
            or self.methods_renamed
            or self.variants_added
            or self.variants_removed
            or self.fields_added
            or self.fields_removed
            or self.fields_changed
        )

    def lines(self, name: str) -> list[str]:
        """A short report, one line per kind of change."""
        head = f"{name}: schema {self.old_version} -> {self.new_version}"
        if not self:
            return [f"{head}: no type, variant, field or method changed"]
        out = [head]

        def line(label: str, items: list[str]) -> None:
            if items:
                out.append(f"  {label} ({len(items)}): {', '.join(items)}")

        line("methods added", self.methods_added)
        line("methods removed", self.methods_removed)
        line(
            "methods renamed",
            [f"{a} -> {b}" for a, b in self.methods_renamed.items()],
        )
        line("types added", self.types_added)
        line("types removed", self.types_removed)
        line("types renamed", [f"{a} -> {b}" for a, b in self.types_renamed.items()])
        line("variants added", self.variants_added)
        line("variants removed", self.variants_removed)
        line("fields added", self.fields_added)
        line("fields removed", self.fields_removed)
        line("fields changed", self.fields_changed)
        return out


def _unique_pairs(
    old: dict[str, tuple[str, ...]], new: dict[str, tuple[str, ...]]
) -> dict[str, str]:
    """Pairs (old name -> new name) whose fingerprint matches exactly one each way."""
    by_print_old: dict[tuple[str, ...], list[str]] = {}
    by_print_new: dict[tuple[str, ...], list[str]] = {}
    for name, fp in old.items():
        by_print_old.setdefault(fp, []).append(name)
    for name, fp in new.items():
        by_print_new.setdefault(fp, []).append(name)
    return {
        names[0]: by_print_new[fp][0]
        for fp, names in by_print_old.items()
        if len(names) == 1 and len(by_print_new.get(fp, ())) == 1
    }


def _methods_by_wire(snap: Snapshot) -> dict[str, tuple[str, str, str]]:
    """Wire name -> (handler, params, result), every table merged (the
    unstable tables hold every method)."""
    merged: dict[str, tuple[str, str, str]] = {}
    for (_table, wire), entry in sorted(snap.methods.items()):
        merged.setdefault(wire, entry)
    return merged


def changes(old: Snapshot, new: Snapshot) -> Changes:
    """What ``new`` added, removed and renamed relative to ``old``."""
    removed = {n: fp for n, fp in old.types.items() if n not in new.types}
    added = {n: fp for n, fp in new.types.items() if n not in old.types}
    renamed: dict[str, str] = {}
    # Classes first (their fields name no type), then aliases with the class
    # renames applied to their text, until nothing more pairs up.
    for _ in range(3):
        mapped = {
            n: tuple(_rename_text(p, renamed) for p in fp)
            for n, fp in removed.items()
            if n not in renamed
        }
        pairs = _unique_pairs(
            mapped, {n: fp for n, fp in added.items() if n not in renamed.values()}
        )
        if not pairs:
            break
        renamed.update(pairs)
    old_methods, new_methods = _methods_by_wire(old), _methods_by_wire(new)
    gone = {w: m for w, m in old_methods.items() if w not in new_methods}
    came = {w: m for w, m in new_methods.items() if w not in old_methods}
    methods_renamed: dict[str, str] = {}
    for wire, (_handler, params, result) in gone.items():
        candidates = [
            w
            for w, (_h, p, _r) in came.items()
            if w not in methods_renamed.values()
            and (
                renamed.get(params, params) == p
                or w.rsplit("/", 1)[-1] == wire.rsplit("/", 1)[-1]
            )
        ]
        if len(candidates) == 1:
            new_wire = candidates[0]
            methods_renamed[wire] = new_wire
            _h, new_params, new_result = came[new_wire]
            for a, b in ((params, new_params), (result, new_result)):
                if a in removed and b in added and a not in renamed:
                    if b not in renamed.values():
                        renamed[a] = b
    variants_added, variants_removed = _variant_changes(old, new, renamed)
    fields_added, fields_removed, fields_changed = _field_changes(old, new, renamed)
    return Changes(
        variants_added=variants_added,
        variants_removed=variants_removed,
        fields_added=fields_added,
        fields_removed=fields_removed,
        fields_changed=fields_changed,
        old_version=old.schema_version,
        new_version=new.schema_version,
        types_added=sorted(n for n in added if n not in renamed.values()),
        types_removed=sorted(n for n in removed if n not in renamed),
        types_renamed=dict(sorted(renamed.items())),
        methods_added=sorted(w for w in came if w not in methods_renamed.values()),
        methods_removed=sorted(w for w in gone if w not in methods_renamed),
        methods_renamed=dict(sorted(methods_renamed.items())),
    )


def _kept(
    old: Snapshot, new: Snapshot, renamed: dict[str, str]
) -> list[tuple[str, str]]:
    """(old name, new name) of the types both snapshots have, renames paired."""
    pairs = [(n, n) for n in old.types if n in new.types]
    return sorted(pairs + list(renamed.items()))


def _members(fingerprint: tuple[str, ...]) -> set[str]:
    """The names a union alias's text joins with ``|`` (its variants)."""
    if fingerprint[:1] != ("alias",):
        return set()
    try:
        tree = ast.parse(fingerprint[1], mode="eval").body
    except SyntaxError:
        return set()
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            stack += [node.left, node.right]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in (
            "Union",
            "Annotated",
        ):
            inner = node.slice
            parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            stack += parts[:1] if ast.unparse(node.value) == "Annotated" else parts
        elif isinstance(node, ast.Name):
            found.add(node.id)
    return found if len(found) > 1 else set()


def _variant_changes(
    old: Snapshot, new: Snapshot, renamed: dict[str, str]
) -> tuple[list[str], list[str]]:
    added: list[str] = []
    removed: list[str] = []
    for before, after in _kept(old, new, renamed):
        was = {renamed.get(m, m) for m in _members(old.types[before])}
        now = _members(new.types[after])
        if was and now:
            added += [f"{after}.{m}" for m in sorted(now - was)]
            removed += [f"{after}.{m}" for m in sorted(was - now)]
    return added, removed


def _field_changes(
    old: Snapshot, new: Snapshot, renamed: dict[str, str]
) -> tuple[list[str], list[str], list[str]]:
    added: list[str] = []
    removed: list[str] = []
    changed: list[str] = []
    for before, after in _kept(old, new, renamed):
        was, now = old.fields.get(before), new.fields.get(after)
        if was is None or now is None:
            continue
        added += [f"{after}.{a}" for a in sorted(now.keys() - was.keys())]
        removed += [f"{after}.{a}" for a in sorted(was.keys() - now.keys())]
        changed += [
            f"{after}.{a}"
            for a in sorted(was.keys() & now.keys())
            if _rename_text(was[a], renamed) != now[a]
        ]
    return added, removed, changed


def _rename_text(text: str, renamed: dict[str, str]) -> str:
    """``text`` (an alias's source) with the renamed names mapped (whole words)."""
    if not renamed or text in ("class", "alias"):
        return text
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    return ast.unparse(tree)


def diff_report(
    old: dict[str, str], new: dict[str, str], *, max_lines: int = 40
) -> list[str]:
    """A ``diff --stat``-like summary of two file sets (name -> text), then the
    first ``max_lines`` lines of the unified diff, old -> new."""
    names = sorted(set(old) | set(new))
    stat: list[str] = []
    head: list[str] = []
    total_plus = total_minus = 0
    for name in names:
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        diff = list(
            difflib.unified_diff(
                (a or "").splitlines(keepends=True),
                (b or "").splitlines(keepends=True),
                f"a/{name}" if a is not None else "/dev/null",
                f"b/{name}" if b is not None else "/dev/null",
            )
        )
        plus = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
        minus = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
        total_plus += plus
        total_minus += minus
        stat.append(f" {name} | {plus + minus} (+{plus} -{minus})")
        head.extend(line.rstrip("\n") for line in diff)
    if not stat:
        return []
    summary = f" {len(stat)} files changed, {total_plus} insertions(+), "
    summary += f"{total_minus} deletions(-)"
    shown = head[:max_lines]
    more = len(head) - len(shown)
    return [
        *stat,
        summary,
        "",
        *shown,
        *([f"... ({more} more diff lines)"] if more > 0 else []),
    ]
