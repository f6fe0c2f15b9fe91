"""Errors: what a peer sends back, and what the runtime raises locally.

A handler raises :class:`RequestError` to answer a request with a JSON-RPC
error object; a caller gets a :class:`RequestError` when the peer answered
with one::

    async def session_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        raise acp_core.RequestError(RESOURCE_NOT_FOUND, "no such session", {"sessionId": params.session_id})

The standard JSON-RPC codes are plain constants here; ACP-specific codes
(``-32800`` request cancelled, ``-32000`` authentication required, ...) come
from the generated schema module of the negotiated version.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "CapabilityError",
    "ConnectionClosed",
    "ProtocolVersionError",
    "RequestError",
    "VersionUnavailableError",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: ACP's "request cancelled" (v1 ``ErrorCode``); used only where the
#: negotiated schema defines ``$/cancel_request``.
REQUEST_CANCELLED = -32800


class RequestError(Exception):
    """A JSON-RPC error object, raised by handlers and by callers.

    ``code`` is an integer, ``message`` a short sentence, ``data`` any JSON
    value (``msgspec.UNSET`` when absent, which is distinct from ``None``).
    """

    def __init__(self, code: int, message: str, data: Any = msgspec.UNSET) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        if self.data is msgspec.UNSET:
            return f"{self.message} ({self.code})"
        return f"{self.message} ({self.code}): {self.data!r}"

    def __repr__(self) -> str:
        return f"RequestError({self.code!r}, {self.message!r}, {self.data!r})"


class ConnectionClosed(Exception):
    """The connection ended (EOF, peer exit, or closed locally).

    Every request still waiting for its response fails with this error as
    soon as the runtime notices that the peer is gone.
    """


class CapabilityError(Exception):
    """A call refused locally: the peer did not advertise what it needs.

    Raised before anything is sent, e.g. ``session/load`` towards an agent
    whose ``initialize`` response did not advertise loading sessions.
    """


class ProtocolVersionError(Exception):
    """The peer answered ``initialize`` with a protocol version we do not speak."""


class VersionUnavailableError(ValueError):
    """A protocol version this install cannot serve: its generated module
    (``acp_schema.vN``) failed to import (a broken or half-regenerated file).

    Raised where that version is offered or built (a connection offering it,
    a builder asked for it); the cause is chained (``__cause__``) and logged
    once, at WARNING.  The other versions, and ``import acp_trio`` itself,
    are not affected.  A ``ValueError``, like offering a version that does
    not exist.
    """

    def __init__(self, version: int, module: str, cause: BaseException) -> None:
        super().__init__(
            f"protocol v{version} is unavailable: its generated module {module} "
            f"failed to import ({type(cause).__name__}: {cause}); offer the other "
            "versions, or regenerate acp_schema (python -m acp_codegen)"
        )
        self.version = version
        self.module = module


def not_initialized(method: str, hint: str) -> RequestError:
    """The -32600 refusing ``method`` before ``initialize`` was answered (both sides).

    -32600 because the request is well formed but not valid in the
    connection's state; neither schema has a "not initialized" code.
    ``hint`` tells the peer what is missing.
    """
    return RequestError(
        INVALID_REQUEST,
        f"Invalid request: the connection is not initialized ({hint})",
        {"method": method[:64]},
    )


def method_not_found(method: str, data: Any = msgspec.UNSET) -> RequestError:
    """The -32601 answering ``method``: not in the schema, no handler for it,
    or (``data`` says why) not advertised by this side.  The one builder of
    it: its message names the method, whoever refuses."""
    return RequestError(METHOD_NOT_FOUND, f"Method not found: {method}", data)
