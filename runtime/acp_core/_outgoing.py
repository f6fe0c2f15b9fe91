"""The opt-in check of outgoing messages against the schema.

``msgspec.Struct`` does not check field types when built, so
``v1.NewSessionResponse(session_id=1)`` encodes to ``{"sessionId":1}`` and
only the peer complains.  With the check on, each typed message a connection
sends (request params, notification params, a handler's result) is decoded
back as the schema's type before it leaves; a mismatch raises
:class:`OutgoingMessageError` at the sender, naming the method and the field
path (``$.sessionId``).  A handler's result that fails is logged with that
error and answered -32603, as any handler that raises.

It costs one decode per message, so it is off by default and on:

- under ``python -X dev`` (``sys.flags.dev_mode``);
- when the environment has ``ACP_CHECK_OUTGOING=1`` (``0`` turns it off even
  under ``-X dev``): read by :mod:`acp_host` when imported (every adapter
  imports it), as acp_core reads no environment;
- for the connections made afterwards: :func:`set_check_outgoing_default`;
- per connection: ``conn.engine.check_outgoing = True``.

The project's tests run with it on (``tests/conftest.py``).
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

__all__ = [
    "OutgoingMessageError",
    "check_outgoing_default",
    "check_outgoing_message",
    "set_check_outgoing_default",
]

#: The environment variable that turns the check on (``1``) or off (``0``).
ENV = "ACP_CHECK_OUTGOING"


class OutgoingMessageError(ValueError):
    """A message about to be sent does not match the schema.

    ``method`` is the wire method, ``part`` ``"params"`` or ``"result"``,
    ``detail`` msgspec's message with the field path (``Expected `str`, got
    `int` - at `$.sessionId```).
    """

    def __init__(self, method: str, part: str, detail: str) -> None:
        super().__init__(f"outgoing {method} {part} do not match the schema: {detail}")
        self.method = method
        self.part = part
        self.detail = detail


_default: bool | None = None  # None: python -X dev decides


def set_check_outgoing_default(on: bool | None) -> None:
    """Whether connections made from now on check what they send (``None``:
    as ``python -X dev`` says)."""
    global _default
    _default = on


def check_outgoing_default() -> bool:
    """Whether a new connection checks what it sends: the value last given to
    :func:`set_check_outgoing_default` (or ``ACP_CHECK_OUTGOING``), else
    whether Python runs with ``-X dev``."""
    return bool(sys.flags.dev_mode) if _default is None else _default


def parse_switch(value: str | None) -> bool | None:
    """``ACP_CHECK_OUTGOING``'s value: ``1`` (or ``true``, ``yes``, ``on``) on,
    ``0`` (``false``, ``no``, ``off``) off, unset or empty ``None``."""
    if value is None or not value.strip():
        return None
    return value.strip().lower() not in ("0", "false", "no", "off")


def check_outgoing_message(
    schema: Any, expected: Any, data: bytes, method: str, part: str
) -> None:
    """Raise :class:`OutgoingMessageError` unless ``data`` (the encoded
    message) decodes as ``expected`` without the schema's lenient repairs.

    ``schema`` is an :class:`~acp_core.Schema` (its ``decoder`` / ``decode`` /
    ``encode``).  The strict pass decides in the common case; a message it
    refuses (by-shape unions are decoded by the lenient walk) passes only if
    the lenient decode gives back the same bytes, i.e. repaired nothing.
    """
    if expected is None:
        return
    try:
        schema.decoder(expected)(data)
        return
    except msgspec.ValidationError as exc:
        strict = str(exc)
    except msgspec.DecodeError as exc:  # not JSON: an extension's raw bytes
        raise OutgoingMessageError(method, part, str(exc)) from None
    try:
        repaired = schema.encode(schema.decode(data, expected))
    except msgspec.ValidationError as exc:
        raise OutgoingMessageError(method, part, str(exc)) from None
    if msgspec.json.decode(repaired) != msgspec.json.decode(data):
        raise OutgoingMessageError(method, part, strict)
