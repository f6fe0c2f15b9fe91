"""acp_mcp: MCP servers over the ACP connection (``"type": "acp"``, ``mcp/message``).

The MCP-over-ACP transport of the upstream RFD ``mcp-over-acp``, spoken as
schema 2.4.0 defines it (one ``mcp/message`` request per MCP request, no
``mcp/connect``): a component serves servers of the ``mcp`` package
(:class:`McpProvider`) and a consumer calls them with the ``mcp`` package's
client (:class:`AcpTransport`).  The conductor (``acp_conductor``) routes
``mcp/message`` to the component that offered the server and bridges it to
stdio for an agent that does not advertise ``mcpCapabilities.acp``.  Needs
the ``mcp`` extra: ``pip install "acp-msgspec[mcp]"``.  See
``docs/proxies.md``.
"""

from ._caller import AcpTransport, McpCall
from ._provider import (
    BACKEND_FAILED,
    DEFAULT_MAX_ACTIVE,
    MCP_PROTOCOL_VERSION,
    RESOURCE_LIMIT_EXCEEDED,
    SERVER_UNAVAILABLE,
    McpNotify,
    McpProvider,
)

__all__ = [
    "BACKEND_FAILED",
    "DEFAULT_MAX_ACTIVE",
    "MCP_PROTOCOL_VERSION",
    "RESOURCE_LIMIT_EXCEEDED",
    "SERVER_UNAVAILABLE",
    "AcpTransport",
    "McpCall",
    "McpNotify",
    "McpProvider",
]
