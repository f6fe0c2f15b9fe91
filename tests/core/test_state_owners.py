"""Each piece of the engine's state has one owner (h11's ``ConnectionState``).

Read from the source with ``ast``, no connection: an attribute is *written*
by ``x.attr = ...``, ``x.attr += ...``, ``x.attr: T = ...``, ``del x.attr``,
or an item of it: ``x.attr[k] = ...``, ``del x.attr[k]``.  A write through
``self`` inside a class belongs to that class (and its bases and subclasses
in ``acp_core``: ``Engine`` writing what ``EngineState`` set is two modules);
a write through anything else (``state.backlog += 1``) is a foreign write.
The rule: every attribute is written from one module only, the module of
the class that owns it.  A foreign write of a name that a class of another
module writes through ``self`` fails too (same name, two writers).  Calls of
mutating methods (``x.items.append``) are not assignments and are not
caught here: the owners give methods for that.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import acp_core

PACKAGE = Path(acp_core.__file__).parent


class Writes(ast.NodeVisitor):
    """The attribute writes of one module, by class (``None``: outside one)."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.classes: list[str] = []
        #: (class or None, attribute, through self) -> lines
        self.found: dict[tuple[str | None, str, bool], list[int]] = defaultdict(list)
        self.bases: dict[str, list[str]] = {}

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def _target(self, target: ast.expr) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._target(element)
            return
        if isinstance(target, ast.Starred):
            self._target(target.value)
            return
        if isinstance(target, ast.Subscript) and isinstance(
            target.value, ast.Attribute
        ):
            target = target.value
        if isinstance(target, ast.Attribute):
            through_self = isinstance(target.value, ast.Name) and (
                target.value.id == "self"
            )
            owner = self.classes[-1] if self.classes and through_self else None
            self.found[(owner, target.attr, through_self)].append(target.lineno)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)


#: The user helpers (builders, transcript, tool calls, permissions) hold no
#: engine state; they are moving to a namespace of their own (issue 27).
USER_HELPERS = frozenset({"_builders", "_transcript", "_tool_calls", "_permissions"})


def package_sources() -> dict[str, str]:
    """The engine's modules of ``acp_core``, by name."""
    return {
        path.stem: path.read_text()
        for path in sorted(PACKAGE.glob("*.py"))
        if path.stem not in USER_HELPERS
    }


def writers(sources: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """attribute -> owner (a class family, or ``<foreign>``) -> 'module:line'."""
    modules = {name: Writes(name) for name in sources}
    bases: dict[str, list[str]] = {}
    for name, text in sources.items():
        modules[name].visit(ast.parse(text, name))
        bases.update(modules[name].bases)

    def family(cls: str) -> str:  # the root of its bases inside the sources
        while any(base in bases for base in bases.get(cls, ())):
            cls = next(base for base in bases[cls] if base in bases)
        return cls

    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, visitor in modules.items():
        for (cls, attr, _), lines in visitor.found.items():
            owner = family(cls) if cls is not None else "<foreign>"
            found[attr][owner] += [f"{name}:{line}" for line in lines]
    return found


def two_writers(sources: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """The attributes written from two or more modules (see the module)."""
    bad: dict[str, dict[str, list[str]]] = {}
    for attr, owners in writers(sources).items():
        foreign = owners.get("<foreign>", [])
        groups = [places for owner, places in owners.items() if owner != "<foreign>"]
        for places in groups or [[]]:
            if len({place.split(":")[0] for place in places + foreign}) > 1:
                bad[attr] = dict(owners)
    return bad


def test_no_attribute_of_acp_core_is_written_from_two_modules() -> None:
    assert two_writers(package_sources()) == {}


def test_the_check_finds_a_counter_kept_by_hand_in_two_modules() -> None:
    """The shape issue 27 found: ``backlog`` set by ``EngineState`` and
    counted by hand in ``_receipt``."""
    sources = {
        "_state": "class EngineState:\n    def __init__(self):\n        self.backlog = 0\n",
        "_receipt": "def on(state):\n    state.backlog += 1\n",
    }
    assert set(two_writers(sources)) == {"backlog"}
    del sources["_receipt"]
    assert two_writers(sources) == {}


def test_the_check_finds_a_subclass_writing_its_bases_attribute_elsewhere() -> None:
    sources = {
        "_state": "class EngineState:\n    def shut(self):\n        self.closed = 1\n",
        "_engine": "class Engine(EngineState):\n    def close(self):\n        self.closed = 1\n",
    }
    assert set(two_writers(sources)) == {"closed"}


def test_the_check_finds_an_item_written_through_another_modules_attribute() -> None:
    sources = {
        "_state": "class S:\n    def __init__(self):\n        self.pending = {}\n",
        "_calls": "def f(state, call):\n    state.pending[call.id] = call\n",
        "_lines": "def g(state, ident):\n    del state.pending[ident]\n",
    }
    found = two_writers(sources)
    assert set(found) == {"pending"}
    assert sorted(found["pending"]["<foreign>"]) == ["_calls:2", "_lines:2"]


def test_the_same_name_on_two_classes_of_two_modules_is_two_attributes() -> None:
    sources = {
        "_a": "class A:\n    def __init__(self):\n        self.version = 1\n",
        "_b": "class B:\n    def __init__(self):\n        self.version = 2\n",
    }
    assert two_writers(sources) == {}
