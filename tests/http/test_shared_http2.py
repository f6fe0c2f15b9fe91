"""Over HTTP/2 one connection carries an ACP connection: its POSTs and both SSE streams.

As the official SDK's client does (httpx with prior knowledge): one TCP
connection per ACP connection, counted here by a loopback proxy in front of
hypercorn.  On that shared connection what comes for one request never
waits for another's reader: httpx's own HTTP/2 (httpcore 1.0) let the task
waiting on an idle stream hold the connection's reads, so an answer already
received waited for the next keepalive comment.  The server here sends one
every 30 s; each test is bounded well below.  Those tests give the client
(``http=``, :func:`acp_http.http_client`'s) to two ACP connections in turn:
before, only your own client shared its connection.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from functools import partial
from typing import Any

import acp_http
import anyio
import pytest
import trio
from _scenario import RecordingClient, run_scenario
from _servers import serving
from acp_schema import v1

#: each test's bound: far below the server's keepalive comments
TIMEOUT = 5
#: seconds between the server's keepalive comments on a quiet stream
KEEPALIVE = 30.0


class CountingProxy:
    """A TCP proxy to ``port`` on 127.0.0.1, in a thread of its own (trio),
    counting the connections it accepted."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.accepted = 0
        self.url = ""
        self._started = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._thread = threading.Thread(target=trio.run, args=(self._main,))

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        if not self._started.wait(TIMEOUT):
            raise RuntimeError("the proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None and self._scope is not None
        trio.from_thread.run_sync(self._scope.cancel, trio_token=self._token)
        self._thread.join(TIMEOUT)

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(
                    partial(trio.serve_tcp, host="127.0.0.1"), self._pipe, 0
                )
                port = listeners[0].socket.getsockname()[1]
                self.url = f"http://127.0.0.1:{port}/acp"
                self._started.set()

    async def _pipe(self, client: trio.SocketStream) -> None:
        self.accepted += 1
        async with client, await trio.open_tcp_stream("127.0.0.1", self.port) as server:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._copy, client, server, nursery.cancel_scope)
                await self._copy(server, client, nursery.cancel_scope)

    @staticmethod
    async def _copy(
        source: trio.SocketStream, sink: trio.SocketStream, scope: trio.CancelScope
    ) -> None:
        try:
            async for chunk in source:
                await sink.send_all(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        scope.cancel()


@pytest.fixture(scope="module")
def quiet_url() -> Iterator[str]:
    """hypercorn (trio worker) whose streams get a keepalive comment every 30 s."""
    limits = {"ACP_HTTP_LIMITS": json.dumps({"keepalive_seconds": KEEPALIVE})}
    with serving("hypercorn-trio", env=limits) as url:
        yield url


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


async def _one_session(connect: Any, url: str, **options: Any) -> None:
    """The scenario (initialize, session/new, a prompt asking a permission)."""
    async with connect(url, RecordingClient, **options) as conn:
        await run_scenario(conn)


def test_an_http2_session_uses_one_connection_on_trio(quiet_url: str) -> None:
    with CountingProxy(_port(quiet_url)) as proxy:

        async def main() -> None:
            with trio.fail_after(TIMEOUT):
                await _one_session(acp_http.connect_http, proxy.url, http2=True)

        trio.run(main)
    assert proxy.accepted == 1  # the POSTs, both streams and the DELETE


def test_an_http2_session_uses_one_connection_on_asyncio(quiet_url: str) -> None:
    with CountingProxy(_port(quiet_url)) as proxy:

        async def main() -> None:
            await _one_session(acp_http.connect_http_asyncio, proxy.url, http2=True)

        asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert proxy.accepted == 1


async def _prompts_at_once(connect: Any, url: str, **options: Any) -> None:
    """Two sessions (three streams open), each prompt asking a permission,
    both sessions' prompts at once, three times."""
    async with connect(url, RecordingClient, **options) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        sessions = [
            await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
            for _ in range(2)
        ]
        for _ in range(3):
            async with anyio.create_task_group() as task_group:
                for session in sessions:
                    task_group.start_soon(_prompt, conn, session.session_id)
        assert conn.client.permissions == 6


async def _prompt(conn: Any, session: str) -> None:
    words = [v1.TextContent(text="hello")]
    answer = await conn.agent.session_prompt(
        v1.PromptRequest(session_id=session, prompt=words)
    )
    assert answer.stop_reason == "end_turn"


def test_an_answer_on_a_shared_http2_connection_is_not_held_by_a_waiting_stream_on_trio(
    quiet_url: str,
) -> None:
    async def main() -> None:
        # your own client (http_client's, entered), shared by two connections
        with trio.fail_after(TIMEOUT):
            async with acp_http.http_client(quiet_url, http2=True) as http:
                for _ in range(2):
                    await _prompts_at_once(acp_http.connect_http, quiet_url, http=http)

    trio.run(main)


def test_an_answer_on_a_shared_http2_connection_is_not_held_by_a_waiting_stream_on_asyncio(
    quiet_url: str,
) -> None:
    async def main() -> None:
        async with acp_http.http_client(quiet_url, http2=True) as http:
            connect = acp_http.connect_http_asyncio
            for _ in range(2):
                await _prompts_at_once(connect, quiet_url, http=http)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))
