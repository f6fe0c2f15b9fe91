"""What a remote ACP endpoint holds for its peers, and for how long.

Every bound the HTTP and WebSocket transports keep is a field of
:class:`HttpLimits`, with its default; change one with
``dataclasses.replace(HttpLimits(), max_connections=64)``.
"""

from __future__ import annotations

import dataclasses

__all__ = ["HttpLimits"]


@dataclasses.dataclass(frozen=True, slots=True)
class HttpLimits:
    """Bounds of an ACP server over Streamable HTTP and WebSocket.

    Attributes:
        max_body_bytes: the largest POST body or WebSocket message (bytes);
            a larger one is answered ``413`` (HTTP) or closes the socket with
            code 1009.  Also the longest line an agent may write: a longer one
            is discarded while it streams and judged as the engine judges one
            (``acp_core.judge_oversized``: a request answered -32600, an
            answer turned into an error for the client, a notification
            dropped; the connection goes on).
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
            (backpressure), and past ``stall_seconds`` of waiting the
            connection is closed: a reader that never reads costs no memory.
        max_queued_bytes: the same bound in bytes of JSON text.
        stall_seconds: how long agent output may wait on a full stream
            before the connection is closed.
        idle_seconds: a connection with no open stream and no request for
            this long is closed (its agent ended).
        initialize_seconds: how long the ``initialize`` POST waits for the
            agent's answer before answering ``504``.
        keepalive_seconds: an SSE comment is sent on a quiet stream this often,
            so intermediaries do not time it out.
        max_id_length: the longest request id or session id kept (characters);
            a longer one is answered ``400``.
        close_grace_seconds: how long an ended agent process gets after
            SIGTERM before its process group is killed.
    """

    max_body_bytes: int = 16 * 1024 * 1024
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
