"""What each side advertised in ``initialize``, as acp_core reads it.

The ``initialize`` params and result are decoded with the negotiated
version's schema and handed to acp_core's capability rules (the ones the
runtimes refuse calls by): :class:`acp_core.AgentCallChecks`
for the agent's session methods, ``additionalDirectories``, MCP transports
and prompt content; ``check_client_call`` for the client's ``fs/*``,
``terminal/*`` and elicitation methods.  v1 and v2 shape capabilities
differently; acp_core knows both, these records give the rules one view.
A capability is advertised when present and not ``null`` / ``false``
(initialization.mdx: omitted capabilities are unsupported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import msgspec
from acp_core import (
    CLIENT_CHECKED,
    NONE_ADVERTISED,
    AgentCallChecks,
    CapabilityError,
    Schema,
    SchemaModule,
    VersionUnavailableError,
    agent_capabilities,
    check_client_call,
    client_capabilities,
    fitting_draft,
)

__all__ = ["AgentFeatures", "ClientFeatures", "agent_features", "client_features"]


@dataclass(frozen=True, slots=True)
class AgentFeatures:
    """The agent's ``initialize`` answer, as the rules need it: ``gated``,
    the session methods a capability gates (in acp_core's list), and
    ``methods``, those of them the agent advertised.  ``known`` is false
    before an answer that decodes with its version's schema: nothing is
    held against the client then (as acp_core refuses nothing)."""

    known: bool = False
    methods: frozenset[str] = frozenset()
    gated: frozenset[str] = frozenset()
    additional_directories: bool = False
    mcp_transports: frozenset[str] = frozenset({"stdio"})
    prompt_content: frozenset[str] = frozenset({"text", "resource_link"})
    auth_method_types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """The client's ``initialize`` request, as the rules need it: ``gated``,
    the client methods a capability gates, ``methods``, those advertised;
    ``capabilities`` the typed capabilities object (``None`` if the request
    did not decode) for the rules that read params (elicitation modes)."""

    methods: frozenset[str] = frozenset()
    gated: frozenset[str] = frozenset()
    auth_terminal: bool = False
    raw: dict[str, Any] = field(default_factory=dict[str, Any])
    capabilities: Any = None
    version: int = 1


def _wire(handler: str) -> str:
    return handler.replace("_", "/", 1)


def _typed(version: int, value: dict[str, Any], *, result: bool) -> Any:
    """``initialize``'s params (or result) as ``version``'s type, or ``None``."""
    try:
        schema = Schema.load(version, "agent")
    except (ValueError, VersionUnavailableError):
        return None
    raw = msgspec.json.encode(value)
    draft = fitting_draft(schema.module, "result" if result else "params", raw)
    if draft is not None:  # another draft of this version (both say its number)
        schema = Schema(cast(SchemaModule, draft), "agent")
    method = schema.incoming.get("initialize")
    if method is None:
        return None
    target = method.result if result else method.params
    try:
        return schema.decode(raw, target)
    except Exception:  # does not fit: the schema check reports it
        return None


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def agent_features(version: int, result: dict[str, Any]) -> AgentFeatures:
    """From an ``initialize`` result of protocol ``version``."""
    typed = _typed(version, result, result=True)
    caps = None if typed is None else agent_capabilities(typed)
    checks = AgentCallChecks(version, caps)
    content = {"text", "resource_link"}
    content |= {tag for tag, on in checks.content.items() if on}
    auth_types = tuple(
        str(_obj(m).get("type", "agent"))
        for m in result.get("authMethods") or ()  # pyright: ignore[reportUnknownVariableType]
    )
    return AgentFeatures(
        known=caps is not None,
        methods=frozenset(_wire(h) for h, on in checks.needs.items() if on),
        gated=frozenset(_wire(h) for h in checks.needs),
        additional_directories=checks.additional_directories,
        mcp_transports=frozenset(t for t, on in checks.mcp_ok.items() if on),
        prompt_content=frozenset(content),
        auth_method_types=auth_types,
    )


def client_features(version: int, params: dict[str, Any]) -> ClientFeatures:
    """From an ``initialize`` request's params, read as protocol ``version``."""
    typed = _typed(version, params, result=False)
    caps = NONE_ADVERTISED if typed is None else client_capabilities(typed)
    gated: set[str] = set()
    methods: set[str] = set()
    for handler in CLIENT_CHECKED - {"elicitation_create"}:
        gated.add(_wire(handler))
        try:
            check_client_call(version, handler, None, caps)
        except CapabilityError:
            continue
        methods.add(_wire(handler))
    raw = _obj(params.get("capabilities" if version >= 2 else "clientCapabilities"))
    return ClientFeatures(
        methods=frozenset(methods),
        gated=frozenset(gated),
        auth_terminal=_obj(raw.get("auth")).get("terminal") is True,
        raw=raw,
        capabilities=None if typed is None else caps,
        version=version,
    )
