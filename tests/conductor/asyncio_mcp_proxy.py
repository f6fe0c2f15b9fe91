"""examples/proxy_mcp_tool.py on acp_asyncio: a proxy adding one MCP tool."""

from __future__ import annotations

import asyncio

import acp_asyncio
from acp_mcp import McpProvider
from acp_schema import v1
from mcp.server.mcpserver import MCPServer

tools = MCPServer("asyncio-tools")


@tools.tool()
def word_count(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


class AddsATool(acp_asyncio.Proxy):
    def __init__(self) -> None:
        self.provider = McpProvider()
        self.server = self.provider.offer(tools)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        params.mcp_servers.append(self.server)
        return await self.successor.session_new(params)

    async def mcp_message(self, params: v1.MessageMcpRequest) -> v1.MessageMcpResponse:
        if not self.provider.owns(params.server_id):
            return await self.predecessor.mcp_message(params)
        return await self.provider.answer(params, notify=self.successor.mcp_message)


if __name__ == "__main__":
    asyncio.run(acp_asyncio.serve_proxy_stdio(AddsATool()))
