"""Our clients (trio and asyncio; Streamable HTTP and WebSocket) run the scenario
against our server on hypercorn (trio and asyncio workers, HTTP/2) and uvicorn."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import acp_http
import pytest
import trio
from _scenario import RecordingClient, run_scenario
from _servers import serving
from acp_schema import v1

TIMEOUT = 60


@pytest.fixture(
    scope="module", params=["hypercorn-trio", "hypercorn-asyncio", "uvicorn"]
)
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(kind, /acp URL) of each server serving the test agent."""
    with serving(request.param) as base:
        yield request.param, base


def _http2(kind: str) -> bool:
    return kind != "uvicorn"  # uvicorn speaks HTTP/1.1 only


async def test_streamable_http_client_on_trio(server: tuple[str, str]) -> None:
    kind, url = server
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(
            url, RecordingClient, http2=_http2(kind)
        ) as conn:
            await run_scenario(conn)


async def test_websocket_client_on_trio(server: tuple[str, str]) -> None:
    _, url = server
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_websocket(
            url.replace("http", "ws", 1), RecordingClient
        ) as conn:
            await run_scenario(conn)


def test_streamable_http_client_on_asyncio(server: tuple[str, str]) -> None:
    kind, url = server

    async def main() -> None:
        async with acp_http.connect_http_asyncio(
            url, RecordingClient, http2=_http2(kind)
        ) as conn:
            await run_scenario(conn)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_websocket_client_on_asyncio(server: tuple[str, str]) -> None:
    _, url = server

    async def main() -> None:
        ws_url = url.replace("http", "ws", 1)
        async with acp_http.connect_websocket_asyncio(ws_url, RecordingClient) as conn:
            await run_scenario(conn)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def _established_to(port: int) -> int:
    """TCP connections established to 127.0.0.1:``port`` (client ends, /proc/net/tcp)."""
    with open("/proc/net/tcp") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    # rem_address is "0100007F:PORT" (hex); state 01 is ESTABLISHED
    return sum(1 for row in rows if row[2] == f"0100007F:{port:04X}" and row[3] == "01")


async def test_each_sse_stream_has_a_connection_of_its_own(url: str) -> None:
    # Over one shared HTTP/2 connection, httpcore lets the reader of an idle
    # stream hold the connection's reads: a POST's answer that another task
    # already received waited with it, until the next keepalive comment.
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(url, RecordingClient) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            new = v1.NewSessionRequest(cwd="/", mcp_servers=[])
            sid = (await conn.agent.session_new(new)).session_id
            prompt = [v1.TextContent(text="hello")]
            # its POST waits until the session's stream is open
            await conn.agent.session_prompt(
                v1.PromptRequest(session_id=sid, prompt=prompt)
            )
            # the POSTs' HTTP/2 connection, the connection's stream's, the session's
            assert _established_to(port) == 3
