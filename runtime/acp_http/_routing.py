"""The RFD's routing rules as tables and pure functions (no event loop).

A message is looked at through :class:`Envelope`: its ``id``, ``method`` and
the ``sessionId`` of its ``params`` or ``result``, decoded by msgspec without
building the rest.  The bytes themselves are forwarded unchanged.

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


class _Ref(msgspec.Struct):
    session_id: str | None = msgspec.field(default=None, name="sessionId")


class Envelope(msgspec.Struct):
    """The routing fields of one JSON-RPC message (the rest is not decoded)."""

    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: int | str | msgspec.UnsetType | None = msgspec.UNSET
    method: str | None = None
    params: _Ref | None = None
    result: _Ref | None = None
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET

    @property
    def is_response(self) -> bool:
        """An answer: an ``id`` and no ``method``."""
        return self.method is None and self.id is not msgspec.UNSET

    @property
    def is_request(self) -> bool:
        """A call expecting an answer: a ``method`` and an ``id``."""
        return self.method is not None and self.id is not msgspec.UNSET

    @property
    def is_error(self) -> bool:
        """An answer carrying ``error``."""
        return self.error is not msgspec.UNSET

    @property
    def params_session(self) -> str | None:
        """``params.sessionId`` if it is a string."""
        return None if self.params is None else self.params.session_id

    @property
    def result_session(self) -> str | None:
        """``result.sessionId`` if it is a string."""
        return None if self.result is None else self.result.session_id


class _Loose(msgspec.Struct):
    """Fallback view when ``params``/``result`` are not objects."""

    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: int | str | msgspec.UnsetType | None = msgspec.UNSET
    method: str | None = None


_envelope = msgspec.json.Decoder(Envelope)
_loose = msgspec.json.Decoder(_Loose)
_any = msgspec.json.Decoder()


class MessageError(Exception):
    """A body that is not one JSON-RPC message: the HTTP status and JSON-RPC code."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def decode_envelope(data: bytes) -> Envelope:
    """The routing view of one message; :class:`MessageError` if it is not one.

    A batch (a JSON array) is refused with 501 as the RFD says; invalid JSON
    with 400 / -32700; any other non-object with 400 / -32600.
    """
    try:
        return _envelope.decode(data)
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError:
        raise MessageError(400, -32700, "Parse error: the body is not JSON") from None
    try:
        loose = _loose.decode(data)
    except msgspec.ValidationError:
        value = _any.decode(data)
        if isinstance(value, list):
            raise MessageError(
                501, -32600, "Batch requests are not supported"
            ) from None
        raise MessageError(
            400, -32600, "Invalid Request: not a JSON-RPC message"
        ) from None
    return Envelope(jsonrpc=loose.jsonrpc, id=loose.id, method=loose.method)


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
    if method is None:
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
