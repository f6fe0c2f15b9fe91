"""The programs of examples/ tested with acp_pytest's plugin alone: the agents in
memory with a scripted client, the client against a scripted agent."""

from __future__ import annotations

import sys
from pathlib import Path

import acp_core
import pytest
from acp_pytest import (
    CANCELLED,
    FakeAgent,
    FakeClient,
    InMemory,
    assert_transcript,
    prompt,
    start_session,
)
from acp_schema import v1

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from asyncio_echo_agent import AsyncioEchoAgent
from simple_agent import SimpleAgent
from simple_client import SimpleClient

# simple_agent.py sleeps with trio.sleep: on trio only; the others await
# nothing but their peer, so they run on both loops


@pytest.mark.acp_backends("trio")
async def test_the_simple_agent_streams_the_words_and_counts_them_when_allowed(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=["allow"])
    conn = await acp_in_memory.connect(SimpleAgent, client)
    assert await prompt(conn, await start_session(conn), "three small words") == (
        "end_turn"
    )
    assert_transcript(
        client.transcript(),
        """
        agent: three small words
        tool count-1 completed: Count the words
          | 3 words
        """,
    )


@pytest.mark.acp_backends("trio")
async def test_the_simple_agents_tool_call_fails_when_rejected(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=["reject"])
    conn = await acp_in_memory.connect(SimpleAgent, client)
    assert await prompt(conn, await start_session(conn), "no") == "end_turn"
    assert_transcript(
        client.transcript(), ["tool count-1 failed: Count the words"], exact=False
    )


async def test_the_asyncio_echo_agent_echoes_behind_a_permission_request(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=["allow_once"])
    conn = await acp_in_memory.connect(AsyncioEchoAgent, client)
    assert await prompt(conn, await start_session(conn), "hi") == "end_turn"
    assert_transcript(
        client.transcript(),
        """
        agent: You said: hi
        plan: [completed] Read the prompt
        plan: [completed] Ask permission to echo
        plan: [completed] Echo the prompt back
        tool call_1 completed: Echo 2 characters
          | hi
        """,
    )


async def test_the_asyncio_echo_agent_ends_the_turn_cancelled_when_the_request_is(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=[CANCELLED])
    conn = await acp_in_memory.connect(AsyncioEchoAgent, client)
    assert await prompt(conn, await start_session(conn), "hi") == "cancelled"


def ask(*kinds: v1.PermissionOptionKind) -> v1.RequestPermissionRequest:
    return v1.RequestPermissionRequest(
        session_id="session-1",
        tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
        options=[v1.PermissionOption(option_id=k, name=k, kind=k) for k in kinds],
    )


async def test_the_simple_client_keeps_the_turn_and_allows_once(
    acp_in_memory: InMemory, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = FakeAgent(
        [
            acp_core.agent_text("Hello ", message_id="m1"),
            acp_core.tool_call("c1", "Look around", kind="read"),
            ask("allow_always", "allow_once", "reject_once"),
            acp_core.tool_call_update("c1", status="completed"),
            acp_core.agent_text("there", message_id="m1"),
        ]
    )
    conn = await acp_in_memory.connect(agent, SimpleClient)
    assert await prompt(conn, await start_session(conn), "hi") == "end_turn"
    client = conn.client
    assert isinstance(client, SimpleClient)
    assert_transcript(
        client.transcript,
        """
        agent: Hello there
        tool c1 completed: Look around
        """,
    )
    [asked] = agent.sent
    assert asked.answer.outcome.option_id == "allow_once"
    assert "[permission: allow_once]" in capsys.readouterr().out


async def test_the_simple_client_never_grants_always_unasked(
    acp_in_memory: InMemory,
) -> None:
    agent = FakeAgent([ask("allow_always", "reject_once")])
    conn = await acp_in_memory.connect(agent, SimpleClient)
    assert await prompt(conn, await start_session(conn), "hi") == "end_turn"
    [asked] = agent.sent
    assert isinstance(asked.answer.outcome, v1.RequestPermissionOutcomeCancelled)
