"""A client tested against a scripted agent (docs/testing.md shows this file)."""

from __future__ import annotations

import acp_core
import acp_trio
import pytest
from acp_pytest import FakeAgent, InMemory, assert_transcript, prompt, start_session
from acp_schema import v1


class MyClient(v1.Client):
    """The client under test: keeps the session, allows once."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_trio.SessionTranscript(version=v1)

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        [once] = [o for o in params.options if o.kind == "allow_once"]
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=once.option_id)
        )


ASK = v1.RequestPermissionRequest(
    session_id="session-1",
    tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
    options=[
        v1.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
        v1.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
    ],
)


@pytest.mark.acp_backends("trio", "asyncio")  # the default, said here
async def test_the_client_keeps_the_turn_and_allows_once(
    acp_in_memory: InMemory,
) -> None:
    agent = FakeAgent(
        [
            acp_core.agent_text("Running ", message_id="m1"),
            acp_core.tool_call("c1", "Run the tests", kind="execute"),
            ASK,
            acp_core.tool_call_update("c1", status="completed"),
            acp_core.agent_text("done.", message_id="m1"),
        ]
    )
    conn = await acp_in_memory.connect(agent, MyClient)
    assert await prompt(conn, await start_session(conn), "test it") == "end_turn"
    [asked] = agent.sent
    assert asked.answer.outcome.option_id == "yes"
    assert isinstance(conn.client, MyClient)
    assert_transcript(
        conn.client.transcript,
        """
        agent: Running done.
        tool c1 completed: Run the tests
        """,
    )
