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
    direction: Direction, index: int, time: float, line: bytes
) -> list[Message | Malformed]:
    """The messages of one line (without its ``\\n``); a batch gives one per
    member, an empty batch one :class:`Malformed`."""
    try:
        value = _decode(line)
    except msgspec.DecodeError as exc:
        return [Malformed(direction, index, time, f"not JSON: {exc}")]
    except RecursionError:
        return [Malformed(direction, index, time, "not JSON: nested too deep")]
    if isinstance(value, list):
        members: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        if not members:
            return [Malformed(direction, index, time, "empty batch")]
        return [_one(direction, index, time, m, batch=True) for m in members]
    return [_one(direction, index, time, value, batch=False)]


def _one(
    direction: Direction, index: int, time: float, value: Any, *, batch: bool
) -> Message | Malformed:
    if not isinstance(value, dict):
        name = type(value).__name__  # pyright: ignore[reportUnknownArgumentType]
        return Malformed(direction, index, time, f"a JSON {name}, not an object")
    obj: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    raw_id = obj.get("id")
    has_id = "id" in obj
    msg_id: int | str | None = None
    if has_id:
        if raw_id is not None and (
            isinstance(raw_id, bool) or not isinstance(raw_id, (int, str))
        ):
            return Malformed(direction, index, time, "id is not a string or number")
        msg_id = raw_id
    if obj.get("jsonrpc") != "2.0":
        return Malformed(direction, index, time, 'no "jsonrpc": "2.0"', msg_id)
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            return Malformed(direction, index, time, "method is not a string", msg_id)
        if obj.get("params") is not None and not isinstance(obj["params"], dict):
            return Malformed(direction, index, time, "params is not an object", msg_id)
        kind: Kind = "request" if has_id else "notification"
        params = as_obj(obj.get("params"))
        return Message(
            direction, index, time, kind, msg_id, method, params, batch=batch
        )
    if not has_id:
        return Malformed(direction, index, time, "neither method nor id")
    has_result, has_error = "result" in obj, "error" in obj
    if has_result == has_error:
        why = "both result and error" if has_result else "neither result nor error"
        return Malformed(direction, index, time, why, msg_id)
    error = as_obj(obj.get("error"))
    if has_error and not isinstance(error.get("code"), int):
        return Malformed(direction, index, time, "error is not an error object", msg_id)
    return Message(
        direction,
        index,
        time,
        "response",
        msg_id,
        None,
        {},
        result=obj.get("result"),
        error=error if has_error else None,  # pyright: ignore[reportUnknownArgumentType]
        batch=batch,
    )
