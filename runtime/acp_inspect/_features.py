"""What each side advertised in ``initialize``, read from the raw JSON.

v1 and v2 shape their capabilities differently (v1 ``agentCapabilities`` with
``loadSession`` and ``sessionCapabilities``; v2 ``capabilities.session`` with
``load``, ``mcp`` and ``prompt`` inside); these records give the rules one view.
A capability is advertised when present and not ``null`` / ``false``
(initialization.mdx: omitted capabilities are unsupported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AgentFeatures", "ClientFeatures", "agent_features", "client_features"]


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _on(value: Any) -> bool:
    return value is not None and value is not False


@dataclass(frozen=True, slots=True)
class AgentFeatures:
    """The agent's ``initialize`` answer, as the rules need it."""

    methods: frozenset[str] = frozenset()  # session methods needing a capability
    additional_directories: bool = False
    mcp_transports: frozenset[str] = frozenset({"stdio"})
    prompt_content: frozenset[str] = frozenset({"text", "resource_link"})
    auth_method_types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """The client's ``initialize`` request, as the rules need it."""

    methods: frozenset[str] = frozenset()  # client methods the agent may call
    auth_terminal: bool = False
    raw: dict[str, Any] = field(default_factory=dict[str, Any])


_SESSION_METHODS = {
    "list": "session/list",
    "resume": "session/resume",
    "close": "session/close",
    "delete": "session/delete",
    "fork": "session/fork",
}


def agent_features(version: int, result: dict[str, Any]) -> AgentFeatures:
    """From an ``initialize`` result of protocol ``version``."""
    methods: set[str] = set()
    mcp = {"stdio"}
    content = {"text", "resource_link"}
    if version >= 2:
        session = _obj(_obj(result.get("capabilities")).get("session"))
        if _on(session.get("load")):
            methods.add("session/load")
        prompt = _obj(session.get("prompt"))
        mcp_caps = _obj(session.get("mcp"))
        mcp = {name for name in ("stdio", "http") if _on(mcp_caps.get(name))}
    else:
        caps = _obj(result.get("agentCapabilities"))
        session = _obj(caps.get("sessionCapabilities"))
        if caps.get("loadSession") is True:
            methods.add("session/load")
        prompt = _obj(caps.get("promptCapabilities"))
        mcp_caps = _obj(caps.get("mcpCapabilities"))
        mcp |= {name for name in ("http", "sse") if mcp_caps.get(name) is True}
    for key, method in _SESSION_METHODS.items():
        if _on(session.get(key)):
            methods.add(method)
    for key, block in (
        ("image", "image"),
        ("audio", "audio"),
        ("embeddedContext", "resource"),
    ):
        if prompt.get(key) is True:
            content.add(block)
    auth_types = tuple(
        str(_obj(m).get("type", "agent"))
        for m in result.get("authMethods") or ()  # pyright: ignore[reportUnknownVariableType]
    )
    return AgentFeatures(
        methods=frozenset(methods),
        additional_directories=_on(session.get("additionalDirectories")),
        mcp_transports=frozenset(mcp),
        prompt_content=frozenset(content),
        auth_method_types=auth_types,
    )


def client_features(version: int, params: dict[str, Any]) -> ClientFeatures:
    """From an ``initialize`` request's params, read as protocol ``version``."""
    if version >= 2:
        caps = _obj(params.get("capabilities"))
        # v2 has no fs / terminal methods: nothing the agent may call is gated here
        return ClientFeatures(
            auth_terminal=_obj(caps.get("auth")).get("terminal") is True, raw=caps
        )
    caps = _obj(params.get("clientCapabilities"))
    fs = _obj(caps.get("fs"))
    methods: set[str] = set()
    if fs.get("readTextFile") is True:
        methods.add("fs/read_text_file")
    if fs.get("writeTextFile") is True:
        methods.add("fs/write_text_file")
    if caps.get("terminal") is True:
        methods |= {
            "terminal/create",
            "terminal/output",
            "terminal/release",
            "terminal/wait_for_exit",
            "terminal/kill",
        }
    return ClientFeatures(
        methods=frozenset(methods),
        auth_terminal=_obj(caps.get("auth")).get("terminal") is True,
        raw=caps,
    )
