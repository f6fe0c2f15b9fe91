"""Type-checked, never run: ``test_asyncio_typing.py`` runs ``mypy --strict`` on it.

A line ending in ``# E: <code>`` must fail with that mypy error code; every
other line must type-check (``assert_type`` fails on a wrong type or ``Any``).
The same inference as acp_trio's (tests/runtime/typing_cases.py), on asyncio.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp_asyncio
from acp_schema import v1
from acp_schema import v2_alpha0 as v2
from typing_extensions import assert_type

V1_NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


class V1Client:
    def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
        self.agent = conn.agent


class V2Client:
    def __init__(self, conn: acp_asyncio.ClientSideConnection[v2.Agent]) -> None:
        pass


class V1Agent:
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client


async def spawned(v2_new: v2.NewSessionRequest) -> None:
    async with acp_asyncio.spawn_agent(["my-agent"], client=V1Client) as conn:
        assert_type(conn, acp_asyncio.ClientSideConnection[v1.Agent])
        init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        assert_type(init, v1.InitializeResponse)
        new = await conn.agent.session_new(V1_NEW)
        assert_type(new, v1.NewSessionResponse)
        assert_type(conn.process, asyncio.subprocess.Process | None)
        await conn.agent.session_new(v2_new)  # E: arg-type
        await conn.agent.session_frobnicate(V1_NEW)  # E: attr-defined
        new.session_id.frobnicate()  # E: attr-defined


async def over_streams(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    async with acp_asyncio.connect_to_agent(reader, writer, V2Client) as conn:
        assert_type(conn, acp_asyncio.ClientSideConnection[v2.Agent])
        await conn.agent.session_new(V1_NEW)  # E: arg-type
    async with acp_asyncio.connect_to_client(reader, writer, V1Agent) as agent_conn:
        assert_type(agent_conn, acp_asyncio.AgentSideConnection[v1.Client])
        await agent_conn.client.session_update(
            acp_asyncio.notification("s", acp_asyncio.agent_text("hi"))
        )
        await agent_conn.client.session_update(V1_NEW)  # E: arg-type
    async with acp_asyncio.connect_to_agent(
        reader, writer, {1: V1Client, 2: V2Client}
    ) as either:
        assert_type(either, acp_asyncio.ClientSideConnection[Any])
        assert_type(either.agent_v1, v1.Agent)
    await acp_asyncio.serve_agent(reader, writer, {1: V1Agent})


def unparameterised(conn: acp_asyncio.ClientSideConnection) -> None:  # E: type-arg
    pass
