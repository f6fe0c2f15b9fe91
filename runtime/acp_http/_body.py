"""A request's body, read within its bounds, and answers that do not wait for it.

A request refused for what its headers say (``401``, ``404``, ``405``, ``415``,
``413`` by ``Content-Length``) is answered before any of its body is read; a
body is read up to ``HttpLimits.max_body_bytes`` (``413`` as soon as the bytes
pass it) and within ``HttpLimits.body_seconds`` of the request's start
(``408``).  What an answer given before the body ended does to the rest:

- HTTP/1.1: the answer says ``Connection: close`` and the server closes the
  TCP connection after it; the rest of the body is never read;
- HTTP/2: the answer (headers and body) is sent at once, then what comes of
  the body is dropped as it arrives (the server's flow-control window is all
  it holds) until the body ends or ``body_seconds`` pass, and the stream
  ends.  An application cannot reset a stream; hypercorn (0.18) forgets one
  whose response ended, and fails its connection on DATA the client still
  sends on it: on its asyncio worker that connection alone ends (the client
  that went on sending after its answer loses its connection), on its trio
  worker the whole server.  So under trio (where hypercorn is the HTTP/2
  server) the stream ends only when its body does, however long the client
  takes; run hypercorn's asyncio worker in the open (``python -m acp_http
  serve`` does).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from math import inf
from typing import Any

import anyio
import sniffio

from ._connection import Refusal
from ._limits import HttpLimits

__all__ = ["RequestBody"]

Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]


class RequestBody:
    """An ASGI ``receive`` that knows whether the request body was read to its end.

    Call it as ``receive``; :meth:`read` reads the body within the bounds,
    :meth:`answer` answers without waiting for what is left of it.
    """

    # held by each SSE stream for its lifetime: no __dict__
    __slots__ = ("_deadline", "_limits", "_receive", "declared", "ended", "http2")

    def __init__(
        self,
        scope: Mapping[str, Any],
        headers: Mapping[str, str],
        receive: Receive,
        limits: HttpLimits,
    ) -> None:
        self._receive = receive
        self._limits = limits
        self._deadline = anyio.current_time() + limits.body_seconds
        self.http2 = scope.get("http_version") == "2"
        length = headers.get("content-length", "").strip()
        self.declared = int(length) if length.isdigit() else None
        #: the body was read to its end (or the client went away)
        self.ended = (
            not self.http2
            and not self.declared
            and ("transfer-encoding" not in headers)
        )

    async def __call__(self) -> Any:
        message = await self._receive()
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            self.ended = True
        return message

    async def read(self) -> bytes:
        """The whole body, or :class:`Refusal`: ``413`` past ``max_body_bytes``
        (by ``Content-Length`` before reading, else as soon as the bytes read
        pass it), ``408`` past ``body_seconds``, ``400`` if the client left."""
        limit = self._limits.max_body_bytes
        if self.declared is not None and self.declared > limit:
            raise Refusal(413, -32600, f"the body is over {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self._deadline - anyio.current_time()):
            while True:
                message = await self()
                if message["type"] == "http.disconnect":
                    raise Refusal(400, -32600, "the client went away")
                chunk: bytes = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise Refusal(413, -32600, f"the body is over {limit} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        seconds = self._limits.body_seconds
        raise Refusal(408, -32600, f"the body did not arrive within {seconds} s")

    async def answer(
        self,
        send: Send,
        status: int,
        body: bytes,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        """Answer now, whatever is left of the body (see the module)."""
        all_headers = list(headers)
        if body:
            all_headers.append((b"content-type", b"application/json"))
        all_headers.append((b"content-length", str(len(body)).encode()))
        if not self.ended and not self.http2:
            all_headers.append((b"connection", b"close"))
        start = {"type": "http.response.start", "status": status}
        await send({**start, "headers": all_headers})
        if self.ended or not self.http2:
            await send({"type": "http.response.body", "body": body})
            return
        await send({"type": "http.response.body", "body": body, "more_body": True})
        # dropped as it comes; on trio the stream ends with it (see the module)
        trio = sniffio.current_async_library() == "trio"
        with anyio.move_on_after(inf if trio else self._limits.body_seconds):
            while not self.ended:
                await self()
        await send({"type": "http.response.body", "body": b""})
