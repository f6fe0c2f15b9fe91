"""Type-checked, never run: ``test_typing.py`` runs ``mypy --strict`` on this file.

A line ending in ``# E: <code>`` must fail with that mypy error code; every
other line must type-check.  ``assert_type`` lines fail if a type is wrong
(or ``Any``).
"""

from __future__ import annotations

from typing import Any

import acp_schema.v2
import acp_trio
import trio
from acp_schema import v1, v1_unstable
from acp_schema import v2_alpha0 as v2
from msgspec import UnsetType
from typing_extensions import assert_type

V1_NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])

# -- a v1 client: conn.agent is a v1.Agent ----------------------------------------------


class V1Client:
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.agent = conn.agent

    async def session_update(self, params: v1.SessionNotification) -> None:
        pass


async def v1_client(stream: trio.abc.Stream, v2_new: v2.NewSessionRequest) -> None:
    async with acp_trio.spawn_agent(["my-agent"], client=V1Client) as conn:
        assert_type(conn, acp_trio.ClientSideConnection[v1.Agent])
        init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        assert_type(init, v1.InitializeResponse)
        new = await conn.agent.session_new(V1_NEW)
        assert_type(new, v1.NewSessionResponse)
        await conn.agent.session_cancel(v1.CancelNotification(session_id="s"))
        # mistakes
        await conn.agent.session_new(v2_new)  # E: arg-type
        await conn.agent.session_nwe(V1_NEW)  # E: attr-defined
        await conn.agent.session_prompt({"sessionId": "s", "prompt": []})  # E: arg-type

    async with acp_trio.connect_to_agent(stream, V1Client) as conn:
        assert_type(conn.agent, v1.Agent)
        assert_type(conn.agent_v1, v1.Agent)
    async with acp_trio.connect_to_agent(stream, {1: V1Client}) as conn:
        assert_type(conn.agent, v1.Agent)


async def wrong_result(
    conn: acp_trio.ClientSideConnection[v1.Agent],
) -> v1.PromptResponse:
    return await conn.agent.session_new(V1_NEW)  # E: return-value


# -- the unstable surface: conn.agent is a v1_unstable.Agent ---------------------------


class UnstableClient:
    def __init__(self, conn: acp_trio.ClientSideConnection[v1_unstable.Agent]) -> None:
        self.agent = conn.agent


async def unstable_client(stream: trio.abc.Stream) -> None:
    async with acp_trio.spawn_agent(
        ["my-agent"], client=UnstableClient, unstable=True
    ) as conn:
        fork = v1_unstable.ForkSessionRequest(session_id="s", cwd="/", mcp_servers=[])
        forked = await conn.agent.session_fork(fork)
        assert_type(forked, v1_unstable.ForkSessionResponse)
        notice = v1_unstable.MessageMcpNotification(
            server_id="c", request_id="r", method="m"
        )  # the agent's mcp/message is a notification since the 2.4.0 package
        await conn.agent.mcp_message(notice)
        await conn.agent.session_fork(V1_NEW)  # E: arg-type
    async with acp_trio.connect_to_agent(stream, V1Client) as stable:
        await stable.agent.session_fork(fork)  # E: attr-defined


class UnstableClientByV1:
    """`v1.AgentUnstable` is `v1_unstable.Agent`; the classes are `v1`'s."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.AgentUnstable]) -> None:
        self.agent = conn.agent


async def unstable_client_by_v1() -> None:
    async with acp_trio.spawn_agent(
        ["my-agent"], client=UnstableClientByV1, unstable=True
    ) as conn:
        fork = v1.ForkSessionRequest(session_id="s", cwd="/", mcp_servers=[])
        assert_type(await conn.agent.session_fork(fork), v1.ForkSessionResponse)
        result = await conn.agent.session_prompt(
            v1.PromptRequest(session_id="s", prompt=[])
        )
        assert_type(result.usage, v1.Usage | UnsetType | None)


# -- a v2 client: conn.agent is a v2.Agent ----------------------------------------------


class V2Client:
    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent]) -> None:
        pass


async def v2_client(stream: trio.abc.Stream, v2_new: v2.NewSessionRequest) -> None:
    async with acp_trio.connect_to_agent(stream, {2: V2Client}) as conn:
        new = await conn.agent.session_new(v2_new)
        assert_type(new, v2.NewSessionResponse)
        await conn.agent.session_set_mode(None)  # E: attr-defined


# -- several versions: Any until narrowed by the checked views ---------------------------


async def multi_version_client(
    stream: trio.abc.Stream, v2_new: v2.NewSessionRequest
) -> None:
    async with acp_trio.connect_to_agent(stream, {1: V1Client, 2: V2Client}) as conn:
        assert_type(conn, acp_trio.ClientSideConnection[Any])
        await conn.initialize(
            v1.InitializeRequest(protocol_version=1),
            v2.InitializeRequest(protocol_version=2),
        )
        await conn.initialize(v2_new)  # E: call-overload
        if conn.protocol_version == 2:  # agent_v2: the newest draft's Protocol
            new = await conn.agent_v2.session_new(
                acp_schema.v2.NewSessionRequest(cwd="/")
            )
            assert_type(new, acp_schema.v2.NewSessionResponse)
        else:
            await conn.agent_v1.session_new(v2_new)  # E: arg-type


# -- an agent: conn.client is a v1.Client ------------------------------------------------


class V1Agent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")

    async def check(
        self, params: v1.PromptRequest, v2_update: v2.SessionNotification
    ) -> None:
        update = v1.SessionNotification(
            session_id=params.session_id,
            update=v1.AgentMessageChunk(content=v1.TextContent(text="hi")),
        )
        await self.client.session_update(update)
        read = await self.client.fs_read_text_file(
            v1.ReadTextFileRequest(session_id=params.session_id, path="/a")
        )
        assert_type(read, v1.ReadTextFileResponse)
        await self.client.session_update(v2_update)  # E: arg-type
        await self.client.terminal_create(read)  # E: arg-type


async def agents(stream: trio.abc.Stream) -> None:
    async with acp_trio.connect_to_client(stream, V1Agent) as conn:
        assert_type(conn, acp_trio.AgentSideConnection[v1.Client])
        assert_type(conn.client_v1, v1.Client)
        assert_type(conn.client_v2, acp_schema.v2.Client)  # the newest draft
    await acp_trio.serve_agent(stream, {1: V1Agent})


class Untyped:
    def __init__(self, conn: acp_trio.ClientSideConnection) -> None:  # E: type-arg
        pass
