"""What a remote ACP endpoint holds for its peers, and for how long.

Every bound the HTTP and WebSocket transports keep is a field of
:class:`HttpLimits`, with its default; change one with
``dataclasses.replace(HttpLimits(), max_connections=64)``.
"""

from __future__ import annotations

import dataclasses

from acp_core import DEFAULT_MAX_NESTING_DEPTH

__all__ = ["HttpLimits"]


@dataclasses.dataclass(frozen=True, slots=True)
class HttpLimits:
    """Bounds of an ACP server over Streamable HTTP and WebSocket.

    Attributes:
        max_body_bytes: the largest POST body or WebSocket message (bytes);
            a larger one is answered ``413`` (HTTP: at once when its
            ``Content-Length`` says so, else as soon as the bytes read pass
            it; the rest is not read) or closes the socket with code 1009.
            Give the server the same bound for WebSocket messages
            (``python -m acp_http serve`` does: hypercorn's
            ``websocket_max_message_size``; uvicorn ``--ws-max-size``).
            uvicorn then refuses a larger frame as it streams and closes the
            socket; hypercorn (0.18) sends its 1009 close at the bound but
            goes on reading and holding what the client sends until the
            client closes (no setting changes that, and the application is
            not told): under hypercorn a peer past the token can make the
            server hold as much as it sends.
            Also the longest line an agent may write: a longer one
            is discarded while it streams and judged as the engine judges one
            (``acp_core.judge_oversized``: a request answered -32600, an
            answer turned into an error for the client, a notification
            dropped; the connection goes on).
        max_nesting_depth: how deep a message may nest arrays and objects
            (``acp_core.Limits.max_nesting_depth``, the same check), from
            the client (a POST: ``400``; a WebSocket message: an error
            answer) or the agent (judged as the engine judges it: a request
            answered -32600, an answer turned into an error for the client,
            a notification dropped).  Nothing decodes a deeper message; the
            connection goes on.
        body_seconds: how long a request's body may take to arrive, from its
            headers.  Past it the request is answered ``408`` and the rest of
            its body is not read.  A request refused for its headers (``401``,
            ``404``, ``405``, ``413`` by ``Content-Length``, ``415``...) is
            answered before any of its body is read.  Over HTTP/1.1 a request
            answered before its body ended closes its TCP connection
            (``Connection: close``).  Over HTTP/2 (no application can reset
            a stream) the answer is sent at once, what comes of the body is
            dropped as it arrives, and the stream ends with the body or
            ``body_seconds`` after the answer, whichever comes first; a
            client that sends on after that loses its connection (hypercorn
            0.18 fails it).  Under trio the stream ends only with the body:
            hypercorn's trio worker would let that client end the server
            (see :mod:`acp_http._body`).  How long a client may take over
            its request headers is the server's setting (hypercorn and
            uvicorn: their keep-alive timeout, 5 s).
        max_connections: ACP connections (HTTP or WebSocket) a server holds at
            once, counted from the moment one's agent starts launching; one
            more ``initialize`` (or upgrade) is answered ``503``.
        max_sessions_per_connection: sessions a connection may own or reserve
            (a session-scoped GET before its ``session/load``, a pending
            ``session/new`` or ``session/fork``); one more is answered
            ``429``.
        max_pending_requests: client requests a connection forwards to its
            agent and still waits to answer; one more is answered ``429``.
        max_queued_events: messages queued for one SSE stream (or WebSocket)
            its reader has not taken; past it the agent's output waits
            (backpressure).
        max_queued_bytes: bytes of JSON text one connection holds for its
            readers: queued on all its streams together (a session stream
            nobody opened included) and being sent.  Past it the agent's
            output waits (backpressure).
        stall_seconds: how long a message may wait for its reader: queued
            on a stream (opened or not) or in a send that does not complete
            (a reader that stopped reading).  Past it the connection is
            closed (checked every ``stall_seconds / 4``), its queues dropped
            and every send of its streams abandoned: what a reader that does
            not read costs is at most ``max_queued_bytes`` per connection,
            for at most about ``1.25 * stall_seconds``.
        idle_seconds: a connection with no open stream and no request for
            this long is closed (its agent ended).
        initialize_seconds: how long the ``initialize`` POST waits for the
            agent's answer before answering ``504``.
        keepalive_seconds: an SSE comment is sent on a stream quiet this
            long, so intermediaries do not time it out (checked every
            ``keepalive_seconds / 3``: within about ``1.33 *
            keepalive_seconds`` of quiet).
        max_id_length: the longest request id or session id kept (characters);
            a longer one is answered ``400``.
        close_grace_seconds: how long an ended agent process gets after
            SIGTERM before its process group is killed.
    """

    max_body_bytes: int = 16 * 1024 * 1024
    max_nesting_depth: int = DEFAULT_MAX_NESTING_DEPTH
    body_seconds: float = 10.0
    max_connections: int = 1024
    max_sessions_per_connection: int = 64
    max_pending_requests: int = 128
    max_queued_events: int = 1024
    max_queued_bytes: int = 8 * 1024 * 1024
    stall_seconds: float = 30.0
    idle_seconds: float = 300.0
    initialize_seconds: float = 30.0
    keepalive_seconds: float = 15.0
    max_id_length: int = 1024
    close_grace_seconds: float = 2.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value <= 0:
                raise ValueError(
                    f"HttpLimits.{field.name} must be positive, got {value!r}"
                )
