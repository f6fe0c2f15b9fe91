"""Our agent of the v2 draft the 2.4.0 package ships (``acp_schema.v2``), on
stdio, for the TypeScript SDK's experimental v2 client.

A prompt is answered with its message id at once (the v2 prompt lifecycle:
the response acknowledges the prompt, the turn's end is an ``idle`` state
update); the turn then streams its words as ``agent_message_chunk`` updates
after a ``running`` state update, asks permission, and ends ``idle`` with
``end_turn``; a prompt saying "wait" runs until ``session/cancel``.
"""

from __future__ import annotations

import acp_trio
import trio
from acp_schema import v2


class V2Agent(v2.Agent):
    #: where turns run after their prompt was answered (set by `main`)
    nursery: trio.Nursery

    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        self.client = conn.client
        self.cancelled: dict[str, trio.Event] = {}
        self.messages = 0

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        info = v2.Implementation(name="acp-msgspec-v2-agent", version="0")
        return v2.InitializeResponse(protocol_version=2, info=info)

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id="py-session-1")

    async def state(self, session_id: str, state: str, stop: str | None = None) -> None:
        update = {"sessionUpdate": "state_update", "state": state}
        if stop is not None:
            update["stopReason"] = stop
        await self.client.session_update(
            v2.UpdateSessionNotification(
                session_id=session_id, update=v2.SessionUpdateStateUpdate(update)
            )
        )

    async def say(self, session_id: str, message_id: str, text: str) -> None:
        chunk = v2.AgentMessageChunk(
            message_id=message_id, content=v2.TextContent(text=text)
        )
        await self.client.session_update(
            v2.UpdateSessionNotification(session_id=session_id, update=chunk)
        )

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        self.messages += 1
        message_id = f"py-message-{self.messages}"
        self.cancelled[params.session_id] = trio.Event()
        self.nursery.start_soon(self.turn, params, message_id)
        return v2.PromptResponse(message_id=message_id)

    async def turn(self, params: v2.PromptRequest, message_id: str) -> None:
        sid = params.session_id
        words = " ".join(
            b.text for b in params.prompt if isinstance(b, v2.TextContent)
        ).split()
        await self.state(sid, "running")
        if "wait" in words:
            await self.cancelled[sid].wait()
            await self.state(sid, "idle", "cancelled")
            return
        for word in words:
            await self.say(sid, message_id, word + " ")
        answer = await self.client.session_request_permission(
            v2.RequestPermissionRequest(
                session_id=sid,
                title="Count the words",
                options=[
                    v2.PermissionOption(
                        option_id="allow", name="Allow", kind="allow_once"
                    ),
                    v2.PermissionOption(
                        option_id="no", name="Reject", kind="reject_once"
                    ),
                ],
            )
        )
        outcome = answer.outcome
        allowed = isinstance(outcome, v2.SelectedPermissionOutcome) and (
            outcome.option_id == "allow"
        )
        await self.say(sid, message_id, "allowed" if allowed else "rejected")
        await self.state(sid, "idle", "end_turn")

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        if params.session_id in self.cancelled:
            self.cancelled[params.session_id].set()


async def main() -> None:
    async with trio.open_nursery() as nursery:
        V2Agent.nursery = nursery
        await acp_trio.serve_agent_stdio({2: V2Agent})
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
