"""Testing an agent in memory: ``simple_agent.py``'s agent and a scripted client.

``python examples/testing_in_memory.py`` runs the checks below and prints
``ok``; under pytest (with pytest-trio) the ``test_*`` functions are tests as
they stand.

``acp_trio.connect_in_memory(agent, client)`` serves the agent in the
background and yields the client's connection: both ends in this process, no
subprocess, no socket, no thread, yet the real protocol between them (framed,
decoded and checked by the same engine as over stdio, with a pipe's bounds).
Leaving the block ends the agent. ``acp_asyncio.connect_in_memory`` is the
same on asyncio.
"""

from __future__ import annotations

from typing import ClassVar

import acp_trio
import trio
from acp_schema import v1
from simple_agent import SimpleAgent


class ScriptedClient(v1.Client):
    """Records the session and answers permission requests with ``choice``."""

    choice = "allow"
    #: each instance the runtime made, so that the test can read it
    made: ClassVar[list[ScriptedClient]] = []

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_trio.SessionTranscript(version=v1)
        self.asked = 0
        self.made.append(self)

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.asked += 1
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=self.choice)
        )


async def run_turn(choice: str, text: str) -> tuple[ScriptedClient, str]:
    """One prompt through the agent, the client answering ``choice``; the
    client and the turn's stop reason."""
    ScriptedClient.choice = choice
    async with acp_trio.connect_in_memory(SimpleAgent, ScriptedClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        session = await conn.agent.session_new(
            v1.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        prompt: list[v1.ContentBlock] = [v1.TextContent(text=text)]
        answer = await conn.agent.session_prompt(
            v1.PromptRequest(session_id=session.session_id, prompt=prompt)
        )
    return ScriptedClient.made[-1], answer.stop_reason


async def test_the_agent_streams_the_words_and_counts_them_when_allowed() -> None:
    client, stop_reason = await run_turn("allow", "three small words")
    assert stop_reason == "end_turn"
    assert client.asked == 1
    [message] = client.transcript.messages
    assert message.text == "three small words "
    [call] = client.transcript.tool_calls.values()
    assert call.status == "completed"


async def test_the_tool_call_fails_when_the_user_rejects_it() -> None:
    client, stop_reason = await run_turn("reject", "no")
    assert stop_reason == "end_turn"
    [call] = client.transcript.tool_calls.values()
    assert call.status == "failed"


async def main() -> None:
    await test_the_agent_streams_the_words_and_counts_them_when_allowed()
    await test_the_tool_call_fails_when_the_user_rejects_it()
    print("ok")


if __name__ == "__main__":
    trio.run(main)
