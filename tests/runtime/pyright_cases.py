"""Code that pyright's strict mode must accept: ``nox -s typecheck`` (and CI)
checks this file with the runtime (``[tool.pyright]`` includes it).

Not run by pytest: every line here is about the static types.
"""

from __future__ import annotations

import types
from typing import Any

import acp_schema.v2
import acp_trio
import trio
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


class V1Client:
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.conn = conn


class V2Client:
    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent]) -> None:
        self.conn = conn


class V1Agent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.conn = conn


class V2Agent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        self.conn = conn


async def multi_version_offers(stream: trio.abc.Stream) -> None:
    """``{1: C1, 2: C2}``: one class per version; the connection is Any until
    narrowed by the checked views."""
    async with acp_trio.connect_to_agent(stream, {1: V1Client, 2: V2Client}) as conn:
        await conn.agent_v1.session_cancel(v1.CancelNotification(session_id="s"))
    async with acp_trio.spawn_agent(["agent"], client={1: V1Client, 2: V2Client}) as c:
        version: int | None = c.protocol_version
        print(version)
    async with acp_trio.connect_to_client(stream, {1: V1Agent, 2: V2Agent}) as a:
        await a.client_v2.session_update(
            acp_trio.notification(
                "s", acp_trio.agent_text("hi", message_id="m", version=acp_schema.v2)
            )
        )


async def one_version(stream: trio.abc.Stream) -> None:
    async with acp_trio.connect_to_agent(stream, V1Client) as conn:
        agent: v1.Agent = conn.agent
        print(agent)
    async with acp_trio.connect_to_agent(stream, {2: V2Client}) as conn2:
        agent2: v2.Agent = conn2.agent
        print(agent2)


def version_generic(module: types.ModuleType) -> Any:
    """A module known only at run time: the builders return Any."""
    return acp_trio.plan(["Read"], plan_id="p1", version=module)
