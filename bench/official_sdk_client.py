"""Minimal ACP client built on the official pydantic SDK (agent-client-protocol 0.12.1).

Usage:  python bench/official_sdk_client.py N
Spawns bench/official_sdk_agent.py as a subprocess (acp.spawn_agent_process),
runs initialize, session/new, then N sequential session/prompt calls, counting
the session/update notifications received and checking their order
(runtime_workload.OrderCheck). Prints one JSON line:
  {"prompts": N, "notifications": count, "seconds": elapsed, "prompt_seconds": t,
   "order_errors": 0, "client_rss_kb": ..., "agent_rss_kb": ..., ...}
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation
from runtime_workload import CpuMeter, OrderCheck, prompt_text, report

AGENT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "official_sdk_agent.py"
)


class CountingClient:
    """Implements the subset of the `acp.Client` protocol we need (duck-typed)."""

    def __init__(self) -> None:
        self.check = OrderCheck()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # `update` is already a validated pydantic model (e.g. acp.schema.AgentMessageChunk)
        self.check.update(update.message_id, update.content.text)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        raise RequestError.method_not_found("session/request_permission")


async def main(n: int) -> None:
    client = CountingClient()
    t0 = time.perf_counter()
    # NB: spawn_stdio_transport() gives the child a *trimmed* environment
    # (acp.default_environment(): HOME, LOGNAME, PATH, SHELL, TERM, USER) and
    # pipes its stderr (never read) unless told otherwise; inherit stderr here.
    async with spawn_agent_process(
        client, sys.executable, AGENT, transport_kwargs={"stderr": None}
    ) as (conn, proc):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=True,
            ),
            client_info=Implementation(
                name="official-sdk-bench-client", version="0.1.0"
            ),
        )
        assert init.protocol_version == PROTOCOL_VERSION
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        cpu = CpuMeter(proc.pid)
        cpu.start()
        t1 = time.perf_counter()
        for i in range(n):
            client.check.turn(i)
            resp = await conn.prompt(
                session_id=session.session_id,
                prompt=[text_block(prompt_text(i))],
            )
            assert resp.stop_reason == "end_turn"
        # ClientSideConnection.prompt waits for in-flight session_update handlers,
        # so all 5 chunks of each turn have been delivered when it returns.
        client.check.end_turn()
        t2 = time.perf_counter()
        cpu.stop()
    # "seconds" = everything (spawn + interpreter/pydantic import in the child + handshake
    # + N prompts + shutdown); "prompt_seconds" = just the N prompt turns.
    report("official_sdk", n, client.check, time.perf_counter() - t0, t2 - t1, cpu)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
