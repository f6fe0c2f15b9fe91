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

import functools
from collections.abc import Container
from itertools import accumulate
from typing import Any, Final, Literal, cast

import msgspec

from ._errors import INVALID_REQUEST, PARSE_ERROR, RequestError
from ._framing import Oversized, sniff_oversized
from ._limits import DEFAULT_MAX_NESTING_DEPTH

__all__ = [
    "NOTIFICATION",
    "REQUEST",
    "RESPONSE",
    "BatchTooLong",
    "Envelope",
    "ErrorObject",
    "InvalidMessage",
    "OversizedVerdict",
    "Routing",
    "TooDeep",
    "clip",
    "clip_data",
    "decode_envelope",
    "decode_routing",
    "encode_error",
    "encode_id",
    "encode_notification",
    "encode_request",
    "encode_result",
    "judge_oversized",
    "nested_deeper",
    "split_batch",
]

Id = int | str | None

REQUEST: Final = 1
NOTIFICATION: Final = 2
RESPONSE: Final = 3

_UNSET: Any = msgspec.UNSET


class Envelope(msgspec.Struct, omit_defaults=True, gc=False):
    """One incoming JSON-RPC message, payloads undecoded.

    ``gc=False``: it holds strings, numbers and raw bytes only (no cycle can
    pass through it), so the collector does not track it (one per line).
    """

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
    method: Any = msgspec.UNSET


class _Line(Envelope):
    # required and "2.0": a narrowing no reader of an Envelope can miss
    jsonrpc: Literal["2.0"]  # pyright: ignore[reportIncompatibleVariableOverride, reportGeneralTypeIssues]


_envelope_decoder = msgspec.json.Decoder(Envelope)
#: The engine's decoder of one line: an :class:`Envelope` whose ``jsonrpc``
#: is ``"2.0"`` (checked in the decoding pass); what it refuses,
#: :func:`decode_envelope` tells why; :func:`check_envelope`'s other rules
#: are the caller's.
envelope_decoder: Final = msgspec.json.Decoder(_Line)
_loose_decoder = msgspec.json.Decoder(_Loose)
_error_decoder = msgspec.json.Decoder(ErrorObject)


class InvalidMessage(Exception):
    """A line that is not a valid JSON-RPC message, and what can be told of it.

    ``code`` is -32700 (not JSON) or -32600; ``ident`` the ``id`` when one
    could be read (else ``None``); ``response`` is true when the message has
    no ``method`` but an ``id``: it was meant as a response, so it is never
    answered with an error carrying that id (the peer could take it for the
    answer to its own request), and a request of ours waiting on that id
    fails instead.
    """

    def __init__(self, code: int, message: str, ident: Id, response: bool) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.ident = ident
        self.response = response


def decode_envelope(
    data: bytes, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
) -> Envelope:
    """Decode one message; raise :class:`InvalidMessage` if it is not one.

    Never raises anything else: malformed JSON is -32700; a message nested
    deeper than ``max_depth`` (:func:`nested_deeper`, checked before any
    decoding: ``Limits.max_nesting_depth``), or any other failure of the
    decoder, is -32600 with the ``id`` read from the text when it can be.
    """
    if nested_deeper(data, max_depth):
        raise too_deep(data, max_depth)
    try:
        env = _envelope_decoder.decode(data)
    except msgspec.ValidationError as exc:  # (a DecodeError: test it first)
        ident, response = _salvage(data)
        raise InvalidMessage(
            INVALID_REQUEST, f"Invalid request: {exc}", ident, response
        ) from None
    except msgspec.DecodeError:
        raise InvalidMessage(PARSE_ERROR, "Parse error", None, False) from None
    except Exception:  # RecursionError (too deep for this stack) or a decoder bug
        ident, response = _sniff(data)
        raise InvalidMessage(
            INVALID_REQUEST,
            "Invalid request: the message could not be decoded (nested too deep?)",
            ident,
            response,
        ) from None
    return check_envelope(env)


# -- nesting: one bound, checked before anything decodes a line -------------------

#: what is kept of a line to see its structure: brackets, and the quotes
#: that tell which brackets are in strings
_NOT_STRUCTURE: Final = bytes(c for c in range(256) if c not in b'[]{}"')
_STEP: Final = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def nested_deeper(data: bytes, max_depth: int) -> bool:
    """Whether ``data`` nests arrays and objects deeper than ``max_depth``
    (``{}`` is depth 1), outside its strings.

    What a decoder meets before the first byte it refuses: a line that is no
    JSON past some point is judged on what comes before.  Costs a length
    (JSON nested ``d`` deep takes ``2 * d`` bytes: a shorter line is let
    through, and one that opens more than it closes fails its decoding at
    its end, no deeper than its length), or two ``bytes.count`` on a line with no more brackets than the bound (nearly
    every message); else a few passes in C (escapes out, brackets and quotes
    kept, strings out), then one over the brackets left, by chunks of
    ``max_depth`` (a chunk that cannot pass the bound is only counted).
    """
    if len(data) <= 2 * max_depth or data.count(b"[") + data.count(b"{") <= max_depth:
        return False
    if b"\\" in data:  # escapes: a pair is read from the left, \\ before \"
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _NOT_STRUCTURE)
    brackets = b"".join(kept.split(b'"')[::2])  # what is between quotes is text
    if brackets.count(b"[") + brackets.count(b"{") <= max_depth:
        return False
    depth = 0
    for start in range(0, len(brackets), max_depth):
        chunk = brackets[start : start + max_depth]
        opens = chunk.count(b"[") + chunk.count(b"{")
        if depth + opens > max_depth and (
            depth + max(accumulate(map(_STEP.__getitem__, chunk))) > max_depth
        ):
            return True
        depth += 2 * opens - len(chunk)
    return False


class TooDeep(InvalidMessage):
    """A line nested deeper than the bound (:func:`nested_deeper`): -32600."""


def too_deep(data: bytes, max_depth: int) -> TooDeep:
    """The :class:`TooDeep` (-32600) of a line :func:`nested_deeper` refused."""
    ident, response = _sniff(data)
    return TooDeep(
        INVALID_REQUEST,
        f"Invalid request: nested deeper than {max_depth} levels",
        ident,
        response,
    )


def check_envelope(env: Envelope) -> Envelope:
    """:func:`decode_envelope`'s rules for an envelope ``envelope_decoder`` decoded.

    The engine decodes each line with :data:`envelope_decoder` (``jsonrpc``
    checked) and applies these rules to an envelope without ``method``.
    """
    if env.jsonrpc != "2.0":
        raise InvalidMessage(
            INVALID_REQUEST,
            'Invalid request: "jsonrpc" must be "2.0"',
            _id_or_none(env),
            _response_shaped(env),
        )
    if env.method is msgspec.UNSET:
        if env.id is msgspec.UNSET or (env.result is msgspec.UNSET) == (
            env.error is msgspec.UNSET
        ):
            raise InvalidMessage(
                INVALID_REQUEST,
                'Invalid request: expected "method", or "id" with exactly one of "result" and "error"',
                _id_or_none(env),
                _response_shaped(env),
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


def _response_shaped(env: Envelope) -> bool:
    return env.method is msgspec.UNSET and env.id is not msgspec.UNSET


def _valid_id(ident: Any) -> Id:
    if isinstance(ident, (int, str)) and not isinstance(ident, bool):
        return ident
    return None


def _salvage(data: bytes) -> tuple[Id, bool]:
    """``(id, response-shaped)`` of a JSON object whose envelope did not validate."""
    try:
        loose = _loose_decoder.decode(data)
    except msgspec.MsgspecError:
        return None, False
    except Exception:
        return _sniff(data)
    ident = _valid_id(loose.id)
    return ident, loose.method is msgspec.UNSET and loose.id is not msgspec.UNSET


def _sniff(data: bytes) -> tuple[Id, bool]:
    """``(id, response-shaped)`` read from the text of a message too deep to decode."""
    keep = 4096
    ident, method, _ = sniff_oversized(Oversized(len(data), data[:keep], data[-keep:]))
    return _valid_id(ident), method is None and ident is not None


# -- the routing view: what a router reads of a message -------------------------


class _SessionRef(msgspec.Struct):
    session_id: Any = msgspec.field(default=None, name="sessionId")


class Routing(msgspec.Struct, omit_defaults=True):
    """What a router reads of one message (acp_http): the envelope's fields and
    the ``sessionId`` its ``params`` or ``result`` names, the rest undecoded.

    Read by :func:`decode_routing` under :func:`decode_envelope`'s rules.
    """

    jsonrpc: str = ""
    id: Id | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: _SessionRef | msgspec.UnsetType = msgspec.UNSET
    result: _SessionRef | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET

    @property
    def is_request(self) -> bool:
        """A call expecting an answer: a ``method`` and an ``id``."""
        return self.method is not msgspec.UNSET and self.id is not msgspec.UNSET

    @property
    def is_response(self) -> bool:
        """An answer: an ``id`` and no ``method``."""
        return self.method is msgspec.UNSET and self.id is not msgspec.UNSET

    @property
    def is_error(self) -> bool:
        """An answer carrying ``error``."""
        return self.error is not msgspec.UNSET

    @property
    def params_session(self) -> str | None:
        """``params.sessionId`` if it is a string."""
        ref = self.params
        if ref is msgspec.UNSET or not isinstance(ref.session_id, str):
            return None
        return ref.session_id

    @property
    def result_session(self) -> str | None:
        """``result.sessionId`` if it is a string."""
        ref = self.result
        if ref is msgspec.UNSET or not isinstance(ref.session_id, str):
            return None
        return ref.session_id


_routing_decoder = msgspec.json.Decoder(Routing)


def decode_routing(data: bytes, max_depth: int = DEFAULT_MAX_NESTING_DEPTH) -> Routing:
    """The routing view of one message; :class:`InvalidMessage` (with
    :func:`decode_envelope`'s reasons, ``max_depth`` its nesting bound) if it
    is not a JSON-RPC message.

    One pass when ``params`` / ``result`` are objects; else the envelope is
    read by :func:`decode_envelope` and names no session.
    """
    if nested_deeper(data, max_depth):
        raise too_deep(data, max_depth)
    try:
        routing = _routing_decoder.decode(data)
    except Exception:  # not JSON, not an object, payloads not objects, too deep
        env = decode_envelope(data, max_depth)
        return Routing(
            jsonrpc=env.jsonrpc, id=env.id, method=env.method, error=env.error
        )
    if routing.jsonrpc != "2.0" or routing.method is msgspec.UNSET:
        check_envelope(
            Envelope(
                jsonrpc=routing.jsonrpc,
                id=routing.id,
                method=routing.method,
                result=msgspec.Raw(b"{}")
                if routing.result is not msgspec.UNSET
                else _UNSET,
                error=routing.error,
            )
        )
    return routing


# -- an over-long line: one rule for every reader ---------------------------------


class OversizedVerdict(msgspec.Struct, frozen=True):
    """What every reader does with a line past its bound (``LineBuffer`` gave
    an :class:`Oversized` record): the same in the engine, acp_http's server
    and wires, and acp_inspect.

    ``answer``: the line answering the sender (a request: -32600 with its
    ``id`` and ``data.maxMessageSize``), else ``None``; ``fails``: the id of
    a call of the reader's side this answer was (a response: that call fails
    with ``message``), else ``None``; ``log``: the one bounded log line.
    """

    ident: Id
    is_response: bool
    message: str
    answer: bytes | None
    fails: Id
    log: str


def judge_oversized(
    line: Oversized,
    limit: int,
    max_error_text: int = 256,
    *,
    calls: Container[Id] = (),
) -> OversizedVerdict:
    """The verdict on ``line`` (over ``limit`` bytes, discarded while it streamed).

    ``calls``: the ids of the reader's own calls waiting for an answer (a
    line whose shape could not be told that carries one of them is taken as
    that answer).
    """
    ident, method, is_response = sniff_oversized(line)
    message = f"Message of {line.size} bytes exceeds the limit of {limit} bytes"
    log = clip(
        f"discarded a {line.size}-byte message (limit {limit}, id={ident!r})",
        max_error_text,
    )
    if ident is None:
        return OversizedVerdict(None, is_response, message, None, None, log)
    # A response (or, shape unknown, what matches a call of ours) is never
    # answered with its own id: it fails that call instead.
    if is_response or (method is None and ident in calls):
        return OversizedVerdict(ident, True, message, None, ident, log)
    answer = encode_error(
        encode_id(ident), INVALID_REQUEST, message, {"maxMessageSize": limit}
    )
    return OversizedVerdict(ident, False, message, answer, None, log)


class BatchTooLong(Exception):
    """A batch with more members than allowed (none of them is read)."""


@functools.lru_cache(maxsize=8)
def _batch_decoder(limit: int) -> msgspec.json.Decoder[Any]:
    # An array-like Struct of limit + 1 optional fields: decoding fills at
    # most that many objects and only skips over the rest (msgspec ignores
    # extra trailing elements), so a 2 MB [1,1,...] costs no million objects.
    fields = [(f"m{i}", msgspec.Raw, msgspec.UNSET) for i in range(limit + 1)]
    return msgspec.json.Decoder(msgspec.defstruct("Batch", fields, array_like=True))


_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])


def split_batch(data: bytes, limit: int) -> list[msgspec.Raw]:
    """The members of a batch line, raw; :class:`BatchTooLong` past ``limit``.

    Raises ``msgspec.DecodeError`` / ``ValidationError`` as decoding does
    (not JSON, not an array), and ``RecursionError`` for a member nested too
    deep.
    """
    if data.count(b",") < limit:  # at most `limit` members: the plain way
        return _list_decoder.decode(data)
    if limit > 4096:  # too many fields for a Struct: decode all, then count
        members = _list_decoder.decode(data)
        if len(members) > limit:
            raise BatchTooLong(len(members))
        return members
    batch = _batch_decoder(limit).decode(data)
    members = [m for m in msgspec.structs.astuple(batch) if m is not msgspec.UNSET]
    if len(members) > limit:
        raise BatchTooLong(limit + 1)
    return members


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (ending ``...``), on one line."""
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    if "\n" in text or "\r" in text:
        text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text


def clip_data(data: Any, limit: int, depth: int = 0) -> Any:
    """``data`` of an error built from peer input, with every string clipped.

    Containers are walked three levels deep; deeper ones (and more than
    ``limit`` members of one container) are left out.
    """
    if isinstance(data, str):
        return clip(data, limit)
    if isinstance(data, dict):
        if depth >= 3:
            return {}
        mapping: dict[Any, Any] = cast(Any, data)
        items = list(mapping.items())[:limit]
        return {clip(str(k), limit): clip_data(v, limit, depth + 1) for k, v in items}
    if isinstance(data, (list, tuple)):
        if depth >= 3:
            return []
        values: list[Any] | tuple[Any, ...] = cast(Any, data)
        return [clip_data(v, limit, depth + 1) for v in values[:limit]]
    return data


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
