"""An agent that, on each prompt, calls every tool of every MCP server it was
given with ``{"text": PROMPT}`` and says what each answered.

``python mcp_agent.py acp``: it advertises ``mcpCapabilities.acp`` and calls
``"type": "acp"`` servers over the ACP connection (``acp_mcp.AcpTransport``);
``stdio`` / ``stdio-legacy``: it advertises nothing, so it is given stdio
servers, which it runs with the ``mcp`` package's stdio client (its
``auto`` mode, which opens with ``server/discover``, or ``legacy``, which
opens with the ``initialize`` handshake).
"""

from __future__ import annotations

import sys
from typing import Any

import acp_trio
import mcp
import trio
from acp_mcp import MCP_PROTOCOL_VERSION, AcpTransport
from acp_schema import v1

MODE = sys.argv[1] if len(sys.argv) > 1 else "acp"


class McpAgent(v1.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.ClientUnstable]) -> None:
        self.client = conn.client
        self.sessions: dict[str, list[v1.McpServer]] = {}

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(
                mcp_capabilities=v1.McpCapabilities(acp=MODE == "acp")
            ),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        sid = f"s{len(self.sessions) + 1}"
        self.sessions[sid] = list(params.mcp_servers)
        return v1.NewSessionResponse(session_id=sid)

    def _client_for(self, server: v1.McpServer) -> mcp.Client:
        if isinstance(server, v1.McpServerAcp):
            transport = AcpTransport(server.server_id, self.client.mcp_message)
            return mcp.Client(transport, mode=MCP_PROTOCOL_VERSION)
        if isinstance(server, v1.McpServerStdio):
            stdio = mcp.StdioServerParameters(command=server.command, args=server.args)
            return mcp.Client(
                stdio, mode="legacy" if MODE == "stdio-legacy" else "auto"
            )
        raise ValueError(f"no transport for {server!r}")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        sid = params.session_id
        text = " ".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        for server in self.sessions.get(sid, []):
            name = getattr(server, "name", "?")
            async with self._client_for(server) as tools:
                for tool in (await tools.list_tools()).tools:
                    result: Any = await tools.call_tool(tool.name, {"text": text})
                    said = " ".join(
                        c.text
                        for c in result.content
                        if isinstance(c, mcp.types.TextContent)
                    )
                    chunk = acp_trio.agent_text(f"{name}/{tool.name}: {said}\n")
                    await self.client.session_update(acp_trio.notification(sid, chunk))
        return v1.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    trio.run(lambda: acp_trio.serve_agent_stdio(McpAgent, unstable=True))
