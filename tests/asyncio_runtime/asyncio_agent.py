"""An acp_asyncio agent for the transport tests: ``python asyncio_agent.py MODE``.

MODE ``noisy``: ``print``s in its handlers (fd 1 must be stderr by then);
``report-blocking``: after serving, writes ``blocking=<stdin> <stdout>`` to
stderr; ``family``: starts a child (``sleep 1000``, same process group)
and writes ``child=<pid>`` to stderr before serving.  A prompt "sleep S"
sleeps S seconds, then ends ``end_turn``; a prompt "wait" waits until
cancelled.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import acp_asyncio
from acp_schema import v1

MODE = sys.argv[1] if len(sys.argv) > 1 else ""


class Agent(v1.Agent):
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        if MODE == "noisy":
            print("noise from initialize")
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="asyncio-test-agent", version="1"),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        block = params.prompt[0]
        words = block.text.split() if isinstance(block, v1.TextContent) else []
        update = acp_asyncio.agent_text(" ".join(words), message_id="m1")
        await self.client.session_update(
            acp_asyncio.notification(params.session_id, update)
        )
        if words[:1] == ["sleep"]:
            await asyncio.sleep(float(words[1]))
        elif words[:1] == ["wait"]:
            await asyncio.Event().wait()
        elif words[:1] == ["ask"]:
            answer = await self.client.session_request_permission(
                v1.RequestPermissionRequest(
                    session_id=params.session_id,
                    tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
                    options=[
                        v1.PermissionOption(
                            option_id="yes", name="Yes", kind="allow_once"
                        )
                    ],
                )
            )
            if isinstance(answer.outcome, v1.RequestPermissionOutcomeCancelled):
                return v1.PromptResponse(stop_reason="cancelled")
        return v1.PromptResponse(stop_reason="end_turn")


def main() -> None:
    if MODE == "family":
        child = subprocess.Popen(["sleep", "1000"], stdout=subprocess.DEVNULL)
        print(f"child={child.pid}", file=sys.stderr, flush=True)
    asyncio.run(acp_asyncio.serve_agent_stdio(Agent))
    if MODE == "report-blocking":
        print(
            f"blocking={os.get_blocking(0)} {os.get_blocking(1)}",
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    main()
