"""The agent the remote-transport tests serve: in process (trio or asyncio) or as a command.

Per prompt: its words streamed back as agent message chunks, then a tool call
behind a permission request; a prompt saying "slow" waits between words so
that it can be cancelled; the prompt "flood" streams 100 000 chunks.  Sessions live in a class-level store shared by
the connections of one process, so ``session/load`` on a new connection
replays them.  ``python remote_agent.py`` serves it on stdio (and, if
``$ACP_HTTP_PIDS`` names a folder, leaves a file named after its PID there).
"""

from __future__ import annotations

import itertools
from typing import Any

import acp_core
import anyio
from acp_schema import v1

_ids = itertools.count(1)


class RemoteAgent(v1.Agent):
    """Loop-neutral (anyio) handlers, served by acp_trio or acp_asyncio."""

    #: session id -> the texts prompted in it (shared by the process's connections)
    store: dict[str, list[str]] = {}  # noqa: RUF012

    def __init__(self, conn: Any) -> None:
        self.client: v1.Client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(load_session=True),
            agent_info=v1.Implementation(name="remote-agent", version="1.0"),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"sess-{next(_ids)}-{id(self) & 0xFFFF:x}"
        self.store[session_id] = []
        return v1.NewSessionResponse(session_id=session_id)

    async def session_load(
        self, params: v1.LoadSessionRequest
    ) -> v1.LoadSessionResponse:
        texts = self.store.get(params.session_id)
        if texts is None:
            raise acp_core.RequestError(-32002, f"no session {params.session_id}")
        for text in texts:
            await self.client.session_update(
                acp_core.notification(params.session_id, acp_core.user_text(text))
            )
        return v1.LoadSessionResponse()

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        sid = params.session_id
        text = " ".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        self.store.setdefault(sid, []).append(text)
        delay = 0.2 if "slow" in text else 0.0
        if text == "flood":  # far more output than a stream queues or a socket holds
            for n in range(100_000):
                await self.client.session_update(
                    acp_core.notification(sid, acp_core.agent_text(f"flood {n} "))
                )
            return v1.PromptResponse(stop_reason="end_turn")
        for word in text.split():
            await self.client.session_update(
                acp_core.notification(sid, acp_core.agent_text(word + " "))
            )
            if delay:
                await anyio.sleep(delay)  # a session/cancel lands here
        if "nopermission" in text:
            return v1.PromptResponse(stop_reason="end_turn")
        call = acp_core.tool_call("t1", "Count the words", kind="other")
        await self.client.session_update(acp_core.notification(sid, call))
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id=sid,
                tool_call=v1.ToolCallUpdate(tool_call_id="t1"),
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
        allowed = isinstance(outcome, v1.SelectedPermissionOutcome) and (
            outcome.option_id == "allow"
        )
        update = acp_core.tool_call_update(
            "t1", status="completed" if allowed else "failed"
        )
        await self.client.session_update(acp_core.notification(sid, update))
        return v1.PromptResponse(stop_reason="end_turn")

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        pass  # the runtime cancels the running prompt


if __name__ == "__main__":
    import os

    import acp_trio
    import trio

    pids = os.environ.get("ACP_HTTP_PIDS")
    if pids:  # the bridge tests check that each agent process ends
        with open(os.path.join(pids, str(os.getpid())), "w"):
            pass
    trio.run(acp_trio.serve_agent_stdio, {1: RemoteAgent})
