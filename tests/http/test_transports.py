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
