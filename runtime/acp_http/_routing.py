"""The RFD's routing rules as tables and pure functions (no event loop).

A message is looked at through :class:`Envelope` (``acp_core.Routing``, read
by the engine's envelope reader): its ``id``, ``method`` and the
``sessionId`` of its ``params`` or ``result``, without building the rest.  The bytes themselves are forwarded unchanged.

Client -> agent (a POST):

==========================  ====================  ==========================
method                      ``Acp-Session-Id``    the session must be
==========================  ====================  ==========================
``initialize``              absent                (creates the connection)
``session/new``             --                    --
``session/load``/``resume`` optional              (re)attached by the answer
``session/fork``            optional              owned by the connection
``session/prompt`` & co     required              owned by the connection
a response (no method)      optional              --
==========================  ====================  ==========================

Agent -> client: the answer to ``session/new|load|resume|fork`` goes on the
connection-scoped stream (the client may not have the session stream yet);
the answer to another request that named a session goes on that session's
stream; a request or notification naming a session the connection owns goes
on that session's stream; everything else on the connection-scoped stream.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

import msgspec
from acp_core import (
    DEFAULT_MAX_NESTING_DEPTH,
    INVALID_REQUEST,
    PARSE_ERROR,
    Id,
    InvalidMessage,
    Routing,
    TooDeep,
    decode_routing,
)

__all__ = [
    "ESTABLISHING",
    "HEADER_REQUIRED",
    "REATTACHING",
    "Envelope",
    "MessageError",
    "PostRule",
    "Scope",
    "decode_envelope",
    "id_key",
    "post_rule",
]

INITIALIZE: Final = "initialize"

#: Methods both official SDKs send with ``Acp-Session-Id``: the header is required.
HEADER_REQUIRED: Final = frozenset(
    {
        "session/prompt",
        "session/cancel",
        "session/set_mode",
        "session/set_config_option",
        "session/set_model",
        "session/close",
        "session/delete",
    }
)
#: Methods that attach a session the connection does not own yet.
REATTACHING: Final = frozenset({"session/load", "session/resume"})
#: Methods whose answer names (or makes) a session for this connection; it
#: travels on the connection-scoped stream.
ESTABLISHING: Final = frozenset(
    {"session/new", "session/load", "session/resume", "session/fork"}
)


#: The routing view of a message (``acp_core``'s one envelope reader).
Envelope = Routing


class MessageError(Exception):
    """A body that is not one JSON-RPC message: the HTTP status and JSON-RPC code.

    ``ident``: its ``id`` when one could be read; ``response``: it was meant
    as an answer (an ``id``, no ``method``); ``too_deep``: it nests deeper
    than the bound (``HttpLimits.max_nesting_depth``).
    """

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        ident: Id = None,
        *,
        response: bool = False,
        too_deep: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.ident = ident
        self.response = response
        self.too_deep = too_deep


def decode_envelope(
    data: bytes, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
) -> Envelope:
    """The routing view of one message; :class:`MessageError` if it is not one.

    Read by :func:`acp_core.decode_routing` (the engine's rules of what a
    JSON-RPC message is, ``max_depth`` its nesting bound); a message nested
    deeper is refused with 400 / -32600 before anything decodes it; a batch
    (a JSON array) with 501 as the RFD says; invalid JSON with 400 / -32700;
    any other non-message with 400 / -32600.
    """
    try:
        return decode_routing(data, max_depth)
    except TooDeep as exc:
        raise MessageError(
            400,
            exc.code,
            exc.message,
            exc.ident,
            response=exc.response,
            too_deep=True,
        ) from None
    except InvalidMessage as exc:
        if exc.code != PARSE_ERROR and data.lstrip()[:1] == b"[":
            raise MessageError(
                501, INVALID_REQUEST, "Batch requests are not supported"
            ) from None
        text = (
            "Parse error: the body is not JSON"
            if exc.code == PARSE_ERROR
            else exc.message
        )
        raise MessageError(
            400, exc.code, text, exc.ident, response=exc.response
        ) from None


def id_key(value: int | str | msgspec.UnsetType | None) -> str | None:
    """A request id as a table key (``1`` and ``"1"`` stay apart); None if absent."""
    if value is msgspec.UNSET:
        return None
    if isinstance(value, bool):  # pragma: no cover - msgspec decodes bools apart
        return None
    if isinstance(value, int):
        return f"n:{value}"
    if isinstance(value, str):
        return f"s:{value}"
    return "null"


class Scope(enum.Enum):
    """Where a POSTed message belongs, hence which checks it gets."""

    INITIALIZE = "initialize"
    CONNECTION = "connection"
    SESSION = "session"  # must be owned by the connection
    REATTACH = "reattach"  # session/load | session/resume: may be not owned yet


@dataclass(frozen=True, slots=True)
class PostRule:
    """What a POST asks for: its scope, its session, or the refusal."""

    scope: Scope
    session: str | None = None
    status: int = 202
    error: str | None = None


def post_rule(envelope: Envelope, header_session: str | None) -> PostRule:
    """The rule of the routing table that applies to a POSTed message.

    ``header_session`` is the ``Acp-Session-Id`` header (None if absent).
    The refusals come back with ``status`` 400 and ``error`` set.
    """
    method = envelope.method
    if method == INITIALIZE and envelope.is_request:
        return PostRule(Scope.INITIALIZE)
    params_session = envelope.params_session
    if (
        header_session is not None
        and params_session is not None
        and header_session != params_session
    ):
        return PostRule(
            Scope.SESSION,
            status=400,
            error="Acp-Session-Id differs from params.sessionId",
        )
    session = header_session if header_session is not None else params_session
    if method is msgspec.UNSET:
        return PostRule(Scope.CONNECTION if session is None else Scope.SESSION, session)
    if method in HEADER_REQUIRED and header_session is None:
        return PostRule(
            Scope.SESSION, status=400, error=f"{method} needs the Acp-Session-Id header"
        )
    if method in REATTACHING and session is not None:
        return PostRule(Scope.REATTACH, session)
    if session is None:
        return PostRule(Scope.CONNECTION)
    return PostRule(Scope.SESSION, session)
