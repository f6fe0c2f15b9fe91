"""An ACP agent written with the official Python SDK (``agent-client-protocol``, v1).

``python official_agent.py``: serves stdio with ``acp.run_agent``. A prompt
streams a plan, ``agent_message_chunk``s with a ``messageId``, a tool call
that asks ``session/request_permission``, its updates and a ``usage_update``,
then ends with ``end_turn``; a prompt saying "wait" runs until
``session/cancel`` and ends with ``cancelled``; a prompt "read /PATH" reads
the file through the client's ``fs/read_text_file`` and says its text, if
the client advertised ``fs.readTextFile`` (else it says so).
``python official_agent.py --unstable`` also serves the SDK's unstable
protocol (``use_unstable_protocol=True``) and advertises and answers
``session/fork``.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    text_block,
)
from acp.helpers import (
    plan_entry,
    start_tool_call,
    tool_content,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    Cost,
    ForkSessionResponse,
    Implementation,
    PermissionOption,
    PromptCapabilities,
    SessionCapabilities,
    SessionForkCapabilities,
    ToolCallUpdate,
    UsageUpdate,
)


def text_of(prompt: list[Any]) -> str:
    return " ".join(getattr(block, "text", "") for block in prompt)


class OfficialAgent:
    """Duck-typed ``acp.Agent``: keyword arguments in, pydantic models out."""

    def __init__(self, unstable: bool = False) -> None:
        self.unstable = unstable
        self.conn: Client | None = None
        self.client_capabilities: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}
        self.sessions: dict[str, dict[str, Any]] = {}

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(
                    fork=SessionForkCapabilities() if self.unstable else None
                ),
            ),
            agent_info=Implementation(name="official-sdk-agent", version="0.12.1"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex[:12]}"
        self.sessions[session_id] = {"cwd": cwd, "mcp_servers": mcp_servers}
        return NewSessionResponse(session_id=session_id)

    async def fork_session(
        self, session_id: str, cwd: str, **kwargs: Any
    ) -> ForkSessionResponse:
        forked = f"{session_id}_fork"
        self.sessions[forked] = {**self.sessions[session_id], "cwd": cwd}
        return ForkSessionResponse(session_id=forked)

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> PromptResponse:
        assert self.conn is not None
        conn = self.conn
        text = text_of(prompt)

        async def say(piece: str, message_id: str) -> None:
            await conn.session_update(
                session_id=session_id,
                update=AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=text_block(piece),
                    message_id=message_id,
                ),
            )

        if "wait" in text:
            event = self.cancelled[session_id] = asyncio.Event()
            await say("waiting", "m_wait")
            await event.wait()
            return PromptResponse(stop_reason="cancelled")

        steps = ["Echo", "Finish"]
        await conn.session_update(
            session_id=session_id,
            update=update_plan(
                [
                    plan_entry(s, status="in_progress" if i == 0 else "pending")
                    for i, s in enumerate(steps)
                ]
            ),
        )
        for piece in ("You said: ", text):
            await say(piece, "m_1")
        if text.startswith("read /"):
            fs = getattr(self.client_capabilities, "fs", None)
            if fs is not None and fs.read_text_file:
                read = await conn.read_text_file(session_id=session_id, path=text[5:])
                await say(f" ({read.content})", "m_1")
            else:  # the spec: only if the client advertised it
                await say(" (the client did not advertise fs.readTextFile)", "m_1")
        await conn.session_update(
            session_id=session_id,
            update=start_tool_call(
                "call_1", "Echo tool", kind="other", status="pending"
            ),
        )
        answer = await conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="call_1", title="Echo tool"),
            options=[
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        if outcome.outcome == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        if outcome.option_id == "yes":
            await conn.session_update(
                session_id=session_id,
                update=update_tool_call("call_1", status="in_progress"),
            )
            await conn.session_update(
                session_id=session_id,
                update=update_tool_call(
                    "call_1",
                    status="completed",
                    content=[tool_content(text_block(text))],
                    raw_output={"echoed": text},
                ),
            )
        else:
            await conn.session_update(
                session_id=session_id,
                update=update_tool_call("call_1", status="failed"),
            )
        await conn.session_update(
            session_id=session_id,
            update=update_plan([plan_entry(s, status="completed") for s in steps]),
        )
        await conn.session_update(
            session_id=session_id,
            update=UsageUpdate(
                session_update="usage_update",
                used=42,
                size=1000,
                cost=Cost(amount=0.5, currency="EUR"),
            ),
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()


async def main() -> None:
    unstable = "--unstable" in sys.argv[1:]
    await run_agent(OfficialAgent(unstable), use_unstable_protocol=unstable)


if __name__ == "__main__":
    asyncio.run(main())
