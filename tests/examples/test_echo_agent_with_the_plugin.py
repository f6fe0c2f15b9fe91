"""acp_echo, the reference agent, tested with acp_pytest's plugin alone.

In memory (its class served in the test's process) and as a process
(``python -m acp_echo``, its process group ended when the test ends), driven
by a scripted client whose transcript is compared with the expected one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp_echo import EchoAgentV1
from acp_pytest import (
    FakeClient,
    InMemory,
    Spawn,
    assert_calls,
    assert_transcript,
    prompt,
    start_session,
)
from acp_schema import v1

ECHO = [sys.executable, "-m", "acp_echo", "--chunk-delay", "0"]

# acp_echo waits with trio.sleep between chunks: in memory it runs on trio only
# (as a process, it is driven from either loop)
on_trio = pytest.mark.acp_backends("trio")


@on_trio
async def test_a_turn_echoes_the_prompt_and_runs_the_tool_when_allowed(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=["allow_once"])
    conn = await acp_in_memory.connect(EchoAgentV1, client)
    session_id = await start_session(conn, cwd="/work")
    assert await prompt(conn, session_id, "hello") == "end_turn"
    assert_transcript(
        client.transcript(),
        """
        agent: You said: hello
          Working in /work
        agent: Echoed 5 characters.
        plan: [completed] Read the prompt
        plan: [completed] Ask permission to run the echo tool
        plan: [completed] Echo the prompt back
        tool call_1 completed: Echo 5 characters
          | hello
        usage: 15 / 200000
        """,
    )


@on_trio
async def test_a_rejected_tool_call_fails_and_the_agent_says_so(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=["reject_once"])
    conn = await acp_in_memory.connect(EchoAgentV1, client)
    assert await prompt(conn, await start_session(conn), "hello") == "end_turn"
    assert_transcript(
        client.transcript(),
        """
        agent: Okay, I did not run the echo tool.
        tool call_1 failed: Echo 5 characters
          | Permission denied
        """,
        exact=False,
    )


@on_trio
async def test_each_turn_asks_permission_once(acp_in_memory: InMemory) -> None:
    client = FakeClient()
    conn = await acp_in_memory.connect(EchoAgentV1, client)
    session_id = await start_session(conn)
    for text in ("one", "two"):
        assert await prompt(conn, session_id, text) == "end_turn"
    requests = [call for call in client.calls if call.method != "session/update"]
    assert_calls(requests, ["session/request_permission"] * 2)


async def test_the_agent_as_a_process_echoes_the_prompt(acp_spawn: Spawn) -> None:
    client = FakeClient(permissions=["allow_once"])
    conn = await acp_spawn.start(ECHO, client)
    assert await prompt(conn, await start_session(conn), "hi there") == "end_turn"
    assert_transcript(
        client.transcript(),
        ["agent: Echoed 8 characters.", "tool call_1 completed: Echo 8 characters"],
        exact=False,
    )


async def test_a_session_loaded_by_a_new_agent_process_replays_its_history(
    acp_spawn: Spawn, tmp_path: Path
) -> None:
    first = FakeClient()
    conn = await acp_spawn.start([*ECHO, "--state-dir", str(tmp_path)], first)
    session_id = await start_session(conn, cwd="/work")
    assert await prompt(conn, session_id, "remember me") == "end_turn"

    again = FakeClient()
    conn = await acp_spawn.start([*ECHO, "--state-dir", str(tmp_path)], again)
    await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    await conn.agent.session_load(
        v1.LoadSessionRequest(session_id=session_id, cwd="/work", mcp_servers=[])
    )
    replayed = again.transcript(session_id)
    assert replayed.messages[0].text == "remember me"
    assert [m.text for m in replayed.messages[1:]] == [
        m.text for m in first.transcript().messages
    ]
