"""What the runtime's protocol rules need from one version's generated schema.

A few rules read fields of the generated types: the agent capability that
gates a method (``sessionCapabilities.resume``), ``stopReason`` to answer a
cancelled prompt ``cancelled``, the ``cancelled`` permission outcome.  They
name those fields by the protocol's own (wire and attribute) names, never a
generated class (see `_vocabulary`).  A version whose schema lacks one (a
later draft moved or dropped it) loses that rule only: the rule is skipped
and a WARNING says so once per version and rule; the import, the other
rules and the other versions go on::

    support(v2).declares("agent", "session", "resume")   # False in 2.0.0-alpha.3
    support(v1).params_declare("fs_read_text_file", "path")   # True

Checked lazily, per module, and cached.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import msgspec

from ._vocabulary import NotInSchema, members, vocabulary

__all__ = ["Support", "support"]

log = logging.getLogger("acp_core")

#: Where each side's capabilities sit in ``initialize`` (v1 name, v2 name).
_CAPABILITY_FIELDS = {
    "agent": ("agentCapabilities", "capabilities"),  # in the result
    "client": ("clientCapabilities", "capabilities"),  # in the params
}


#: The method tables searched by handler name, the unstable surface's first
#: (a superset of the stable one).
_TABLES = (
    "AGENT_METHODS_UNSTABLE",
    "CLIENT_METHODS_UNSTABLE",
    "PROTOCOL_METHODS_UNSTABLE",
    "AGENT_METHODS",
    "CLIENT_METHODS",
    "PROTOCOL_METHODS",
)


def _structs(hint: Any) -> list[type[msgspec.Struct]]:
    return [m for m in members(hint) if issubclass(m, msgspec.Struct)]


class Support:
    """The rules of the runtime one generated module can serve."""

    def __init__(self, module: Any) -> None:
        self.vocab = vocabulary(module)
        self.module = module
        self._warned: set[str] = set()
        self._declared: dict[tuple[str, ...], bool] = {}
        self._methods: dict[tuple[str, str], Any] = {}

    def __repr__(self) -> str:
        return f"<Support v{self.vocab.version} (schema {self.vocab.schema_version})>"

    def warn(self, rule: str, why: str) -> None:
        """Log, once per rule, that this version's schema cannot serve ``rule``."""
        if rule in self._warned:
            return
        self._warned.add(rule)
        log.warning(
            "protocol v%d (schema %s): %s; %s",
            self.vocab.version,
            self.vocab.schema_version,
            why,
            rule,
        )

    # -- capabilities ------------------------------------------------------------

    def _capabilities_types(self, side: Literal["agent", "client"]) -> list[Any]:
        try:
            method = self.vocab.method("initialize")
        except NotInSchema:
            return []
        root = method.result if side == "agent" else method.params
        for wire in _CAPABILITY_FIELDS[side]:
            try:
                return _structs(self.vocab.field(root, wire))
            except NotInSchema:
                continue
        return []

    def declares(self, side: Literal["agent", "client"], *attrs: str) -> bool:
        """Whether ``side``'s capabilities type declares the (Python attribute)
        path ``attrs``: ``declares("agent", "session_capabilities", "resume")``."""
        key = (side, *attrs)
        found = self._declared.get(key)
        if found is None:
            found = self._declared[key] = _has_path(
                self._capabilities_types(side), attrs
            )
        return found

    # -- params ------------------------------------------------------------------

    def method_of(self, handler: str) -> Any:
        """The generated ``Method`` whose handler is ``handler`` (either side,
        unstable tables too), or None if this schema has none."""
        key = ("handler", handler)
        if key not in self._methods:
            self._methods[key] = next(
                (
                    m
                    for table in _TABLES
                    for m in getattr(self.module, table, {}).values()
                    if m.handler == handler
                ),
                None,
            )
        return self._methods[key]

    def params_declare(self, handler: str, *attrs: str) -> bool:
        """Whether the params of ``handler``'s method declare the (Python
        attribute) path ``attrs``: ``params_declare("session_new",
        "mcp_servers", "command")`` (through the union of server kinds)."""
        method = self.method_of(handler)
        return method is not None and _has_path(_structs(method.params), attrs)

    # -- answers the runtime writes itself ------------------------------------

    @property
    def prompt_stop_reason(self) -> bool:
        """``session/prompt``'s result has ``stopReason`` (to answer ``cancelled``)."""
        return self._result_has("session/prompt", "stop_reason")

    @property
    def permission_cancelled(self) -> bool:
        """``session/request_permission``'s result has an ``outcome`` with a
        ``cancelled`` variant (the answer to a cancelled session's requests)."""
        try:
            result = self.vocab.method("session/request_permission").result
            outcome = self.vocab.field(result, "outcome")
            self.vocab.variant(outcome, "cancelled", "permission outcome")
        except NotInSchema:
            return False
        return True

    def _result_has(self, wire_method: str, attr: str) -> bool:
        try:
            result = self.vocab.method(wire_method).result
        except NotInSchema:
            return False
        return any(attr in cls.__struct_fields__ for cls in _structs(result))


def _has_path(types_: list[Any], attrs: tuple[str, ...]) -> bool:
    """Whether one of ``types_`` (Structs) has the attribute path ``attrs``."""
    if not attrs:
        return True
    head, rest = attrs[0], attrs[1:]
    for cls in types_:
        for info in msgspec.structs.fields(cls):
            if info.name == head and (not rest or _has_path(_structs(info.type), rest)):
                return True
    return False


_SUPPORT: dict[Any, Support] = {}


def support(module: Any) -> Support:
    """The (cached) :class:`Support` of a generated module."""
    found = _SUPPORT.get(module)
    if found is None:
        found = _SUPPORT[module] = Support(module)
    return found
