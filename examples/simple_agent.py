"""A small ACP agent to copy: streams text, runs a tool behind a permission request.

``python examples/simple_agent.py`` serves protocol v1 on stdin/stdout. Each
prompt is answered by streaming the words back, then a "count words" tool call
that asks the client's permission first; a prompt that says "slow" streams
slowly enough to be cancelled.

Handler names: each protocol method is an ``async def`` named after its wire
name, ``/`` becoming ``_`` (``session/new`` -> ``session_new``,
``fs/read_text_file`` -> ``fs_read_text_file``); ``acp_schema.v1.Agent`` lists
them all. Subclass it and write the methods you support: the type checker
then checks each against the protocol, and a method left out (a stub of the
Protocol) is answered -32601 (method not found). The connection parameter,
``AgentSideConnection[v1.Client]``, tells the type checker which version you
speak, so ``self.client`` is a typed ``v1.Client``.

Cancellation needs no code: on ``session/cancel`` the runtime cancels the
running ``session_prompt`` (a trio cancellation at its next ``await``) and
answers it ``stopReason: "cancelled"``; use ``try``/``finally`` to clean up.
"""

from __future__ import annotations

import acp_trio
import trio
from acp_schema import v1


class SimpleAgent(v1.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client
        self.turns = 0

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="simple-agent", version="1.0"),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="session-1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.turns += 1
        sid = params.session_id
        text = " ".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        delay = 0.5 if "slow" in text else 0.0

        # 1. Stream the reply: chunks of one message (one messageId).
        message_id = f"reply-{self.turns}"
        for word in text.split():
            chunk = acp_trio.agent_text(word + " ", message_id=message_id)
            await self.client.session_update(acp_trio.notification(sid, chunk))
            await trio.sleep(delay)  # a session/cancel lands here

        # 2. A tool call, announced, then run only if the user allows it.
        call_id = f"count-{self.turns}"
        call = acp_trio.tool_call(call_id, "Count the words", kind="other")
        await self.client.session_update(acp_trio.notification(sid, call))
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id=sid,
                tool_call=v1.ToolCallUpdate(tool_call_id=call_id),
                options=[
                    v1.PermissionOption(
                        option_id="allow", name="Allow", kind="allow_once"
                    ),
                    v1.PermissionOption(
                        option_id="reject", name="Reject", kind="reject_once"
                    ),
                ],
            )
        )
        outcome = answer.outcome
        if isinstance(outcome, v1.RequestPermissionOutcomeCancelled):
            return v1.PromptResponse(stop_reason="cancelled")
        if outcome.option_id == "allow":
            result = acp_trio.tool_content(f"{len(text.split())} words")
            update = acp_trio.tool_call_update(
                call_id, status="completed", content=[result]
            )
        else:
            update = acp_trio.tool_call_update(call_id, status="failed")
        await self.client.session_update(acp_trio.notification(sid, update))
        return v1.PromptResponse(stop_reason="end_turn")

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        pass  # the runtime already cancelled the running prompt


if __name__ == "__main__":
    trio.run(acp_trio.serve_agent_stdio, {1: SimpleAgent})
