"""The benchmark client on acp_asyncio: ``python bench/runtime_asyncio_client.py N``.

Spawns runtime_asyncio_agent.py (``acp_asyncio.spawn_agent``), runs
initialize, session/new and N prompts, checks every update, prints one JSON
line (runtime_workload.report).  The same client as runtime_acp_client.py,
on asyncio.
"""

from __future__ import annotations

import os
import sys
import time

from runtime_workload import (
    CLIENT_NAME,
    HERE,
    VERSION,
    CpuMeter,
    OrderCheck,
    prompt_text,
    report,
    use_repo_packages,
)

use_repo_packages()

import asyncio  # noqa: E402

import acp_asyncio  # noqa: E402
from acp_schema import v1  # noqa: E402

AGENT = os.path.join(HERE, "runtime_asyncio_agent.py")
CHECK = OrderCheck()


class BenchClient:
    def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
        self.check = CHECK

    async def session_update(self, params: v1.SessionNotification) -> None:
        update = params.update
        self.check.update(update.message_id, update.content.text)  # type: ignore[union-attr]


async def main(n: int) -> None:
    t0 = time.perf_counter()
    async with acp_asyncio.spawn_agent(
        [sys.executable, AGENT], client=BenchClient
    ) as conn:
        init = await conn.agent.initialize(
            v1.InitializeRequest(
                protocol_version=1,
                client_capabilities=v1.ClientCapabilities(
                    fs=v1.FileSystemCapabilities(
                        read_text_file=True, write_text_file=True
                    ),
                    terminal=True,
                ),
                client_info=v1.Implementation(name=CLIENT_NAME, version=VERSION),
            )
        )
        assert init.protocol_version == 1
        session = await conn.agent.session_new(
            v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[])
        )
        assert conn.process is not None
        cpu = CpuMeter(conn.process.pid)
        cpu.start()
        t1 = time.perf_counter()
        for i in range(n):
            CHECK.turn(i)
            resp = await conn.agent.session_prompt(
                v1.PromptRequest(
                    session_id=session.session_id,
                    prompt=[v1.TextContent(text=prompt_text(i))],
                )
            )
            assert resp.stop_reason == "end_turn"
        CHECK.end_turn()  # session_prompt returns after its updates were handled
        t2 = time.perf_counter()
        cpu.stop()
    report("acp_asyncio", n, CHECK, time.perf_counter() - t0, t2 - t1, cpu)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
