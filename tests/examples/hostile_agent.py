"""An ACP v1 agent whose every displayed string carries terminal escape sequences.

``python hostile_agent.py``: its name, message text, plan, tool call title,
permission options and commands embed clear-screen, OSC title and clipboard
(OSC 52), hidden-text (SGR 8), 8-bit CSI, bidi override and backspace
sequences, alongside a tab and newlines that must survive.
"""

from __future__ import annotations

import acp_trio
import trio
from acp_schema import v1

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
HIDDEN = "\x1b[8mhidden\x1b[0m"
CSI8 = "\x9b31m"
BIDI = "\u202eevil\u202c"
BACKSPACE = "abc\x08\x08\x08xyz"
HOSTILE = f"{CLEAR}{TITLE}{CLIPBOARD}{HIDDEN}{CSI8}{BIDI}{BACKSPACE}"
KEPT = "col1\tcol2\nline two\r\nline three"


class HostileAgent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name=f"hostile{TITLE}", version="1"),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def send(self, update: v1.SessionUpdate) -> None:
        await self.client.session_update(acp_trio.notification("s1", update))

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        await self.send(acp_trio.agent_text(f"{HOSTILE} {KEPT}", message_id="m1"))
        await self.send(acp_trio.plan([f"step{CLEAR}"]))
        await self.send(
            v1.AvailableCommandsUpdate(
                available_commands=[
                    v1.AvailableCommand(name=f"cmd{TITLE}", description="d")
                ]
            )
        )
        await self.send(acp_trio.tool_call("c1", f"tool{CLIPBOARD}", kind="other"))
        await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id="s1",
                tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
                options=[
                    v1.PermissionOption(
                        option_id="always", name=f"Always{HIDDEN}", kind="allow_always"
                    ),
                    v1.PermissionOption(
                        option_id="once", name=f"Once{CSI8}", kind="allow_once"
                    ),
                ],
            )
        )
        raise acp_trio.RequestError(-32603, f"failed{CLEAR}{BIDI}")


if __name__ == "__main__":
    trio.run(acp_trio.serve_agent_stdio, {1: HostileAgent})
