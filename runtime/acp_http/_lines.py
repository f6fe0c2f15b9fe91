"""Lines read from a byte stream, by the one framer (``acp_core.LineBuffer``).

A client wire (:class:`~acp_http.HttpWire`, :class:`~acp_http.WebSocketWire`)
reads the newline-delimited JSON-RPC its connection writes on the other end of
the in-memory seam (or stdio, for ``python -m acp_http connect``); the server
(:class:`~acp_http._connection.Connection`) reads its agent's lines.  Both go
through :func:`read_lines`: a line over the bound is discarded while it
streams and takes the engine's verdict (:func:`acp_core.judge_oversized`): a
request is answered -32600 to its sender, a response becomes an error answer
for its requester, a notification is dropped; each says so on one bounded log
line.  The wires' other direction, the server's messages (SSE events,
WebSocket text messages, framed by the same ``LineBuffer`` and bound), takes
the same verdict through :func:`hand_on`: the wire goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import anyio
import anyio.abc
from acp_core import (
    INVALID_REQUEST,
    LineBuffer,
    Oversized,
    encode_error,
    encode_id,
    judge_oversized,
)

__all__ = ["READ_CHUNK", "hand_on", "read_lines"]

log = logging.getLogger("acp_http")

#: bytes asked for by one read of the local stream
READ_CHUNK = 1 << 16

Send = Callable[[list[bytes]], Awaitable[None]]


async def read_lines(
    stream: anyio.abc.ByteStream,
    send: Send,
    *,
    max_message_size: int,
    answer_sender: Callable[[bytes], Awaitable[None]],
) -> None:
    """Give ``send`` the lines of each chunk ``stream`` sends, until it closes.

    ``send`` takes lines on (without ``\\n``); ``answer_sender`` writes a line
    (without ``\\n``) back to whoever wrote on ``stream``.  Lines over
    ``max_message_size`` are judged as the engine judges them (see the module).
    """
    buffer = LineBuffer(max_message_size=max_message_size)
    while True:
        try:
            chunk = await stream.receive(READ_CHUNK)
        except (
            anyio.EndOfStream,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ):
            await hand_on(buffer.feed_eof(), send, max_message_size, answer_sender)
            return
        await hand_on(buffer.feed(chunk), send, max_message_size, answer_sender)


async def hand_on(
    lines: Sequence[bytes | Oversized],
    send: Send,
    limit: int,
    answer_sender: Callable[[bytes], Awaitable[None]],
) -> None:
    """Give ``send`` the ``lines`` in order, each over-long one (an
    :class:`~acp_core.Oversized` record of a framer with bound ``limit``)
    judged as the engine judges it: a request answered to ``answer_sender``,
    an answer turned into an error for its requester (on to ``send``), a
    notification dropped; one bounded log line each.  Every reader of
    acp_http takes this one path, whichever way its lines go."""
    batch: list[bytes] = []
    for line in lines:
        if not isinstance(line, Oversized):
            batch.append(line)
            continue
        if batch:  # in order: what came before it first
            await send(batch)
            batch = []
        verdict = judge_oversized(line, limit)
        log.warning("%s", verdict.log)
        if verdict.answer is not None:
            await answer_sender(verdict.answer.rstrip(b"\n"))
        elif verdict.fails is not None:
            # an answer too long to carry: its requester gets an error instead
            failed = encode_error(
                encode_id(verdict.fails), INVALID_REQUEST, verdict.message
            )
            await send([failed.rstrip(b"\n")])
    if batch:
        await send(batch)
