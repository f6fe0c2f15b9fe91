"""The wire shapes of a proxy chain, without I/O: ``proxy/successor`` and hop ids.

Shared by the conductor (``acp_conductor``) and the proxy API of both
adapters: both wrap and unwrap ``proxy/successor`` and both forward requests
under ids of their own connection.  Params and results stay raw bytes
(``msgspec.Raw``), so what no one changed is forwarded as it came::

    inner = unwrap_successor(envelope.params)        # SuccessorMessage
    line = wrap_request(b"7", inner.method, inner.params)
    ids = HopIds()
    ours = ids.take(5)      # 5 if it is free on this connection, else a fresh id

The 2.4.0 schema's rules (``ProxySuccessorRequest``): the envelope's own
``_meta`` is hop-local (never copied into the unwrapped message); omitted and
``null`` params are the same (no params); cancellation is hop-local, a
``$/cancel_request`` is never wrapped.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ._errors import INVALID_PARAMS, RequestError
from ._jsonrpc import Id

__all__ = [
    "CANCEL_REQUEST",
    "PROXY_INITIALIZE",
    "SUCCESSOR",
    "HopIds",
    "SuccessorMessage",
    "plain_notification",
    "plain_request",
    "response_line",
    "unwrap_successor",
    "wrap_notification",
    "wrap_request",
]

SUCCESSOR: Final = "proxy/successor"
PROXY_INITIALIZE: Final = "proxy/initialize"
CANCEL_REQUEST: Final = "$/cancel_request"

_SUCCESSOR_JSON: Final = b'"proxy/successor"'
_encode = msgspec.json.encode


class SuccessorMessage(msgspec.Struct, frozen=True):
    """The message a ``proxy/successor`` envelope carries: its ``method`` and
    raw ``params`` (``None``: no params)."""

    method: str
    params: msgspec.Raw | None = None


class _Envelope(msgspec.Struct):
    method: str
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_unwrap_decoder = msgspec.json.Decoder(_Envelope)


def unwrap_successor(params: msgspec.Raw | Any) -> SuccessorMessage:
    """The wrapped message of ``proxy/successor`` params (raw JSON);
    :class:`RequestError` -32602 if they are not an object with a string
    ``method`` and object or array ``params``."""
    if not isinstance(params, msgspec.Raw):
        raise RequestError(INVALID_PARAMS, "proxy/successor needs params")
    try:
        env = _unwrap_decoder.decode(params)
    except msgspec.MsgspecError as exc:
        raise RequestError(
            INVALID_PARAMS, f"Invalid proxy/successor params: {exc}"
        ) from None
    inner = None if env.params is msgspec.UNSET else env.params
    if inner is not None:
        first = bytes(memoryview(inner)[:1])
        if first == b"n":  # null: no params
            inner = None
        elif first not in (b"{", b"["):
            raise RequestError(
                INVALID_PARAMS,
                "Invalid proxy/successor params: the wrapped params must be an object or an array",
            )
    return SuccessorMessage(env.method, inner)


def _params_member(params: bytes | msgspec.Raw | None) -> bytes:
    return b"" if params is None else b',"params":%b' % bytes(params)


def wrap_request(
    ident: bytes, method: str, params: bytes | msgspec.Raw | None
) -> bytes:
    """A ``proxy/successor`` request line carrying ``method``/``params``;
    ``ident`` is the JSON text of its id (``encode_id``)."""
    return b'{"jsonrpc":"2.0","id":%b,"method":%b,"params":{"method":%b%b}}\n' % (
        ident,
        _SUCCESSOR_JSON,
        _encode(method),
        _params_member(params),
    )


def wrap_notification(method: str, params: bytes | msgspec.Raw | None) -> bytes:
    """A ``proxy/successor`` notification line carrying ``method``/``params``."""
    return b'{"jsonrpc":"2.0","method":%b,"params":{"method":%b%b}}\n' % (
        _SUCCESSOR_JSON,
        _encode(method),
        _params_member(params),
    )


def plain_request(
    ident: bytes, method: str, params: bytes | msgspec.Raw | None
) -> bytes:
    """A request line (the form ``encode_request`` writes; params omitted when none)."""
    return b'{"jsonrpc":"2.0","id":%b,"method":%b%b}\n' % (
        ident,
        _encode(method),
        _params_member(params),
    )


def plain_notification(method: str, params: bytes | msgspec.Raw | None) -> bytes:
    """A notification line (the form ``encode_notification`` writes)."""
    return b'{"jsonrpc":"2.0","method":%b%b}\n' % (
        _encode(method),
        _params_member(params),
    )


def response_line(
    ident: bytes,
    result: bytes | msgspec.Raw | None = None,
    error: bytes | msgspec.Raw | None = None,
) -> bytes:
    """A response line carrying a raw ``result`` or a raw ``error`` unchanged."""
    if error is not None:
        return b'{"jsonrpc":"2.0","id":%b,"error":%b}\n' % (ident, bytes(error))
    return b'{"jsonrpc":"2.0","id":%b,"result":%b}\n' % (
        ident,
        b"null" if result is None else bytes(result),
    )


class HopIds:
    """The ids of the requests one side has sent on one connection and not
    yet seen answered: a forwarded request keeps its own id when that id is
    free here (so its line and its answer's line can pass unchanged), else
    it gets a fresh one.  Ids are freed by :meth:`release` (the answer came)."""

    __slots__ = ("_next", "_used")

    def __init__(self) -> None:
        self._used: set[Id] = set()
        self._next = 1 << 30  # fresh ids, far from the small ones peers pick

    def take(self, preferred: Id | msgspec.UnsetType = msgspec.UNSET) -> Id:
        """An id for a new request: ``preferred`` if free (and not null), else fresh."""
        used = self._used
        if (
            preferred is not None
            and preferred is not msgspec.UNSET
            and preferred not in used
        ):
            used.add(preferred)
            return preferred
        while self._next in used:
            self._next += 1
        fresh = self._next
        self._next += 1
        used.add(fresh)
        return fresh

    def release(self, ident: Id) -> None:
        """``ident`` was answered: free for reuse."""
        self._used.discard(ident)

    def __contains__(self, ident: object) -> bool:
        return ident in self._used

    def __len__(self) -> int:
        return len(self._used)
