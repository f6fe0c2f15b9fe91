"""Ordering and concurrency rules."""

from __future__ import annotations

from typing import Any

import acp_trio
import trio
import trio.lowlevel
from _acp_helpers import (
    INIT_V1,
    EchoAgent,
    RecordingClient,
    chunk,
    connected,
    text_prompt,
)
from acp_schema import v1

NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


class RendezvousAgent(EchoAgent):
    """Each session's prompt waits until the other session's prompt started."""

    def __init__(self, conn: acp_trio.AgentSideConnection) -> None:
        super().__init__(conn)
        self.started: dict[str, trio.Event] = {}

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.started.setdefault(params.session_id, trio.Event()).set()
        other = "sess_2" if params.session_id == "sess_1" else "sess_1"
        await self.started.setdefault(other, trio.Event()).wait()
        return await super().session_prompt(params)


async def test_incoming_requests_run_concurrently_concurrent_prompts_on_two_sessions() -> (
    None
):
    async with connected(RendezvousAgent, RecordingClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        s1 = await conn.agent.session_new(NEW)
        s2 = await conn.agent.session_new(NEW)
        results: dict[str, Any] = {}

        async def prompt(sid: str) -> None:
            results[sid] = await conn.agent.session_prompt(text_prompt(sid, sid))

        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(prompt, s1.session_id)
                nursery.start_soon(prompt, s2.session_id)
        assert {r.stop_reason for r in results.values()} == {"end_turn"}
        assert sorted(conn.client.texts()) == ["sess_1", "sess_2"]  # type: ignore[attr-defined]


class ChattyAgent(EchoAgent):
    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for i in range(1000):
            await self.client.session_update(chunk(params.session_id, str(i)))
        return v1.PromptResponse(stop_reason="end_turn")


class SlowClient(RecordingClient):
    """Awaits inside every update and checks no two updates overlap."""

    active = 0
    overlapped = False

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.active += 1
        self.overlapped |= self.active > 1
        await trio.lowlevel.checkpoint()
        await trio.lowlevel.checkpoint()
        self.updates.append(params)
        self.active -= 1


async def test_a_1000_chunk_turn_arrives_in_order_while_the_update_handler_awaits() -> (
    None
):
    async with connected(ChattyAgent, SlowClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        s = await conn.agent.session_new(NEW)
        result = await conn.agent.session_prompt(text_prompt(s.session_id))
        client: SlowClient = conn.client  # type: ignore[assignment]
        # released only after every update received before it was handled:
        assert client.texts() == [str(i) for i in range(1000)]
        assert result.stop_reason == "end_turn"
        assert not client.overlapped


class CallingBackClient(RecordingClient):
    """Calls the agent from inside its notification handler."""

    async def session_update(self, params: v1.SessionNotification) -> None:
        reply = await self.conn.agent.ext_method("_echo", {"n": len(self.updates)})
        self.updates.append(params)
        assert reply["params"] == {"n": len(self.updates) - 1}


async def test_a_handler_calling_the_peer_does_not_deadlock() -> None:
    async with connected(EchoAgent, CallingBackClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        s = await conn.agent.session_new(NEW)
        with trio.fail_after(5):
            await conn.agent.session_prompt(text_prompt(s.session_id, "a", "b", "c"))
        assert conn.client.texts() == ["a", "b", "c"]  # type: ignore[attr-defined]


class PermissionAgent(EchoAgent):
    """Asks the client for permission while it streams updates."""

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        await self.client.session_update(chunk(params.session_id, "before"))
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id=params.session_id,
                tool_call=v1.ToolCallUpdate(tool_call_id="call_1"),
                options=[
                    v1.PermissionOption(option_id="ok", name="OK", kind="allow_once")
                ],
            )
        )
        await self.client.session_update(
            chunk(params.session_id, answer.outcome.option_id)
        )
        return v1.PromptResponse(stop_reason="end_turn")


class ApprovingClient(RecordingClient):
    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        # the update sent before the request was handled first
        assert self.texts() == ["before"]
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id="ok")
        )


async def test_the_agent_calls_the_client_during_a_prompt() -> None:
    async with connected(PermissionAgent, ApprovingClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        s = await conn.agent.session_new(NEW)
        result = await conn.agent.session_prompt(text_prompt(s.session_id))
        assert result.stop_reason == "end_turn"
        assert conn.client.texts() == ["before", "ok"]  # type: ignore[attr-defined]
