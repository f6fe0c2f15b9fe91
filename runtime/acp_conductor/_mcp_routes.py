"""What the conductor knows of MCP-over-ACP, without I/O: who offered which server.

The rules (RFDs ``mcp-over-acp`` and ``proxy-chains``, spoken as schema
2.4.0 defines ``mcp/message``):

- a ``session/new`` (``session/load``, ``session/resume``, ``session/fork``)
  going towards the agent that declares ``{"type": "acp", "serverId": ID}``
  records ID as offered by the hop it came from (the client, or the proxy
  that added it); the first to declare an ID keeps it;
- an ``mcp/message`` request is sent straight to the hop that offered its
  ``serverId`` (to a proxy wrapped in ``proxy/successor``: it comes from the
  proxy's successor side), whoever sent it; an unknown ``serverId`` is
  answered -33001, an ``mcp/message`` without ``serverId`` / ``requestId`` /
  ``method`` -32602;
- an ``mcp/message`` notification (the provider's, for an active request)
  goes to the hop whose request it belongs to;
- the agent's answer to ``initialize`` is given ``mcpCapabilities.acp:
  true`` on its way up (the conductor serves ``"type": "acp"`` servers for
  every agent) when the agent does not advertise it; then every ``"type":
  "acp"`` server reaching the agent is rewritten to a stdio server: the
  conductor's bridge (:mod:`._mcp_bridge`), a small process relaying MCP
  lines to the conductor, which sends them on as ``mcp/message``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

import msgspec

__all__ = [
    "DEFAULT_MAX_MCP_ACTIVE",
    "DEFAULT_MAX_MCP_SERVERS",
    "MCP_MESSAGE",
    "SERVER_UNAVAILABLE",
    "McpAddress",
    "McpRoutes",
    "decode_address",
]

MCP_MESSAGE: Final = "mcp/message"
#: The binding's "no registration for this server id" (TypeScript SDK 2.4.0).
SERVER_UNAVAILABLE: Final = -33001
#: Servers remembered (oldest forgotten first past it).
DEFAULT_MAX_MCP_SERVERS: Final = 4096
#: MCP requests in flight across the chain whose notifications are routed.
DEFAULT_MAX_MCP_ACTIVE: Final = 4096
#: The methods whose params declare a session's ``mcpServers``.
SESSION_SETUP: Final = frozenset(
    {"session/new", "session/load", "session/resume", "session/fork"}
)

#: ``bridge_command(server_id)``: the argv of a stdio MCP server that relays
#: to the conductor's bridge for ``server_id``.
BridgeCommand = Callable[[str], list[str]]


class McpAddress(msgspec.Struct):
    """What routes an ``mcp/message``: its server and inner request."""

    server_id: str = msgspec.field(name="serverId")
    request_id: str = msgspec.field(name="requestId")
    method: str


_address = msgspec.json.Decoder(McpAddress)
_object = msgspec.json.Decoder(dict[str, Any])


def _obj(value: Any) -> dict[str, Any] | None:
    """``value`` if it is a JSON object."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def decode_address(params: msgspec.Raw | msgspec.UnsetType | None) -> McpAddress | None:
    """The address of an ``mcp/message``'s params, or ``None`` if it has none."""
    if params is None or params is msgspec.UNSET:
        return None
    try:
        return _address.decode(params)
    except msgspec.MsgspecError:
        return None


@dataclass(slots=True)
class Rewritten:
    """Params rewritten for the agent (``None``: unchanged)."""

    params: msgspec.Raw | None


class McpRoutes:
    """The MCP servers offered in one chain and the MCP requests in flight."""

    def __init__(
        self,
        bridge_command: BridgeCommand | None,
        *,
        max_servers: int = DEFAULT_MAX_MCP_SERVERS,
        max_active: int = DEFAULT_MAX_MCP_ACTIVE,
    ) -> None:
        self.bridge_command = bridge_command
        self.max_servers = max_servers
        self.max_active = max_active
        self.offers: dict[str, int] = {}  # server id -> the hop that offered it
        self.active: dict[
            tuple[str, str], int
        ] = {}  # (server, request) -> consumer hop
        #: the agent advertised ``mcpCapabilities.acp`` (None: not yet known)
        self.agent_speaks_acp: bool | None = None

    @property
    def bridging(self) -> bool:
        """Whether ``"type": "acp"`` servers reach the agent through the bridge."""
        return self.bridge_command is not None and self.agent_speaks_acp is False

    def session_setup(
        self, hop: int, params: msgspec.Raw | None, to_agent: bool
    ) -> Rewritten:
        """A session setup request from ``hop``: note its acp servers; for the
        agent, when bridging, their stdio replacements."""
        if params is None or b'"acp"' not in bytes(params):
            return Rewritten(None)
        try:
            body = _object.decode(params)
        except msgspec.MsgspecError:
            return Rewritten(None)
        listed = body.get("mcpServers")
        if not isinstance(listed, list):
            return Rewritten(None)
        servers: list[Any] = listed  # pyright: ignore[reportUnknownVariableType]
        changed = False
        for index, entry in enumerate(servers):
            server = _obj(entry)
            if server is None or server.get("type") != "acp":
                continue
            ident = server.get("serverId")
            if not isinstance(ident, str):
                continue
            if ident not in self.offers:
                if len(self.offers) >= self.max_servers:
                    del self.offers[next(iter(self.offers))]
                self.offers[ident] = hop
            if to_agent and self.bridging and self.bridge_command is not None:
                argv = self.bridge_command(ident)
                servers[index] = {
                    "name": server.get("name", ident),
                    "command": argv[0],
                    "args": argv[1:],
                    "env": [],
                }
                changed = True
        if not changed:
            return Rewritten(None)
        return Rewritten(msgspec.Raw(msgspec.json.encode(body)))

    def initialized(
        self, result: msgspec.Raw | msgspec.UnsetType
    ) -> msgspec.Raw | None:
        """The agent answered ``initialize``: its result with
        ``mcpCapabilities.acp: true`` when the conductor bridges (``None``:
        unchanged)."""
        if result is msgspec.UNSET:
            return None
        try:
            body = _object.decode(result)
        except msgspec.MsgspecError:
            return None
        caps = _obj(body.setdefault("agentCapabilities", {}))
        if caps is None:
            return None
        mcp = _obj(caps.setdefault("mcpCapabilities", {}))
        if mcp is None:
            return None
        self.agent_speaks_acp = mcp.get("acp") is True
        if not self.bridging:
            return None
        mcp["acp"] = True
        return msgspec.Raw(msgspec.json.encode(body))

    def provider(self, address: McpAddress) -> int | None:
        """The hop that offered ``address``'s server, if any."""
        return self.offers.get(address.server_id)

    def begin(self, address: McpAddress, consumer: int) -> tuple[str, str] | None:
        """A request in flight for ``consumer``: its key (``None``: past the bound,
        its notifications are not routed)."""
        key = (address.server_id, address.request_id)
        if key not in self.active and len(self.active) >= self.max_active:
            return None
        self.active[key] = consumer
        return key

    def end(self, key: tuple[str, str]) -> None:
        """The request ``key`` was answered."""
        self.active.pop(key, None)

    def consumer(self, address: McpAddress) -> int | None:
        """Where a notification for ``address``'s request goes."""
        return self.active.get((address.server_id, address.request_id))
