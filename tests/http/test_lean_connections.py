"""Issue 29, item 8: what the server holds per idle connection (its tasks, its locks).

An idle connection is held by thousands at once, so each object it keeps
counts.  The app is driven here by hand through ASGI 3 (its public
interface): the lifespan, then ``initialize`` POSTs, each opening a
connection whose agent runs in the server's event loop (``InProcessAgent``).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import acp_http
import anyio
import anyio.abc
import msgspec
import pytest
import trio
from acp_core import seam_ends
from acp_http._body import RequestBody
from acp_http._connection import Connection
from acp_http._seam import SeamStream
from remote_agent import RemoteAgent

BACKENDS = ["asyncio", "trio"]
INIT = msgspec.json.encode(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
)
CONNECTIONS = 3


@asynccontextmanager
async def started(app: acp_http.AcpHttpApp) -> AsyncIterator[None]:
    """The app's lifespan, started for the block, shut down after it."""
    to_app, app_receives = anyio.create_memory_object_stream[dict[str, Any]](4)
    app_sends, from_app = anyio.create_memory_object_stream[dict[str, Any]](4)

    async def receive() -> dict[str, Any]:
        return await app_receives.receive()

    async def send(message: dict[str, Any]) -> None:
        await app_sends.send(message)

    scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
    async with anyio.create_task_group() as lifespan:
        lifespan.start_soon(app, scope, receive, send)
        await to_app.send({"type": "lifespan.startup"})
        assert (await from_app.receive())["type"] == "lifespan.startup.complete"
        try:
            yield
        finally:
            await to_app.send({"type": "lifespan.shutdown"})
            assert (await from_app.receive())["type"] == "lifespan.shutdown.complete"


async def post_initialize(app: acp_http.AcpHttpApp) -> str:
    """One ``initialize`` POST: a new connection; its id."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "path": "/acp",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(INIT)).encode()),
        ],
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": INIT, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await anyio.sleep_forever()
        raise AssertionError  # not reached

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    assert sent[0]["status"] == 200, sent
    return dict(sent[0]["headers"])[b"acp-connection-id"].decode()


def _scope(method: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "path": "/acp",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
        "server": ("127.0.0.1", 8000),
    }


async def get_stream(
    app: acp_http.AcpHttpApp, connection_id: str, left: anyio.Event
) -> list[dict[str, Any]]:
    """The connection's SSE stream, read until ``left`` is set (the client
    disconnects); what the app sent."""
    headers = [
        (b"accept", b"text/event-stream"),
        (b"acp-connection-id", connection_id.encode()),
    ]
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_scope("GET", headers), receive, send)
    return sent


def alive(kind: type) -> int:
    """How many objects of ``kind`` exist."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


async def adapter_tasks(backend: str) -> int:
    """The tasks the loop's adapter runs for one agent connection it serves."""
    before = len(anyio.get_running_tasks())
    if backend == "trio":
        import acp_trio

        agent_end, _client_end = acp_trio.memory_stream_pair()
        async with acp_trio.connect_to_client(agent_end, RemoteAgent):
            await anyio.wait_all_tasks_blocked()
            return len(anyio.get_running_tasks()) - before
    import acp_asyncio

    agent_end, _client_end = seam_ends()
    async with acp_asyncio.connect_to_client_in_memory(agent_end, RemoteAgent):
        await asyncio.sleep(0)
        await anyio.wait_all_tasks_blocked()
        return len(anyio.get_running_tasks()) - before


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_in_process_agent_runs_in_its_connections_task(backend: str) -> None:
    # the connection's one task runs its pump and its agent together: beside
    # it, only the tasks the adapter runs for any connection it serves
    async def main() -> tuple[int, int]:
        own = await adapter_tasks(backend)
        app = acp_http.asgi_app(acp_http.InProcessAgent(RemoteAgent))
        with anyio.fail_after(20):
            async with started(app):
                await anyio.wait_all_tasks_blocked()
                before = len(anyio.get_running_tasks())
                for _ in range(CONNECTIONS):
                    await post_initialize(app)
                await anyio.wait_all_tasks_blocked()
                added = len(anyio.get_running_tasks()) - before
        return own, added

    own, added = anyio.run(main, backend=backend)
    assert own >= 1
    assert added == CONNECTIONS * (own + 1)


LOCKS = (anyio.Lock, asyncio.Lock, trio.Lock, asyncio.Event)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_idle_connection_holds_no_lock_of_its_own(backend: str) -> None:
    async def main() -> list[object]:
        app = acp_http.asgi_app(acp_http.InProcessAgent(RemoteAgent))
        with anyio.fail_after(20):
            async with started(app):
                connection_id = await post_initialize(app)
                connection = app.registry.connections[connection_id]
                return [o for o in gc.get_referents(connection) if isinstance(o, LOCKS)]

    assert anyio.run(main, backend=backend) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_lines_written_at_once_to_an_agent_are_never_interleaved(backend: str) -> None:
    # one writer at a time, whatever the agent's pipe holds (64 bytes here)
    async def main() -> list[bytes]:
        ours, theirs = seam_ends(64)

        class Handle:
            stream = SeamStream(ours)

        connection = Connection(
            "c",
            Handle(),
            acp_http.HttpLimits(),
            single_stream=False,  # type: ignore[arg-type]
        )
        agent = SeamStream(theirs)
        lines = [bytes([ord("a") + n]) * 300 for n in range(4)]
        received = b""
        with anyio.fail_after(20):
            async with anyio.create_task_group() as writers:
                for line in lines:
                    writers.start_soon(connection.write, line)
                while received.count(b"\n") < len(lines):
                    received += await agent.receive()
        return received.splitlines()

    got = anyio.run(main, backend=backend)
    assert sorted(got) == sorted(bytes([ord("a") + n]) * 300 for n in range(4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_idle_sse_stream_keeps_no_body_reader(backend: str) -> None:
    # it reads its client's disconnect from ASGI's receive itself
    async def main() -> tuple[int, list[str]]:
        app = acp_http.asgi_app(acp_http.InProcessAgent(RemoteAgent))
        left = anyio.Event()
        ends: list[str] = []
        with anyio.fail_after(20):
            async with started(app):
                connection_id = await post_initialize(app)

                async def stream() -> None:
                    sent = await get_stream(app, connection_id, left)
                    ends.append(f"{sent[0]['status']} {len(sent)}")

                async with anyio.create_task_group() as streams:
                    streams.start_soon(stream)
                    await anyio.wait_all_tasks_blocked()
                    readers = alive(RequestBody)
                    left.set()  # the client leaves: the stream ends
        return readers, ends

    readers, ends = anyio.run(main, backend=backend)
    assert readers == 0
    assert ends == ["200 1"]  # its headers, then nothing: the client left
