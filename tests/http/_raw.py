"""Raw HTTP for the routing tests: POSTs and SSE streams seen as they are on the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx
import msgspec
from acp_http._sse import SseReader

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1},
}


def request(rid: int, method: str, **params: Any) -> dict[str, Any]:
    """A JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def new_session(rid: int) -> dict[str, Any]:
    """A session/new request."""
    return request(rid, "session/new", cwd="/", mcpServers=[])


def prompt(rid: int, session: str, text: str) -> dict[str, Any]:
    """A session/prompt request."""
    return request(
        rid,
        "session/prompt",
        sessionId=session,
        prompt=[{"type": "text", "text": text}],
    )


class Stream:
    """The messages of one SSE stream, read by a task of the test's nursery."""

    def __init__(self) -> None:
        self.status = 0
        self.body = b""
        send, self._receive = anyio.create_memory_object_stream[dict[str, Any]](1000)
        self._send = send
        self.opened = anyio.Event()

    async def next(self, wait: float = 10) -> dict[str, Any]:
        """The next message (fails after ``wait`` seconds)."""
        with anyio.fail_after(wait):
            return await self._receive.receive()

    async def until(self, predicate: Any, wait: float = 10) -> list[dict[str, Any]]:
        """Messages up to and including the first that ``predicate`` accepts."""
        seen = []
        while True:
            message = await self.next(wait)
            seen.append(message)
            if predicate(message):
                return seen


class Raw:
    """An HTTP/2 client speaking the RFD by hand."""

    def __init__(
        self, url: str, http: httpx.AsyncClient, tg: anyio.abc.TaskGroup
    ) -> None:
        self.url = url
        self.http = http
        self.tg = tg

    async def post(
        self, body: Any, cid: str | None = None, sid: str | None = None, **headers: str
    ) -> httpx.Response:
        """POST ``body`` (JSON-encoded unless bytes) with the identity headers given."""
        all_headers = {"content-type": "application/json", **headers}
        if cid is not None:
            all_headers["acp-connection-id"] = cid
        if sid is not None:
            all_headers["acp-session-id"] = sid
        content = body if isinstance(body, bytes) else msgspec.json.encode(body)
        return await self.http.post(self.url, content=content, headers=all_headers)

    async def initialize(self) -> str:
        """A new connection's id."""
        response = await self.post(INIT)
        assert response.status_code == 200, response.text
        return response.headers["acp-connection-id"]

    async def stream(self, cid: str, sid: str | None = None, **headers: str) -> Stream:
        """Open an SSE stream (wait for its status)."""
        stream = Stream()
        all_headers = {
            "accept": "text/event-stream",
            "acp-connection-id": cid,
            **headers,
        }
        if sid is not None:
            all_headers["acp-session-id"] = sid
        self.tg.start_soon(self._read, stream, all_headers)
        await stream.opened.wait()
        return stream

    async def _read(self, stream: Stream, headers: dict[str, str]) -> None:
        reader = SseReader(1 << 20)
        try:
            async with self.http.stream("GET", self.url, headers=headers) as response:
                stream.status = response.status_code
                if response.status_code != 200:
                    stream.body = await response.aread()
                    return
                stream.opened.set()
                async for chunk in response.aiter_raw():
                    for data in reader.feed(chunk):
                        await stream._send.send(msgspec.json.decode(data))
        except httpx.HTTPError:
            pass
        finally:
            stream.opened.set()
            stream._send.close()


@asynccontextmanager
async def raw_client(url: str, http2: bool = True) -> AsyncIterator[Raw]:
    """A :class:`Raw` client whose streams end with the block."""
    async with (
        httpx.AsyncClient(
            http1=not http2, http2=http2, timeout=httpx.Timeout(10, read=None)
        ) as http,
        anyio.create_task_group() as tg,
    ):
        yield Raw(url, http, tg)
        tg.cancel_scope.cancel()
