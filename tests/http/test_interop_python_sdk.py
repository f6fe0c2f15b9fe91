"""Interop with the official Python SDK 0.12.1 (``agent-client-protocol``), both ways.

Its Streamable HTTP client (``acp.http.create_http_stream``) and WebSocket client
(``acp.ws.create_websocket_stream``) drive our server; our clients drive its ASGI
app (``acp.http.asgi.create_asgi_app``) on uvicorn.  Scenario: initialize,
session/new, a prompt with updates and a permission request, a cancel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import acp
import acp_http
import pytest
import trio
from _scenario import RecordingClient
from _servers import serving
from acp.http import create_http_stream
from acp.schema import AgentMessageChunk, AllowedOutcome, RequestPermissionResponse
from acp.ws import create_websocket_stream
from acp_schema import v1

TIMEOUT = 60


class SdkClient:
    """A duck-typed ``acp.Client``: keeps updates, allows every permission."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions += 1
        option = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=option.option_id, outcome="selected")
        )

    def text(self, session: str) -> str:
        return "".join(
            u.content.text
            for s, u in self.updates
            if s == session and isinstance(u, AgentMessageChunk)
        )


async def sdk_scenario(transport: Any) -> None:
    """The scenario with the SDK's client over ``transport``."""
    client = SdkClient()
    conn = acp.connect_to_agent(client, transport)
    try:
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        session = await conn.new_session(cwd="/", mcp_servers=[])
        sid = session.session_id
        answer = await conn.prompt(
            session_id=sid, prompt=[acp.text_block("hello from the sdk")]
        )
        assert answer.stop_reason == "end_turn"
        assert client.text(sid) == "hello from the sdk "
        assert client.permissions == 1
        slow = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[acp.text_block("slow a b c d e f")])
        )
        await asyncio.sleep(0.3)
        await conn.cancel(session_id=sid)
        assert (await slow).stop_reason == "cancelled"
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    """Our server (hypercorn, asyncio worker: the SDK is asyncio) with the test agent."""
    with serving("hypercorn-asyncio") as base:
        yield base


@pytest.fixture(scope="module")
def theirs() -> Iterator[str]:
    """The SDK's ASGI app on uvicorn (it speaks HTTP/1.1 only)."""
    with serving("uvicorn", app="official_app:app") as base:
        yield base


def test_the_sdks_http_client_drives_our_server(ours: str) -> None:
    asyncio.run(asyncio.wait_for(sdk_scenario(create_http_stream(ours)), TIMEOUT))


def test_the_sdks_websocket_client_drives_our_server(ours: str) -> None:
    async def main() -> None:
        transport = await create_websocket_stream(ours.replace("http", "ws", 1))
        await sdk_scenario(transport)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


async def our_scenario(conn: Any) -> None:
    """The scenario with our client against the SDK's agent ("wait" runs until cancelled)."""
    init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    assert init.protocol_version == 1
    session = await conn.agent.session_new(
        v1.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    sid = session.session_id
    answer = await conn.agent.session_prompt(
        v1.PromptRequest(session_id=sid, prompt=[v1.TextContent(text="ping")])
    )
    assert answer.stop_reason == "end_turn"
    client: RecordingClient = conn.client
    assert client.permissions == 1
    kinds = {type(n.update).__name__ for n in client.updates}
    assert {"AgentMessageChunk", "ToolCall", "SessionUpdateToolCallUpdate"} <= kinds, (
        kinds
    )
    result: list[str] = []

    async def waiting() -> None:
        reply = await conn.agent.session_prompt(
            v1.PromptRequest(session_id=sid, prompt=[v1.TextContent(text="wait")])
        )
        result.append(reply.stop_reason)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiting)
        await trio.sleep(0.3)
        await conn.agent.session_cancel(v1.CancelNotification(session_id=sid))
    assert result == ["cancelled"]


async def test_our_http_client_drives_the_sdks_asgi_app(theirs: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(theirs, RecordingClient, http2=False) as conn:
            await our_scenario(conn)


async def test_our_websocket_client_drives_the_sdks_asgi_app(theirs: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_websocket(
            theirs.replace("http", "ws", 1), RecordingClient
        ) as conn:
            await our_scenario(conn)
