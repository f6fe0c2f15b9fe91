"""Handler objects: which of their methods answer, and what they may return.

A connection routes each incoming method to the attribute of the handler
object named by the table's handler name (``session/prompt`` ->
``session_prompt``).  The rules here, all checked without an event loop:

- **Stubs are not handlers.** A class that subclasses the generated
  ``Agent`` / ``Client`` Protocol inherits a stub (``...``, returning
  ``None``) for every method it did not override; such a method is treated
  as absent, so the peer gets -32601 Method not found, not ``"result": null``
  (:func:`resolve_handler`).
- **Results are checked.** A request handler's return value must be the
  method's result type (:func:`checked_result`): an instance of that
  generated Struct (or of its twin of the same version in the
  stable/unstable module), or of one member of a result union.  A ``dict``,
  ``None`` or another Struct is not sent: the request is answered -32603 and
  the mismatch logged.  ``None`` is accepted, and answered ``{}``, when the
  result type has no required field (``session/close``,
  ``fs/write_text_file``, ...): that is the empty response, as a peer's
  ``"result": null`` is read as it.  Untyped results (extension methods,
  ``mcp/message``) are not checked.  A notification handler's return value
  is ignored.
- **Misnamed handlers are reported at bind time.** A public method of the
  handler object that matches no handler name of the side's tables (any
  version, stable or unstable) and looks meant as one is logged once per
  class at WARNING, with the likely name: an official SDK name
  (``prompt`` -> ``session_prompt``, ``new_session`` -> ``session_new``), a
  close match (``sesion_prompt``), a method of the other side (a client
  class offered as an agent), or a name in a method namespace
  (``session_``, ``fs_``, ``terminal_``...).  Other public methods
  (``send``, ``run``) are taken for helpers and not reported: a real agent
  has many, and a warning on each start would be noise.  A plain
  (non-``async``) function with a handler's name is reported too.
"""

from __future__ import annotations

import difflib
import inspect
import logging
import sys
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

import msgspec

from ._newer import UNKNOWN_VARIANT_HANDLER
from ._schema import SCHEMA_MODULES, MethodSpec, Schema

__all__ = [
    "HandlerNames",
    "HandlerResultError",
    "ResultRule",
    "checked_result",
    "resolve_handler",
    "unmatched_methods",
    "warn_unmatched",
]

log = logging.getLogger("acp_core")

#: Extension entry points every handler object may define.
EXTENSION_HANDLERS: Final = frozenset(
    ("ext_method", "ext_notification", UNKNOWN_VARIANT_HANDLER)
)

#: The official Python SDK's handler names, and ours (for the bind-time hint).
SDK_NAMES: Final[Mapping[str, str]] = {
    "new_session": "session_new",
    "load_session": "session_load",
    "list_sessions": "session_list",
    "resume_session": "session_resume",
    "close_session": "session_close",
    "fork_session": "session_fork",
    "delete_session": "session_delete",
    "set_session_mode": "session_set_mode",
    "set_config_option": "session_set_config_option",
    "prompt": "session_prompt",
    "cancel": "session_cancel",
    "request_permission": "session_request_permission",
    "read_text_file": "fs_read_text_file",
    "write_text_file": "fs_write_text_file",
    "create_terminal": "terminal_create",
    "release_terminal": "terminal_release",
    "wait_for_terminal_exit": "terminal_wait_for_exit",
    "kill_terminal": "terminal_kill",
    "create_elicitation": "elicitation_create",
    "complete_elicitation": "elicitation_complete",
}


#: Official SDK hooks with no handler counterpart, and what to do instead.
SDK_HOOKS: Final[Mapping[str, str]] = {
    "on_connect": "the official SDK's hook; acp_trio passes the connection to __init__",
}


class HandlerResultError(TypeError):
    """A request handler returned something that is not the method's result type."""


# -- stubs ---------------------------------------------------------------------------


def is_protocol_stub(attr: object) -> bool:
    """Whether ``attr`` (a bound method) is a generated Protocol's own stub."""
    func = getattr(attr, "__func__", attr)
    return getattr(func, "__module__", None) in SCHEMA_MODULES


def resolve_handler(obj: object | None, name: str) -> Any:
    """``obj``'s handler called ``name``, or ``None`` (absent, or a Protocol stub)."""
    if obj is None:
        return None
    attr = getattr(obj, name, None)
    if attr is None or is_protocol_stub(attr):
        return None
    return attr


# -- results -------------------------------------------------------------------------


def _version_of(cls: type) -> int | None:
    module = (
        sys.modules.get(cls.__module__) if cls.__module__ in SCHEMA_MODULES else None
    )
    version = getattr(module, "PROTOCOL_VERSION", None)
    return version if isinstance(version, int) else None


def _members(result: Any) -> tuple[type, ...] | None:
    """The Struct classes a result type admits; ``None``: untyped (anything goes)."""
    if typing.get_origin(result) is typing.Annotated:
        for marker in getattr(result, "__metadata__", ()):
            candidates = getattr(marker, "candidates", None)
            if candidates is not None:  # a by-shape union: its variants, not its wire
                if all(
                    isinstance(c, type) and issubclass(c, msgspec.Struct)
                    for c in candidates
                ):
                    return tuple(candidates)
                return None  # a variant kept raw or any JSON value: not checked
        result = typing.get_args(result)[0]
    if isinstance(result, type):
        if issubclass(result, msgspec.Struct):
            return (result,)
        return None  # object, dict, ...: untyped
    args = typing.get_args(result)
    if args and all(
        isinstance(a, type) and issubclass(a, msgspec.Struct) for a in args
    ):
        return tuple(args)
    return None  # Any, or a union of non-Structs: not checked


class ResultRule:
    """What a handler of one result type may return (see :func:`checked_result`).

    ``exact`` is the one class taken without further look (the fast path);
    ``names`` the class names accepted from the generated modules of
    ``version`` (stable and unstable twins); ``empty`` the value sent for
    ``None`` when the type has no required field (else ``None``: refused).
    """

    __slots__ = (
        "empty",
        "exact",
        "expected",
        "members",
        "names",
        "untyped",
        "version",
    )

    def __init__(self, result: Any) -> None:
        members = _members(result)
        self.untyped = members is None
        self.members = members or ()
        self.exact: type | None = members[0] if members and len(members) == 1 else None
        self.names = frozenset(m.__name__ for m in members or ())
        self.version = _version_of(members[0]) if members else None
        self.expected = " | ".join(sorted(self.names)) or "anything"
        self.empty: Any = None
        if self.exact is not None:
            try:
                self.empty = self.exact()
            except TypeError:  # a required field: None is no answer
                pass

    def check(self, value: Any, method: str) -> Any:
        """The value to encode for ``value``; raises :class:`HandlerResultError`."""
        cls: Any = value.__class__
        if cls is self.exact or self.untyped:
            return value
        if value is None:
            if self.empty is not None:
                return self.empty
        elif isinstance(value, self.members) or (
            isinstance(value, msgspec.Struct)
            and cls.__name__ in self.names
            and _version_of(cls) == self.version
        ):
            return value  # a union member, a subclass, the unstable module's twin
        got = "None" if value is None else f"{cls.__module__}.{cls.__qualname__}"
        raise HandlerResultError(
            f"the handler of {method} returned {got}; expected "
            f"acp_schema v{self.version} {self.expected}"
        )


_RULES: dict[Any, ResultRule] = {}


def result_rule(result: Any) -> ResultRule:
    """The (cached) :class:`ResultRule` of a result type."""
    try:
        return _RULES[result]
    except KeyError:
        rule = _RULES[result] = ResultRule(result)
        return rule
    except TypeError:  # an unhashable type annotation: not cached
        return ResultRule(result)


def checked_result(method: MethodSpec, value: Any) -> Any:
    """What to encode as the answer of ``method`` for the handler's ``value``.

    Raises :class:`HandlerResultError` (the request is answered -32603) when
    ``value`` is not the method's result type.
    """
    result = method.result
    if type(value) is result:  # the common case, before any lookup
        return value
    return result_rule(result).check(value, method.name)


# -- bind time -----------------------------------------------------------------------


class HandlerNames:
    """The handler names of one side (``own``) and of the other (``other``),
    over every generated module already imported (each version, stable and
    unstable: a method valid in any of them is no typo), and the namespaces
    of the own side's methods (``session``, ``fs``, ...)."""

    __slots__ = ("other", "own", "prefixes")

    def __init__(self, schema: Schema) -> None:
        agent_side = schema.side == "agent"
        own = {m.handler for m in schema.incoming.values()}
        other = {m.handler for m in schema.outgoing.values()}
        for name in SCHEMA_MODULES:
            module = sys.modules.get(name)
            if module is None:
                continue
            agent = getattr(module, "AGENT_METHODS_UNSTABLE", module.AGENT_METHODS)
            client = getattr(module, "CLIENT_METHODS_UNSTABLE", module.CLIENT_METHODS)
            own.update(m.handler for m in (agent if agent_side else client).values())
            other.update(m.handler for m in (client if agent_side else agent).values())
        self.own = frozenset(own | EXTENSION_HANDLERS)
        self.other = frozenset(other - own)
        self.prefixes = tuple(
            sorted({n.split("_", 1)[0] + "_" for n in own if "_" in n})
        )

    def key(self) -> tuple[frozenset[str], frozenset[str]]:
        return self.own, self.other


def _public_functions(cls: type) -> Iterable[tuple[str, Any]]:
    """The public functions of ``cls`` and its bases (not ``object``'s, the
    generated Protocols' or ``typing``'s)."""
    seen: set[str] = set()
    for base in cls.__mro__:
        if base is object or base.__module__ in (*SCHEMA_MODULES, "typing"):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, (staticmethod, classmethod)):
                value = cast(Any, value).__func__
            if inspect.isfunction(value):
                yield name, value


def unmatched_methods(cls: type, names: HandlerNames) -> list[str]:
    """One message per public method of ``cls`` that looks meant as a handler
    but will never be called (see the module docstring for what is reported)."""
    known = names.own
    problems: list[str] = []
    for name, func in _public_functions(cls):
        if name in known:
            if not inspect.iscoroutinefunction(func) and not is_protocol_stub(func):
                problems.append(f"{name} is not an async method (handlers are awaited)")
            continue
        hint = SDK_NAMES.get(name)
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        if hint is not None and hint in known:
            why = f"the official SDK's name for {hint}?"
        elif name in SDK_HOOKS:
            why = SDK_HOOKS[name]
        elif name in names.other:
            why = "a method of the other side: is this class offered on the right side?"
        elif close:
            why = f"did you mean {close[0]}?"
        elif name.startswith(names.prefixes):
            why = "not in any version's tables"
        else:
            continue  # a helper (send, replay, run...)
        problems.append(f"{name} matches no ACP method, so it is never called ({why})")
    return problems


_warned: set[tuple[type, tuple[frozenset[str], frozenset[str]]]] = set()

#: :class:`HandlerNames` by schema (shared per process, ``Schema.load``),
#: with the number of generated modules imported when it was built.
_NAMES: dict[Schema, tuple[int, HandlerNames]] = {}


def handler_names(schema: Schema) -> HandlerNames:
    """The (cached) :class:`HandlerNames` of ``schema``: built again only
    once another generated module was imported (its names count too)."""
    loaded = sum(1 for name in SCHEMA_MODULES if name in sys.modules)
    found = _NAMES.get(schema)
    if found is not None and found[0] == loaded:
        return found[1]
    names = HandlerNames(schema)
    if len(_NAMES) >= 64:  # schemas built by hand, not loaded: kept bounded
        _NAMES.clear()
    _NAMES[schema] = (loaded, names)
    return names


def warn_unmatched(obj: object | None, schema: Schema) -> None:
    """Log, once per class, the public methods of ``obj`` no method will reach."""
    if obj is None:
        return
    cls = type(obj)
    names = handler_names(schema)
    if (cls, names.key()) in _warned:
        return
    _warned.add((cls, names.key()))
    for problem in unmatched_methods(cls, names):
        log.warning(
            "handler class %s.%s: %s",
            cls.__module__,
            cls.__qualname__,
            problem,
        )
