"""An agent process for the two-process tests: ``python echo_agent.py [mode]``.

Modes: ``echo`` (default), ``print`` (also prints to stdout and stderr,
which must not reach the protocol stream), ``hang`` (prompts never end),
``blocking`` (on exit, reports on stderr whether stdin and stdout are in
blocking mode again).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import acp_trio
import trio
from _acp_helpers import EchoAgent, EchoAgentV2
from acp_schema import v1

MODE = sys.argv[1] if len(sys.argv) > 1 else "echo"


class ProcessAgent(EchoAgent):
    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        if MODE == "print":
            print("stray print on stdout")
            print("a log line", file=sys.stderr, flush=True)
        if MODE == "hang":
            await trio.sleep_forever()
        return await super().session_prompt(params)

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"pid": os.getpid()}


if __name__ == "__main__":
    trio.run(acp_trio.serve_agent_stdio, {1: ProcessAgent, 2: EchoAgentV2})
    if MODE == "blocking":
        report = f"blocking: stdin={os.get_blocking(0)} stdout={os.get_blocking(1)}"
        print(report, file=sys.stderr, flush=True)
