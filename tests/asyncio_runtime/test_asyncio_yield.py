"""acp_asyncio's checkpoint in a sender that never waits (YIELD_INTERVAL).

The interval counts the sender's own running time: a loop that was busy
elsewhere while the sender was parked does not make it yield again at its
next notification (it did: after one long loop iteration a sender yielded
at every notification, and a remote transport got one message per write).
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp_asyncio
import acp_asyncio._connection as connection_module
import pytest
from acp_schema import v1

NOTIFICATIONS = 100
TIMEOUT = 60  # a hang guard only


class Agent:
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for _ in range(NOTIFICATIONS):
            await self.client.session_update(
                v1.SessionNotification(
                    session_id=params.session_id,
                    update=v1.AgentMessageChunk(content=v1.TextContent(text="x")),
                )
            )
        return v1.PromptResponse(stop_reason="end_turn")


class Client:
    def __init__(self, conn: Any) -> None:
        self.updates = 0

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.updates += 1


def test_a_sender_yields_after_an_interval_of_its_own_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    yields = [0]
    real_sleep = asyncio.sleep

    async def sleep(delay: float, result: Any = None) -> Any:
        if delay == 0:
            yields[0] += 1
            clock[0] += 10 * connection_module.YIELD_INTERVAL  # others ran long
        return await real_sleep(delay, result)

    async def main() -> int:
        agent_end, client_end = acp_asyncio.memory_stream_pair()
        async with acp_asyncio.connect_to_client(*agent_end, Agent):
            async with acp_asyncio.connect_to_agent(*client_end, Client) as conn:
                await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
                request = v1.PromptRequest(
                    session_id="s", prompt=[v1.TextContent(text="go")]
                )
                yields[0] = 0
                await conn.agent.session_prompt(request)
                client: Any = conn.client
                assert client.updates == NOTIFICATIONS
                return yields[0]

    # the sender's clock stands still while it runs: only a loop busy
    # elsewhere (the sleep above) moves it
    monkeypatch.setattr(connection_module, "_monotonic", lambda: clock[0])
    # the client's notification consumer yields too: not counted here
    monkeypatch.setattr(connection_module, "NOTIFICATION_BURST", 10 * NOTIFICATIONS)
    monkeypatch.setattr(asyncio, "sleep", sleep)
    assert asyncio.run(asyncio.wait_for(main(), TIMEOUT)) <= 1
