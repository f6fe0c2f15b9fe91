"""The same over-long line on acp_http's client wires, from the remote agent's
side, as in every reader (``acp_core.judge_oversized``; the adapters'
``spawn_agent``: tests/adapters/test_over_long_lines_from_a_spawned_agent.py):
a message past the wire's bound (the connection's ``max_message_size``) is
discarded while it streams, a request answered -32600 with its id back to the
remote agent, an answer fails its call, a notification dropped; the wire goes
on.  A real server, a real command agent (tests/http/oversized_agent.py),
real bytes over Streamable HTTP (SSE) and WebSocket."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import acp_http
import acp_trio
import pytest
import trio
from _servers import Served, serving
from acp_schema import v1

HERE = Path(__file__).resolve().parent
LIMIT = 64 * 1024  # the agent pads its over-long lines with 100 kB
INIT = v1.InitializeRequest(protocol_version=1)
NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


class Client:
    """Records the extension notifications the agent sends (``_seen``)."""

    def __init__(self, conn: Any) -> None:
        self.seen: list[Any] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        pass

    async def ext_notification(self, method: str, params: Any) -> None:
        self.seen.append((method, params))


@pytest.fixture(scope="module")
def url() -> Iterator[Served]:
    # the server's own bound (max_body_bytes, 16 MiB) lets the lines through
    command = f"{sys.executable} {HERE / 'oversized_agent.py'}"
    with serving("hypercorn-trio", env={"ACP_HTTP_AGENT": command}) as base:
        yield base


async def _turns(conn: Any) -> None:
    await conn.agent.initialize(INIT)
    with pytest.raises(acp_trio.RequestError) as refused:
        await conn.agent.session_new(NEW)
    # the over-long answer to session/new failed its call, as -32600
    assert refused.value.code == -32600
    assert f"exceeds the limit of {LIMIT} bytes" in str(refused.value)
    second = await conn.agent.session_new(NEW)
    assert second.session_id == "s2"  # the wire goes on
    # the over-long notification was dropped; the request was answered
    [(method, params)] = conn.client.seen
    assert method.lstrip("_") == "seen"
    answer = dict(params)["answer"]
    assert answer["id"] == "big" and answer["error"]["code"] == -32600
    assert answer["error"]["data"] == {"maxMessageSize": LIMIT}


async def test_an_over_long_line_is_refused_the_same_way_in_the_websocket_wire(
    url: Served,
) -> None:
    limits = acp_trio.Limits(max_message_size=LIMIT)
    with trio.fail_after(60):
        async with acp_http.connect_websocket(
            url.replace("http", "ws", 1), Client, limits=limits
        ) as conn:
            await _turns(conn)


async def test_an_over_long_line_is_refused_the_same_way_in_the_http_wire(
    url: Served,
) -> None:
    limits = acp_trio.Limits(max_message_size=LIMIT)
    with trio.fail_after(60):
        async with acp_http.connect_http(url, Client, limits=limits) as conn:
            await _turns(conn)
