"""A proxy that adds one MCP tool to every session, served from this process.

``python -m acp_conductor --proxy "python examples/proxy_mcp_tool.py" -- AGENT``
puts it in front of any agent. On ``session/new`` it adds its MCP server to
the session's ``mcpServers`` as ``{"type": "acp", "name": ..., "serverId":
...}``: the agent reaches it over the ACP connection it already has (MCP
over ACP), each MCP request one ``mcp/message`` request that the conductor
routes back here. An agent that does not speak MCP over ACP gets a stdio MCP
server instead, which the conductor bridges to the same ``mcp/message``: the
proxy cannot tell the difference.

The tool is an ordinary server of the ``mcp`` package (``pip install
"acp-msgspec[mcp]"``); ``acp_mcp.McpProvider`` serves it.
"""

from __future__ import annotations

import acp_trio
import trio
from acp_mcp import McpProvider
from acp_schema import v1
from mcp.server.mcpserver import MCPServer

tools = MCPServer("project-tools")


@tools.tool()
def word_count(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


class AddsATool(acp_trio.Proxy):
    def __init__(self) -> None:
        self.provider = McpProvider()
        self.server = self.provider.offer(tools)  # the {"type": "acp"} declaration

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        params.mcp_servers.append(self.server)
        return await self.successor.session_new(params)

    async def mcp_message(self, params: v1.MessageMcpRequest) -> v1.MessageMcpResponse:
        """The agent calls an MCP server: ours is answered here."""
        if not self.provider.owns(params.server_id):  # someone else's: pass it on
            return await self.predecessor.mcp_message(params)
        return await self.provider.answer(params, notify=self.successor.mcp_message)


if __name__ == "__main__":
    trio.run(acp_trio.serve_proxy_stdio, AddsATool())
