"""A notification's first step runs in the reading task when nothing is queued.

The client's hot path: an update that finds the notification task idle (no
notification queued or being handled) is handled by the reading task
itself, in the notification task's context, saving a task switch per
burst.  A handler that yields keeps running in that task (reading is handed
over) and the next notification waits for it: the order is the same.
"""

from __future__ import annotations

from typing import Any

import acp_trio
import trio
import trio.lowlevel
from _acp_helpers import RecordingClient, initialize_raw, raw_agent_of
from acp_schema import v1


def update(text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        },
    }


class TaskRecordingClient(RecordingClient):
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        super().__init__(conn)
        self.tasks: list[str] = []
        self.events: list[str] = []
        self.done = trio.Event()

    async def session_update(self, params: v1.SessionNotification) -> None:
        text = params.update.content.text  # type: ignore[union-attr]
        self.tasks.append(trio.lowlevel.current_task().name)
        self.events.append(f"start {text}")
        if text == "slow":
            await trio.sleep(0.05)  # yields: the rest runs on, in order
        self.events.append(f"end {text}")
        await super().session_update(params)
        if text == "last":
            self.done.set()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.events.append("permission")
        return v1.RequestPermissionResponse(
            outcome=v1.RequestPermissionOutcomeCancelled()
        )


async def test_a_lone_notification_is_handled_in_the_reading_task() -> None:
    async with raw_agent_of(TaskRecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        client: TaskRecordingClient = conn.client  # type: ignore[assignment]
        await peer.send(update("last"))
        with trio.fail_after(5):
            await client.done.wait()
        (task,) = client.tasks
        assert "_notification_loop" not in task, task


async def test_a_notification_handler_that_yields_finishes_before_the_next_starts() -> (
    None
):
    async with raw_agent_of(TaskRecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        client: TaskRecordingClient = conn.client  # type: ignore[assignment]
        await peer.send(update("slow"))
        await trio.sleep(0.01)  # the slow handler has yielded by now
        await peer.send(update("next"))
        await peer.send(update("last"))
        with trio.fail_after(5):
            await client.done.wait()
        assert client.events == [
            "start slow",
            "end slow",
            "start next",
            "end next",
            "start last",
            "end last",
        ]
        assert client.texts() == ["slow", "next", "last"]


async def test_a_request_read_while_an_inline_handler_yields_waits_for_it() -> None:
    async with raw_agent_of(TaskRecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        client: TaskRecordingClient = conn.client  # type: ignore[assignment]
        await peer.send(update("slow"))
        await trio.sleep(0.01)
        # read while the slow handler runs: it waits behind it
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "toolCall": {"toolCallId": "t"},
                    "options": [],
                },
            }
        )
        with trio.fail_after(5):
            answer = await peer.receive()
        assert answer["id"] == 9 and "result" in answer, answer
        assert client.events == ["start slow", "end slow", "permission"]
