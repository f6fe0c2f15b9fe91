"""Replaying a session with ``session/load`` rebuilds the live turn's transcript.

The echo agent runs as a process with ``--state-dir``; one process serves the
live turns, a fresh one replays them. The client side is
``acp_trio.SessionTranscript``, fed every ``session/update``.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import acp_trio
import pytest
import trio
from _example_helpers import TIMEOUT, agent_command, child_env
from acp_schema import (
    v1,
    v1_unstable,
)
from acp_schema import (
    v2_alpha0 as v2,
)
from acp_schema import (
    v2_alpha0_unstable as v2_unstable,
)


def client_for(V: types.ModuleType) -> Any:
    class TranscriptClient:
        acp_schema = V  # the draft it speaks (v2: 2.0.0-alpha.0)

        def __init__(self, conn: Any) -> None:
            self.transcript = acp_trio.SessionTranscript(version=V)

        async def session_update(self, params: Any) -> None:
            self.transcript.apply(params)

        async def session_request_permission(self, params: Any) -> Any:
            return V.RequestPermissionResponse(
                outcome=V.SelectedPermissionOutcome(option_id="allow")
            )

    return TranscriptClient


def init_for(V: types.ModuleType) -> Any:
    return V.InitializeRequest(protocol_version=V.PROTOCOL_VERSION)


@pytest.mark.parametrize("V", [v1, v2], ids=["v1", "v2"])
async def test_load_rebuilds_the_transcript_of_the_live_turns(
    V: types.ModuleType, tmp_path: Path
) -> None:
    agent = agent_command("--state-dir", str(tmp_path))
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            agent, client={V.PROTOCOL_VERSION: client_for(V)}, env=child_env()
        ) as conn:
            await conn.agent.initialize(init_for(V))
            session = await conn.agent.session_new(
                V.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
            )
            sid = session.session_id
            live = conn.client.transcript
            for n, text in enumerate(["first turn", "second turn"]):
                # the client adds its own prompt to the transcript
                if V is v2:
                    live.apply(acp_trio.user_message(f"local_{n}", text))
                else:
                    live.apply(acp_trio.user_text(text))
                result = await conn.agent.session_prompt(
                    V.PromptRequest(session_id=sid, prompt=[V.TextContent(text=text)])
                )
                assert result.stop_reason == "end_turn"

        async with acp_trio.spawn_agent(
            agent, client={V.PROTOCOL_VERSION: client_for(V)}, env=child_env()
        ) as conn:
            await conn.agent.initialize(init_for(V))
            await conn.agent.session_load(
                V.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
            )
            replayed = conn.client.transcript

    def agent_messages(t: acp_trio.SessionTranscript) -> list[Any]:
        return [(m.message_id, m.content) for m in t.messages if m.role == "agent"]

    assert [(m.role, m.text) for m in replayed.messages] == [
        (m.role, m.text) for m in live.messages
    ]
    assert agent_messages(replayed) == agent_messages(live)
    assert len(agent_messages(live)) == 4
    assert dict(replayed.tool_calls) == dict(live.tool_calls)
    assert [c.status for c in live.tool_calls.values()] == ["completed", "completed"]
    assert dict(replayed.plans) == dict(live.plans)
    assert replayed.usage == live.usage and live.usage is not None
    assert replayed.other_updates == live.other_updates == []
    if V is v2:  # replayed whole: one user_message / agent_message per message
        kinds = {type(e).__name__ for e in replayed.events}
        assert {"UserMessage", "AgentMessage"} <= kinds
        assert "AgentMessageChunk" not in kinds


@pytest.mark.parametrize("V", [v1_unstable, v2_unstable], ids=["v1", "v2"])
async def test_a_forked_session_replays_the_history_it_was_forked_with(
    V: types.ModuleType, tmp_path: Path
) -> None:
    agent = agent_command("--unstable")
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            agent,
            client={V.PROTOCOL_VERSION: client_for(V)},
            env=child_env(),
            unstable=True,
        ) as conn:
            init = await conn.agent.initialize(init_for(V))
            caps = init.agent_capabilities if V is v1_unstable else init.capabilities
            session_caps = (
                caps.session_capabilities if V is v1_unstable else caps.session
            )
            assert session_caps.fork is not None
            cwd = str(tmp_path)
            session = await conn.agent.session_new(
                V.NewSessionRequest(cwd=cwd, mcp_servers=[])
            )
            await conn.agent.session_prompt(
                V.PromptRequest(
                    session_id=session.session_id,
                    prompt=[V.TextContent(text="before the fork")],
                )
            )
            fork = await conn.agent.session_fork(
                V.ForkSessionRequest(
                    session_id=session.session_id, cwd=cwd, mcp_servers=[]
                )
            )
            assert fork.session_id != session.session_id
            await conn.agent.session_prompt(
                V.PromptRequest(
                    session_id=fork.session_id,
                    prompt=[V.TextContent(text="only in the fork")],
                )
            )
            conn.client.transcript = acp_trio.SessionTranscript(version=V)
            await conn.agent.session_load(
                V.LoadSessionRequest(
                    session_id=fork.session_id, cwd=cwd, mcp_servers=[]
                )
            )
            forked = conn.client.transcript
            conn.client.transcript = acp_trio.SessionTranscript(version=V)
            await conn.agent.session_load(
                V.LoadSessionRequest(
                    session_id=session.session_id, cwd=cwd, mcp_servers=[]
                )
            )
            original = conn.client.transcript

    def users(t: acp_trio.SessionTranscript) -> list[str]:
        return [m.text for m in t.messages if m.role == "user"]

    assert users(forked) == ["before the fork", "only in the fork"]
    assert users(original) == ["before the fork"]
