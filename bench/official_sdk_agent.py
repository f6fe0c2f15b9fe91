"""Minimal ACP agent built on the official pydantic SDK (agent-client-protocol 0.12.1).

Run over stdio:  python bench/official_sdk_agent.py
It answers initialize, session/new and session/prompt; for every prompt it
streams 5 `agent_message_chunk` session/update notifications (messageId
"msg_<turn>", the texts of runtime_workload.py), then returns the
PromptResponse (stopReason=end_turn).
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    text_block,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    Implementation,
    PromptCapabilities,
)
from runtime_workload import CHUNKS, chunk_text, message_id


class EchoAgent:
    """Implements the subset of the `acp.Agent` protocol we need (duck-typed)."""

    def __init__(self) -> None:
        self._conn: Client | None = None
        self._turns = 0

    # Called by AgentSideConnection.__init__ with the connection; it is the
    # agent's handle to call the *client* (session_update, request_permission, ...).
    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
            ),
            agent_info=Implementation(name="official-sdk-bench-agent", version="0.1.0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        return NewSessionResponse(session_id="sess_bench")  # as the other agents

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> PromptResponse:
        assert self._conn is not None
        mid = message_id(self._turns)
        self._turns += 1
        for i in range(CHUNKS):
            # AgentSideConnection.session_update -> notify_model -> serialize_params -> json.dumps
            await self._conn.session_update(
                session_id=session_id,
                update=AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=text_block(chunk_text(i)),
                    message_id=mid,
                ),
            )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


async def main() -> None:
    # run_agent() wires sys.stdin/sys.stdout (acp.stdio_streams) into an
    # AgentSideConnection and serves until stdin hits EOF.
    await run_agent(EchoAgent())


if __name__ == "__main__":
    asyncio.run(main())
