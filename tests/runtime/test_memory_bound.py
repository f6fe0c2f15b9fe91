"""Issue 8, item 3, in a real process: a burst of large updates to a client
that stops reading costs the agent its write budget, not the burst.

Before the byte budget, 200 x 160 KiB updates doubled the agent's resident
set: everything the client had not read yet was queued in the agent.
"""

from __future__ import annotations

import os
import sys

import acp_trio
import trio
from acp_schema import v1

HERE = os.path.dirname(os.path.abspath(__file__))
BURST_AGENT = os.path.join(HERE, "burst_agent.py")
BURST_BYTES = 200 * 160 * 1024  # burst_agent's COUNT x SIZE: 31.25 MiB


class StallingClient:
    """Stops reading for a second at the first update (its handler blocks, the
    notification queue fills, reading stops), then takes the rest."""

    numbers: list[int]

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        pass

    async def session_update(self, params: v1.SessionNotification) -> None:
        if not self.numbers:
            await trio.sleep(1.0)
        assert isinstance(params.update, v1.AgentMessageChunk)
        assert isinstance(params.update.content, v1.TextContent)
        self.numbers.append(int(params.update.content.text[:6]))


async def test_a_burst_to_a_stalled_client_costs_the_agent_its_write_budget_not_the_burst() -> (
    None
):
    command = [sys.executable, BURST_AGENT]
    StallingClient.numbers = numbers = []
    async with acp_trio.spawn_agent(command, client=StallingClient) as conn:
        with trio.fail_after(60):
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            answer = await conn.agent.session_prompt(
                v1.PromptRequest(
                    session_id=session.session_id, prompt=[v1.TextContent(text="go")]
                )
            )
    assert numbers == list(range(200))  # every update, in order
    assert isinstance(answer.meta, dict)
    growth = (answer.meta["peakAfterKiB"] - answer.meta["peakBeforeKiB"]) * 1024
    # The budget (1 MiB) plus the message being written and the strings being
    # built: a few MiB. Holding the unread burst would be >= 31 MiB.
    assert growth < BURST_BYTES // 4, f"agent peak RSS grew {growth / 2**20:.1f} MiB"
