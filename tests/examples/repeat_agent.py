"""An ACP v1 agent that repeats itself, as real agents do.

``python repeat_agent.py``: during a turn it echoes the user's prompt back as
``user_message_chunk``s, reports a tool call's status twice, sends updates
that change nothing visible (``rawOutput`` only), then completes the tool
call twice with the same content.
"""

from __future__ import annotations

import acp_trio
import trio
from acp_schema import v1


class RepeatAgent(v1.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="repeat-agent", version="1"),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def send(self, update: v1.SessionUpdate) -> None:
        await self.client.session_update(acp_trio.notification("s1", update))

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        text = "".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        half = len(text) // 2
        for piece in (text[:half], text[half:]):  # the prompt, echoed in two chunks
            await self.send(acp_trio.user_text(piece, message_id="u1"))
        await self.send(acp_trio.agent_text("Working.", message_id="a1"))
        await self.send(acp_trio.tool_call("c1", "Build", kind="execute"))
        await self.send(acp_trio.tool_call_update("c1", status="pending"))
        await self.send(acp_trio.tool_call_update("c1", status="in_progress"))
        await self.send(acp_trio.tool_call_update("c1", raw_output={"step": 1}))
        await self.send(acp_trio.tool_call_update("c1", status="in_progress"))
        done = [acp_trio.tool_content("built")]
        for _ in range(2):
            await self.send(
                acp_trio.tool_call_update("c1", status="completed", content=done)
            )
        await self.send(acp_trio.user_text("a real user message", message_id="u2"))
        return v1.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    trio.run(acp_trio.serve_agent_stdio, {1: RepeatAgent})
