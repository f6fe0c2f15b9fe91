"""The JSON-RPC 2.0 envelope: one small Struct, payloads left as ``msgspec.Raw``.

Decoding a line only walks the envelope; ``params`` / ``result`` stay raw
bytes until the method is known, then decode once, straight into the
method's generated type.  Encoding splices already-encoded payloads into a
fixed frame, so a message is encoded exactly once::

    env = decode_envelope(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{...}}')
    env.kind               # REQUEST
    bytes(env.params)      # b'{...}', decoded later with the method's params type
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ._errors import INVALID_REQUEST, RequestError

__all__ = [
    "NOTIFICATION",
    "REQUEST",
    "RESPONSE",
    "Envelope",
    "ErrorObject",
    "decode_envelope",
    "encode_error",
    "encode_id",
    "encode_notification",
    "encode_request",
    "encode_result",
]

Id = int | str | None

REQUEST: Final = 1
NOTIFICATION: Final = 2
RESPONSE: Final = 3

_UNSET: Any = msgspec.UNSET


class Envelope(msgspec.Struct, omit_defaults=True):
    """One incoming JSON-RPC message, payloads undecoded."""

    jsonrpc: str = ""
    id: Id | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET

    @property
    def kind(self) -> int:
        """``REQUEST``, ``NOTIFICATION`` or ``RESPONSE``."""
        if self.method is not msgspec.UNSET:
            return NOTIFICATION if self.id is msgspec.UNSET else REQUEST
        return RESPONSE


class ErrorObject(msgspec.Struct):
    """The ``error`` member of a response."""

    code: int
    message: str
    data: Any = msgspec.UNSET

    def to_exception(self) -> RequestError:
        return RequestError(self.code, self.message, self.data)


class _Loose(msgspec.Struct):
    id: Any = msgspec.UNSET


_envelope_decoder = msgspec.json.Decoder(Envelope)
_loose_decoder = msgspec.json.Decoder(_Loose)
_error_decoder = msgspec.json.Decoder(ErrorObject)


def decode_envelope(data: bytes | msgspec.Raw) -> Envelope:
    """Decode one message; raise :class:`RequestError` (-32600) if it is not one.

    The raised error's ``data`` is the request ``id`` when one could be read
    (so the error answer can carry it), else ``None``.  Malformed JSON raises
    :class:`msgspec.DecodeError`, left to the caller (-32700).
    """
    try:
        env = _envelope_decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise RequestError(
            INVALID_REQUEST, f"Invalid request: {exc}", _salvage_id(data)
        ) from None
    if env.jsonrpc != "2.0":
        raise RequestError(
            INVALID_REQUEST,
            'Invalid request: "jsonrpc" must be "2.0"',
            _id_or_none(env),
        )
    if env.method is msgspec.UNSET:
        if env.id is msgspec.UNSET or (env.result is msgspec.UNSET) == (
            env.error is msgspec.UNSET
        ):
            raise RequestError(
                INVALID_REQUEST,
                'Invalid request: expected "method", or "id" with exactly one of "result" and "error"',
                _id_or_none(env),
            )
    return env


def decode_error(raw: msgspec.Raw) -> RequestError:
    """The ``error`` member of a response as a :class:`RequestError`."""
    try:
        return _error_decoder.decode(raw).to_exception()
    except msgspec.MsgspecError as exc:
        return RequestError(INVALID_REQUEST, f"Invalid error object in response: {exc}")


def _id_or_none(env: Envelope) -> Id:
    return None if env.id is msgspec.UNSET else env.id


def _salvage_id(data: bytes | msgspec.Raw) -> Id:
    try:
        ident = _loose_decoder.decode(data).id
    except msgspec.MsgspecError:
        return None
    if isinstance(ident, (int, str)) and not isinstance(ident, bool):
        return ident
    return None


# -- encoding -------------------------------------------------------------------

_json_encode = msgspec.json.encode


def encode_id(ident: Id) -> bytes:
    """The JSON text of a request id."""
    return b"%d" % ident if type(ident) is int else _json_encode(ident)


def encode_request(ident: int, method: bytes, params: bytes) -> bytes:
    """A request line; ``method`` is the JSON-encoded method name."""
    return b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":%b}\n' % (
        ident,
        method,
        params,
    )


def encode_notification(method: bytes, params: bytes) -> bytes:
    """A notification line; ``method`` is the JSON-encoded method name."""
    return b'{"jsonrpc":"2.0","method":%b,"params":%b}\n' % (method, params)


def encode_result(ident: bytes, result: bytes) -> bytes:
    """A success response line; ``ident`` from :func:`encode_id`."""
    return b'{"jsonrpc":"2.0","id":%b,"result":%b}\n' % (ident, result)


def encode_error(ident: bytes, code: int, message: str, data: Any = _UNSET) -> bytes:
    """An error response line; ``ident`` from :func:`encode_id`."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not msgspec.UNSET:
        err["data"] = data
    return b'{"jsonrpc":"2.0","id":%b,"error":%b}\n' % (ident, _json_encode(err))
