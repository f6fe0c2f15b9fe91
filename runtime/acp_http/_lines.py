"""The local end of a client wire: the lines its connection writes.

A wire (:class:`~acp_http.HttpWire`, :class:`~acp_http.WebSocketWire`) reads
the newline-delimited JSON-RPC its connection writes on the other end of a
socket pair (or stdio, for ``python -m acp_http connect``) and sends each
line on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

__all__ = ["READ_CHUNK", "read_lines"]

#: bytes asked for by one read of the local stream
READ_CHUNK = 1 << 16


async def read_lines(
    local: anyio.abc.ByteStream, send: Callable[[list[bytes]], Awaitable[None]]
) -> None:
    """Give ``send`` the non-blank lines of each chunk ``local`` sends, until it closes."""
    partial = b""
    while True:
        try:
            chunk = await local.receive(READ_CHUNK)
        except (
            anyio.EndOfStream,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ):
            return
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        batch = [line for line in lines if line.strip()]
        if batch:
            await send(batch)
