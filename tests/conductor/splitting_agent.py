"""An agent that streams a secret cut in the middle, over several chunks
(``python splitting_agent.py``, or ``SplittingAgent`` in this process)."""

from __future__ import annotations

import acp_trio
import trio
from acp_schema import v1

SECRET = "sk-live0123456789abcdefXYZ"
PIECES = ("the key: ", SECRET[:9], SECRET[9:] + " done", " last")


class SplittingAgent(v1.Agent):
    #: every prompt any instance received
    seen: list[list[v1.ContentBlock]] = []  # noqa: RUF012

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        SplittingAgent.seen.append(params.prompt)
        for piece in PIECES:
            update = acp_trio.agent_text(piece, message_id="m")
            await self.client.session_update(acp_trio.notification("s1", update))
        return v1.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    trio.run(acp_trio.serve_agent_stdio, SplittingAgent)
