"""The in-memory seam as an anyio byte stream: a wire and its connection in one process.

A client wire (:class:`~acp_http.HttpWire`, :class:`~acp_http.WebSocketWire`)
and an in-process agent talk to their ACP connection through the seam of
``acp_core`` (:func:`acp_core.seam_ends`): the wire holds a
:class:`SeamStream` (anyio, either backend), the connection the other end as
``acp_trio.MemoryStream`` or ``acp_asyncio.open_memory_stream``.  No socket pair: a message
crosses no kernel buffer and keeps a pipe's bounds (``capacity`` each way,
then the writer waits).
"""

from __future__ import annotations

import anyio
import anyio.abc
import anyio.lowlevel
from acp_core import SeamEnd

from ._signal import Signal

__all__ = ["SeamStream"]


class SeamStream(anyio.abc.ByteStream):
    """One end of the seam for anyio code (see the module)."""

    def __init__(self, end: SeamEnd) -> None:
        self.end = end
        self._readable = Signal()
        self._writable = Signal()
        end.incoming.on_readable = self._readable.wake
        end.outgoing.on_writable = self._writable.wake
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            data = self.end.incoming.read(max_bytes)
            if data is None:
                await self._readable.wait()
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(item)
        pipe = self.end.outgoing
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                view = view[pipe.write(view) :]
            except BrokenPipeError as exc:
                raise anyio.BrokenResourceError from exc
            except ValueError as exc:  # after send_eof
                raise anyio.ClosedResourceError from exc
            if not view:
                return
            await self._writable.wait()

    async def send_eof(self) -> None:
        self.end.outgoing.close_write()
        await anyio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self.end.close()
            self._readable.wake()
            self._writable.wake()
        await anyio.lowlevel.checkpoint()
