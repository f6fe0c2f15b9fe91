"""The client uses only the session features the agent advertised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._message import CLIENT, Message, as_list, as_obj
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

_SETUP = frozenset({"session/new", "session/load", "session/resume", "session/fork"})


#: The messages the rule looks at.
SCOPE: Scope = scope("client", "request")


@dataclass(frozen=True, slots=True)
class UnadvertisedSessionFeature:
    """``additionalDirectories`` without the capability, an MCP server over
    a transport the agent did not advertise (``_``-prefixed custom
    transports excepted), prompt content of a type outside the prompt
    capabilities."""

    key: str = "unadvertised-session-feature"
    spec: SpecRef = REFS["additional-directories-need-capability"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        agent = state.agent
        if msg.direction != CLIENT or msg.kind != "request" or not agent.known:
            return None
        if msg.method in _SETUP:
            if (
                msg.params.get("additionalDirectories")
                and not agent.additional_directories
            ):
                return Breach(
                    "client sent additionalDirectories, which the agent did not advertise"
                )
            for server in as_list(msg.params.get("mcpServers")):
                kind = _transport(server)
                if not kind.startswith("_") and kind not in agent.mcp_transports:
                    return Breach(
                        f"client sent a {kind} MCP server, which the agent did not advertise",
                        REFS["mcp-transport-needs-capability"],
                    )
        elif msg.method == "session/prompt":
            for block in as_list(msg.params.get("prompt")):
                block_type = as_obj(block).get("type")
                if (
                    isinstance(block_type, str)
                    and not block_type.startswith("_")
                    and block_type not in agent.prompt_content
                ):
                    return Breach(
                        f"client sent {block_type} prompt content, which the agent did not advertise",
                        REFS["prompt-content-capabilities"],
                    )
        return None


def _transport(server: Any) -> str:
    if not isinstance(server, dict):
        return "stdio"
    kind = server.get("type")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return kind if isinstance(kind, str) else "stdio"  # v1's stdio server has no tag
