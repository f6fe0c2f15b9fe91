"""Issue 29, items 2 and 8: a stream's blocked send is abandoned when its connection closes.

An SSE response whose send does not complete (a reader that stopped
reading) is ended by :meth:`Connection.close` itself: at once when the
connection dropped what it held, else ``FLUSH_SECONDS`` later; no task per
stream waits for the close.  The app is driven in process, its ``send``
blocking forever on the first event, as a socket nobody reads does.
"""

from __future__ import annotations

from typing import Any

import acp_http
import anyio
import pytest
import trio
from remote_agent import RemoteAgent

EVENT = b'{"jsonrpc":"2.0","method":"_test/ping","params":{}}'


@pytest.mark.parametrize("drop", [True, False], ids=["dropped", "flushed"])
async def test_a_blocked_sse_send_is_abandoned_when_its_connection_closes(
    drop: bool,
) -> None:
    app = acp_http.asgi_app(acp_http.InProcessAgent(RemoteAgent))
    with trio.fail_after(10):
        async with anyio.create_task_group() as task_group:
            app.registry.task_group = task_group
            connection = await app.registry.create(single_stream=False)
            blocked, ended = trio.Event(), trio.Event()

            async def receive() -> Any:
                await trio.sleep_forever()  # the client never goes away

            async def send(message: Any) -> None:
                if message["type"] == "http.response.body" and message.get("body"):
                    blocked.set()
                    await trio.sleep_forever()  # a socket nobody reads

            scope = {
                "type": "http",
                "method": "GET",
                "path": "/acp",
                "headers": [
                    (b"host", b"127.0.0.1:8000"),
                    (b"accept", b"text/event-stream"),
                    (b"acp-connection-id", connection.id.encode()),
                ],
                "server": ("127.0.0.1", 8000),
            }

            async def get() -> None:
                await app(scope, receive, send)
                ended.set()

            task_group.start_soon(get)
            await connection.queue(connection.outbox, EVENT)
            await blocked.wait()
            await connection.close("the test", drop=drop)
            await ended.wait()  # the response ended, its send abandoned
            task_group.cancel_scope.cancel()
