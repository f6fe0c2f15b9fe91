"""An ACP agent on asyncio that echoes its prompts: ``python examples/asyncio_echo_agent.py``.

The asyncio twin of ``examples/simple_agent.py``, on ``acp_asyncio`` (the
same protocol engine as ``acp_trio``): it serves protocol v1 on stdin/stdout
and any ACP client can drive it (``acp-client``, the official SDK's
``spawn_agent_process``, an editor).  A prompt turn streams a plan, the reply
as ``agent_message_chunk``s of one ``messageId``, then an "echo" tool call
that asks ``session/request_permission`` first, the tool call's updates, and
ends ``end_turn``.  A prompt containing the word "wait" starts a tool call
and runs until the client sends ``session/cancel``.

Cancellation needs no code: on ``session/cancel`` the runtime cancels the
``session_prompt`` task (an :class:`asyncio.CancelledError` at its next
``await``) and answers the prompt ``stopReason: "cancelled"``; a pending
permission request of that turn is withdrawn with ``$/cancel_request``.

Handlers are ``async def`` methods named after the wire name, ``/`` as ``_``
(``session/new`` -> ``session_new``); subclassing ``v1.Agent`` has the type
checker check each, and a method left out is answered -32601.
"""

from __future__ import annotations

import asyncio
import re

import acp_asyncio
from acp_schema import v1

AGENT_NAME = "acp-msgspec-asyncio-echo-agent"
AGENT_VERSION = "0.1.0"
WAIT = re.compile(r"\bwait\b", re.IGNORECASE)
PLAN = ["Read the prompt", "Ask permission to echo", "Echo the prompt back"]


def prompt_text(blocks: list[v1.ContentBlock]) -> str:
    """The prompt's text blocks as one line."""
    words = " ".join(b.text for b in blocks if isinstance(b, v1.TextContent))
    return " ".join(words.split())


class AsyncioEchoAgent(v1.Agent):
    """One instance per connection, built once ``initialize`` chose v1."""

    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client  # a typed v1.Client
        self.sessions: dict[str, int] = {}  # session id -> turns taken

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(
                prompt_capabilities=v1.PromptCapabilities(embedded_context=True)
            ),
            agent_info=v1.Implementation(name=AGENT_NAME, version=AGENT_VERSION),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"sess_{len(self.sessions) + 1}"
        self.sessions[session_id] = 0
        return v1.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        sid = params.session_id
        if sid not in self.sessions:
            raise acp_asyncio.RequestError(
                v1.ERROR_CODE_RESOURCE_NOT_FOUND,
                "Resource not found",
                {"sessionId": sid},
            )
        turn = self.sessions[sid] = self.sessions[sid] + 1
        text = prompt_text(params.prompt)
        call_id = f"call_{turn}"

        if WAIT.search(text):
            # Runs until session/cancel: the runtime cancels this task and
            # answers the prompt "cancelled".
            await self.update(
                sid, acp_asyncio.tool_call(call_id, "Waiting", status="in_progress")
            )
            await asyncio.Event().wait()

        await self.update(sid, self.plan(done=0))
        message_id = f"msg_{turn}"
        for word in f"You said: {text}".split(" "):
            chunk = acp_asyncio.agent_text(word + " ", message_id=message_id)
            await self.update(sid, chunk)
        await self.update(sid, self.plan(done=1))

        call = acp_asyncio.tool_call(
            call_id, f"Echo {len(text)} characters", kind="other", raw_input=text
        )
        await self.update(sid, call)
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
        if outcome.option_id != "allow":
            await self.update(
                sid, acp_asyncio.tool_call_update(call_id, status="failed")
            )
            return v1.PromptResponse(stop_reason="end_turn")
        await self.update(
            sid, acp_asyncio.tool_call_update(call_id, status="in_progress")
        )
        await self.update(
            sid,
            acp_asyncio.tool_call_update(
                call_id,
                status="completed",
                content=[acp_asyncio.tool_content(text)],
                raw_output={"echoed": text},
            ),
        )
        await self.update(sid, self.plan(done=3))
        return v1.PromptResponse(stop_reason="end_turn")

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        # Nothing to do: the runtime already cancelled this session's prompt.
        return None

    # helpers (not handlers: no protocol method has these names) ---------------------

    def plan(self, done: int) -> v1.Plan:
        """The plan with ``done`` steps completed and the next one in progress."""
        return acp_asyncio.plan(
            [
                acp_asyncio.plan_entry(
                    step,
                    status="completed"
                    if i < done
                    else "in_progress"
                    if i == done
                    else "pending",
                )
                for i, step in enumerate(PLAN)
            ]
        )

    async def update(self, session_id: str, update: v1.SessionUpdate) -> None:
        await self.client.session_update(acp_asyncio.notification(session_id, update))


if __name__ == "__main__":
    asyncio.run(acp_asyncio.serve_agent_stdio(AsyncioEchoAgent))
