"""The scenario every remote test runs: initialize, session/new, a prompt with
updates and a permission request, a cancel (a slow prompt cancelled)."""

from __future__ import annotations

from typing import Any

import anyio
from acp_schema import v1


class RecordingClient:
    """Grants every permission; keeps every session update."""

    def __init__(self, conn: Any) -> None:
        self.updates: list[v1.SessionNotification] = []
        self.permissions = 0

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.updates.append(params)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.permissions += 1
        option = next(o for o in params.options if o.kind == "allow_once")
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=option.option_id)
        )


def text(chunks: list[v1.SessionNotification], session: str) -> str:
    """The agent's streamed text in ``session``."""
    out = []
    for note in chunks:
        update = note.update
        if note.session_id == session and isinstance(update, v1.AgentMessageChunk):
            content = update.content
            if isinstance(content, v1.TextContent):
                out.append(content.text)
    return "".join(out)


async def run_scenario(conn: Any) -> str:
    """Drive the scenario on ``conn`` (trio or asyncio: anyio); return the session id."""
    init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    assert init.protocol_version == 1
    session = await conn.agent.session_new(
        v1.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    sid = session.session_id
    answer = await conn.agent.session_prompt(
        v1.PromptRequest(
            session_id=sid, prompt=[v1.TextContent(text="hello remote world")]
        )
    )
    assert answer.stop_reason == "end_turn"
    recorder: RecordingClient = conn.client
    assert text(recorder.updates, sid) == "hello remote world "
    assert recorder.permissions == 1
    # a cancel: a slow prompt, cancelled after its first word
    result: list[str] = []

    async def prompt() -> None:
        reply = await conn.agent.session_prompt(
            v1.PromptRequest(
                session_id=sid,
                prompt=[v1.TextContent(text="slow one two three four five six")],
            )
        )
        result.append(reply.stop_reason)

    async with anyio.create_task_group() as tg:
        tg.start_soon(prompt)
        await anyio.sleep(0.3)
        await conn.agent.session_cancel(v1.CancelNotification(session_id=sid))
    assert result == ["cancelled"], result
    return sid
