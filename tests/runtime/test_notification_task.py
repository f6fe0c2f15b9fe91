"""Notification handlers run in one place: the connection's notification task.

Every notification handler runs there, one at a time, in the order
received, whether it arrives alone or behind others; one that yields holds
the next (and a request read behind it) until it is done.
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


async def test_every_notification_handler_runs_in_the_one_notification_task() -> None:
    async with raw_agent_of(TaskRecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        client: TaskRecordingClient = conn.client  # type: ignore[assignment]
        await peer.send(update("alone"))  # finds the notification task idle
        await trio.sleep(0.01)
        await peer.send(update("slow"))
        await peer.send(update("next"))
        await trio.sleep(0.01)
        await peer.send(update("last"))
        with trio.fail_after(5):
            await client.done.wait()
        assert client.texts() == ["alone", "slow", "next", "last"]
        assert len(set(client.tasks)) == 1, client.tasks


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
