"""The unstable surface (``unstable=True``): the preview methods of ``schema.unstable.json``.

A connection speaks either the stable tables (``acp_schema.vN.AGENT_METHODS``,
...) or the unstable ones (``AGENT_METHODS_UNSTABLE``, which
``acp_schema.vN_unstable`` names ``AGENT_METHODS``), chosen by its owner; the
classes are the same, and the rules of the stable runtime apply to both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import acp_trio
import pytest
import trio
import trio.testing
from _acp_helpers import EchoAgent, RawPeer, initialize_raw, pipe_pair
from acp_schema import v1
from acp_schema import v1_unstable as u1


class ForkingAgent:
    """An unstable-surface agent: forks sessions, logs MCP-over-ACP notifications."""

    advertise_fork = True

    def __init__(self, conn: acp_trio.AgentSideConnection[u1.Client]) -> None:
        self.client = conn.client
        self.mcp: list[Any] = []

    async def initialize(self, params: u1.InitializeRequest) -> u1.InitializeResponse:
        session = u1.SessionCapabilities(
            fork=u1.SessionForkCapabilities() if self.advertise_fork else None
        )
        return u1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=u1.AgentCapabilities(session_capabilities=session),
        )

    async def session_new(self, params: u1.NewSessionRequest) -> u1.NewSessionResponse:
        return u1.NewSessionResponse(session_id="sess_1")

    async def session_fork(
        self, params: u1.ForkSessionRequest
    ) -> u1.ForkSessionResponse:
        return u1.ForkSessionResponse(session_id=f"{params.session_id}_fork")

    async def session_prompt(self, params: u1.PromptRequest) -> u1.PromptResponse:
        sid = params.session_id
        for update in (
            acp_trio.agent_text("Hel", message_id="m1", version=u1),
            acp_trio.agent_text("lo", message_id="m1", version=u1),
            acp_trio.tool_call("c1", "Read", kind="read", version=u1),
            acp_trio.plan(["Read", "Answer"], version=u1),
        ):
            await self.client.session_update(acp_trio.notification(sid, update))
        return u1.PromptResponse(stop_reason="end_turn")

    async def mcp_message(self, params: u1.MessageMcpNotification) -> None:
        # the 2.4.0 package's v1: the client's mcp/message is a notification
        self.mcp.append(params)


class SilentAgent(ForkingAgent):
    advertise_fork = False


class PlainClient:
    def __init__(self, conn: acp_trio.ClientSideConnection[u1.Agent]) -> None:
        self.mcp: list[Any] = []
        self.transcript = acp_trio.SessionTranscript()

    async def session_update(self, params: u1.SessionNotification) -> None:
        self.transcript.apply(params)

    async def mcp_message(self, params: u1.MessageMcpRequest) -> u1.MessageMcpResponse:
        self.mcp.append(params)
        return u1.MessageMcpResponseResult(result=42)


INIT = u1.InitializeRequest(protocol_version=1)


@asynccontextmanager
async def unstable_pair(
    agent: type[ForkingAgent] = ForkingAgent,
) -> AsyncIterator[
    tuple[acp_trio.ClientSideConnection[u1.Agent], acp_trio.AgentSideConnection[Any]]
]:
    """Client and agent connections on the unstable surface, over real pipes."""
    a, b = pipe_pair()
    async with acp_trio.connect_to_client(a, agent, unstable=True) as agent_conn:
        async with acp_trio.connect_to_agent(
            b, PlainClient, unstable=True
        ) as client_conn:
            await client_conn.agent.initialize(INIT)
            yield client_conn, agent_conn


async def test_an_unstable_connection_serves_the_preview_methods() -> None:
    async with unstable_pair() as (client, agent):
        forked = await client.agent.session_fork(
            u1.ForkSessionRequest(session_id="sess_1", cwd="/work", mcp_servers=[])
        )
        assert isinstance(forked, u1.ForkSessionResponse)
        assert forked.session_id == "sess_1_fork"
        await client.agent.mcp_message(
            u1.MessageMcpNotification(
                server_id="srv", request_id="r1", method="notifications/initialized"
            )
        )
        # notifications are handled in order before a later response is released
        await client.agent.session_new(u1.NewSessionRequest(cwd="/", mcp_servers=[]))
        assert isinstance(agent.agent, ForkingAgent)
        assert [m.method for m in agent.agent.mcp] == ["notifications/initialized"]


async def test_a_stable_connection_answers_preview_methods_method_not_found() -> None:
    class StableAgentWithFork(EchoAgent):
        async def session_fork(self, params: Any) -> Any:  # never reached
            raise AssertionError("a stable connection routed session/fork")

    ours, theirs = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(acp_trio.serve_agent, ours, StableAgentWithFork)
        peer = RawPeer(theirs)
        await peer.initialize(1)
        reply = await peer.call(
            1, "session/fork", {"sessionId": "s", "cwd": "/", "mcpServers": []}
        )
        assert reply["error"]["code"] == -32601
        nursery.cancel_scope.cancel()


async def test_the_client_refuses_session_fork_the_agent_did_not_advertise() -> None:
    async with unstable_pair(SilentAgent) as (client, _):
        with pytest.raises(acp_trio.CapabilityError, match="session/fork"):
            await client.agent.session_fork(
                u1.ForkSessionRequest(session_id="sess_1", cwd="/", mcp_servers=[])
            )


async def test_session_fork_paths_must_be_absolute_at_both_ends() -> None:
    async with unstable_pair() as (client, _):
        with pytest.raises(acp_trio.RequestError) as refused:
            await client.agent.session_fork(
                u1.ForkSessionRequest(session_id="s", cwd="work", mcp_servers=[])
            )
        assert refused.value.code == -32602
    ours, theirs = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, ForkingAgent, unstable=True, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.initialize(1)
        reply = await peer.call(
            1,
            "session/fork",
            {
                "sessionId": "s",
                "cwd": "/",
                "additionalDirectories": ["rel"],
                "mcpServers": [],
            },
        )
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["path"] == "$.params.additionalDirectories[0]"
        nursery.cancel_scope.cancel()


async def test_mcp_message_is_a_notification_to_the_agent_and_a_request_to_the_client() -> (
    None
):
    """The 2.4.0 package's v1 (a method both a request and a notification on
    one side: ``acp_schema.v2_alpha0``'s ``mcp/message``, test_handlers)."""
    async with unstable_pair() as (client, agent):
        assert isinstance(agent.agent, ForkingAgent)
        notice = u1.MessageMcpNotification(
            server_id="s1", request_id="r1", method="notifications/initialized"
        )
        await client.agent.mcp_message(notice)
        await client.agent.session_new(u1.NewSessionRequest(cwd="/", mcp_servers=[]))
        assert [type(m) for m in agent.agent.mcp] == [u1.MessageMcpNotification]
        # and from the agent to the client: a request, its answer a by-shape union
        request = u1.MessageMcpRequest(server_id="s2", request_id="7", method="ping")
        answer = await agent.client.mcp_message(request)
        assert answer == u1.MessageMcpResponseResult(result=42)


async def test_the_notification_form_has_no_id_on_the_wire() -> None:
    ours, theirs = trio.testing.memory_stream_pair()
    async with acp_trio.connect_to_agent(ours, PlainClient, unstable=True) as conn:
        peer = RawPeer(theirs)
        await initialize_raw(conn, peer)
        with trio.fail_after(5):  # a notification waits for no answer
            await conn.agent.mcp_message(
                u1.MessageMcpNotification(
                    server_id="s1", request_id="r1", method="notifications/x"
                )
            )
        line = await peer.receive()
        assert "id" not in line
        assert line["method"] == "mcp/message"
        assert line["params"] == {
            "serverId": "s1",
            "requestId": "r1",
            "method": "notifications/x",
        }
        # the agent's request reaches the client's handler
        params = {"serverId": "s1", "requestId": "3", "method": "ping"}
        reply = await peer.call(7, "mcp/message", params)
        assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"result": 42}}
        assert isinstance(conn.client, PlainClient)
        assert [type(m) for m in conn.client.mcp] == [u1.MessageMcpRequest]


async def test_builders_and_the_transcript_speak_the_unstable_surface() -> None:
    async with unstable_pair() as (client, _):
        result = await client.agent.session_prompt(
            u1.PromptRequest(session_id="sess_1", prompt=[u1.TextContent(text="hi")])
        )
        assert result.stop_reason == "end_turn"
    assert isinstance(client.client, PlainClient)
    transcript = client.client.transcript
    assert transcript.version is v1  # the one module that defines the classes
    assert [(m.role, m.text) for m in transcript.messages] == [("agent", "Hello")]
    assert transcript.tool_calls["c1"].kind == "read"
    assert [e.content for e in transcript.plan] == ["Read", "Answer"]
