"""One line of the wire, read as a JSON-RPC message (no I/O, no typing of params).

:func:`parse_line` turns the bytes of one line into :class:`Message` records
(several for a batch) or a :class:`Malformed` record saying why it is not a
JSON-RPC 2.0 message.  Params and results stay builtins (dicts, lists): the
rules read them whatever the protocol version, and the typed check
(:mod:`acp_inspect._typed`) converts them with the negotiated version's
schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, cast

import msgspec
from acp_core import (
    PARSE_ERROR,
    BatchTooLong,
    InvalidMessage,
    decode_envelope,
    split_batch,
)

__all__ = [
    "AGENT",
    "CLIENT",
    "Direction",
    "Kind",
    "Malformed",
    "Message",
    "as_list",
    "as_obj",
    "id_key",
    "parse_line",
    "sender_of",
]

#: ``to_agent``: written by the client to the agent's stdin;
#: ``from_agent``: written by the agent to its stdout.
Direction: TypeAlias = Literal["to_agent", "from_agent"]
CLIENT: Final = "to_agent"
AGENT: Final = "from_agent"
Kind: TypeAlias = Literal["request", "notification", "response"]
JsonId: TypeAlias = "int | str | None"

_decode = msgspec.json.Decoder().decode
#: Members of one batch checked (more: the batch is one Malformed).  Far above
#: the runtime's ``Limits.max_batch_members``: a peer may accept more than we do,
#: and the line itself is bounded (``max_line``).
MAX_BATCH_MEMBERS: Final = 1 << 20


def as_obj(value: object) -> dict[str, Any]:
    """A JSON object, or ``{}`` for anything else."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """A JSON array, or ``[]`` for anything else."""
    if isinstance(value, list):
        return cast("list[Any]", value)  # type: ignore[redundant-cast]  # pyright needs it
    return []


def sender_of(direction: Direction) -> Literal["client", "agent"]:
    """Who wrote a line going that way."""
    return "client" if direction == CLIENT else "agent"


def id_key(value: object) -> str:
    """A request id as a dict key that keeps ``1`` and ``"1"`` apart."""
    return f"s:{value}" if isinstance(value, str) else f"n:{value!r}"


@dataclass(slots=True)
class Message:
    """A well-formed JSON-RPC 2.0 message (or a well-formed batch member).

    ``params`` is ``{}`` when absent; ``result`` / ``error`` are set for a
    response (exactly one of them).
    """

    direction: Direction
    index: int  # the line's number in the session, from 1
    time: float
    kind: Kind
    id: int | str | None
    method: str | None
    params: dict[str, Any]
    result: Any = None
    error: dict[str, Any] | None = None
    batch: bool = False
    #: the undecoded ``params`` (request, notification) or ``result`` (response)
    raw: msgspec.Raw | None = None
    #: ``raw`` as the method's generated type, once the schema check decoded it
    typed: Any = None
    #: an error line without an ``id`` member (not JSON-RPC): the check reads
    #: it as the answer to a line that has no id, so that no case waits past it
    id_absent: bool = False

    @property
    def session_id(self) -> str | None:
        """``params.sessionId`` when it is a string."""
        sid = self.params.get("sessionId")
        return sid if isinstance(sid, str) else None


@dataclass(slots=True)
class Malformed:
    """A line (or batch member) that is not a JSON-RPC 2.0 message."""

    direction: Direction
    index: int
    time: float
    reason: str
    id: int | str | None = None


def parse_line(
    direction: Direction,
    index: int,
    time: float,
    line: bytes,
    max_batch_members: int = MAX_BATCH_MEMBERS,
) -> list[Message | Malformed]:
    """The messages of one line (without its ``\\n``); a batch gives one per
    member, an empty batch or one over ``max_batch_members`` one :class:`Malformed`.

    The envelope is read by :func:`acp_core.decode_envelope` (the runtime's
    own rules for what a JSON-RPC message is); params and results are then
    decoded to builtins for the rules, their raw bytes kept for the typed
    check.
    """
    first = line[:1]
    if first == b"[" or (first.isspace() and line.lstrip()[:1] == b"["):
        try:
            members = split_batch(line, max_batch_members)
        except BatchTooLong:
            why = f"a batch of more than {max_batch_members} members (not read)"
            return [Malformed(direction, index, time, why)]
        except (msgspec.DecodeError, RecursionError) as exc:
            return [Malformed(direction, index, time, _why(exc))]
        if not members:
            return [Malformed(direction, index, time, "empty batch")]
        return [_one(direction, index, time, bytes(m), batch=True) for m in members]
    return [_one(direction, index, time, line, batch=False)]


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "not JSON: nested too deep"
    if isinstance(exc, msgspec.ValidationError):
        return str(exc)
    return f"not JSON: {exc}"


def _one(
    direction: Direction, index: int, time: float, data: bytes, *, batch: bool
) -> Message | Malformed:
    try:
        env = decode_envelope(data)
    except InvalidMessage as exc:
        reason = "not JSON" if exc.code == PARSE_ERROR else exc.message
        return Malformed(direction, index, time, reason, exc.ident)
    msg_id: int | str | None = None if env.id is msgspec.UNSET else env.id
    try:
        if env.method is not msgspec.UNSET:
            params: Any = {}
            raw = None
            if env.params is not msgspec.UNSET:
                raw = env.params
                params = _decode(raw)
                if params is None:
                    params = {}
                elif not isinstance(params, dict):
                    return Malformed(
                        direction, index, time, "params is not an object", msg_id
                    )
            kind: Kind = "request" if env.id is not msgspec.UNSET else "notification"
            return Message(
                direction,
                index,
                time,
                kind,
                msg_id,
                env.method,
                cast("dict[str, Any]", params),
                batch=batch,
                raw=raw,
            )
        if env.error is not msgspec.UNSET:
            error = as_obj(_decode(env.error))
            if not isinstance(error.get("code"), int):
                return Malformed(
                    direction, index, time, "error is not an error object", msg_id
                )
            return Message(
                direction, index, time, "response", msg_id, None, {}, error=error,
                batch=batch,
            )  # fmt: skip
        assert env.result is not msgspec.UNSET
        return Message(
            direction,
            index,
            time,
            "response",
            msg_id,
            None,
            {},
            result=_decode(env.result),
            batch=batch,
            raw=env.result,
        )
    except RecursionError:
        return Malformed(direction, index, time, "nested too deep", msg_id)
