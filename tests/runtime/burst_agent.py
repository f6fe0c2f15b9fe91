"""An agent that answers each prompt with a burst of large updates.

Each prompt sends ``COUNT`` agent_message_chunk updates of ``SIZE`` bytes of
text as fast as the connection lets it, then answers with the process's peak
resident set size (``VmHWM`` from /proc, KiB) measured before and after the
burst in the response's ``_meta``, so a test can see how much of the burst
the agent held in memory at once.
"""

from __future__ import annotations

import acp_trio
import trio
from acp_schema import v1

COUNT = 200
SIZE = 160 * 1024


def peak_rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


class BurstAgent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="burst")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        before = peak_rss_kib()
        for i in range(COUNT):
            text = f"{i:06d}" + "x" * (SIZE - 6)  # a fresh string each time
            await self.client.session_update(
                v1.SessionNotification(
                    session_id=params.session_id,
                    update=v1.AgentMessageChunk(content=v1.TextContent(text=text)),
                )
            )
        after = peak_rss_kib()
        return v1.PromptResponse(
            stop_reason="end_turn",
            meta={"peakBeforeKiB": before, "peakAfterKiB": after},
        )


if __name__ == "__main__":
    trio.run(acp_trio.serve_agent_stdio, BurstAgent)
