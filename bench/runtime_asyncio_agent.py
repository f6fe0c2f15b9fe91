"""The benchmark agent on acp_asyncio: ``python bench/runtime_asyncio_agent.py``.

Answers initialize, session/new and session/prompt; each prompt is answered
after ``CHUNKS`` agent_message_chunk updates (see runtime_workload.py).  The
same agent as runtime_acp_agent.py, on asyncio.
"""

from __future__ import annotations

from runtime_workload import (
    AGENT_NAME,
    CHUNKS,
    VERSION,
    chunk_text,
    message_id,
    use_repo_packages,
)

use_repo_packages()

import asyncio  # noqa: E402

import acp_asyncio  # noqa: E402
from acp_schema import v1  # noqa: E402


class BenchAgent:
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client
        self.turns = 0

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(
                load_session=False,
                prompt_capabilities=v1.PromptCapabilities(embedded_context=True),
            ),
            agent_info=v1.Implementation(name=AGENT_NAME, version=VERSION),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="sess_bench")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        mid = message_id(self.turns)
        self.turns += 1
        for k in range(CHUNKS):
            await self.client.session_update(
                v1.SessionNotification(
                    session_id=params.session_id,
                    update=v1.AgentMessageChunk(
                        content=v1.TextContent(text=chunk_text(k)), message_id=mid
                    ),
                )
            )
        return v1.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp_asyncio.serve_agent_stdio({1: BenchAgent}))
