"""The rules of each incoming method, one table per side: which rule applies, and when.

Each method a side receives has one :class:`MethodRule` record, found by its
handler name (``rule_of(side, handler)``); a method the table does not list
gets its side's default (gated by ``initialize``, nothing else).  The table
is data: the rules objects (:mod:`acp_core._rules`) and the engine read it,
and ``tests/core/test_method_table.py`` reads it without a connection.

What each field means, and when the engine applies it:

``gate``
    when a message of the method is served.  ``"opens"``: the agent's
    ``initialize`` itself (accepted while not initialized; a second one is
    refused: :class:`~acp_core._rules.InitializeGate`).  ``"initialized"``:
    refused (a notification dropped) until ``initialize`` was answered; on
    the agent, a request arriving while ``initialize`` runs waits for its
    answer.  ``"advertised"``: as ``"initialized"``, and refused -32601
    unless this side advertised the capability it needs
    (``_capabilities.ReceivedCallChecks``).  Runs at receipt, before the
    params are decoded; ``"initialized"`` again when a held request starts.
``check``
    the params are checked beyond their type at receipt (absolute paths,
    elicitation modes: ``_capabilities``); a failure is -32602 (a
    notification is dropped).  Runs after the params are decoded.
``watched``
    the side's rules see the notification at receipt, before it is queued
    (``session/cancel`` acts at once, whatever waits in the queue).
``cancel``
    how a running request of the method is cancelled besides
    ``$/cancel_request`` (which cancels any request): ``"session"``: with
    its session (``SessionCancel``: the agent's prompts by ``session/cancel``
    and ``session/close``, answered ``stopReason: "cancelled"``; the
    client's permission requests by its own ``session/cancel``, answered
    ``cancelled``).
``cancels``
    receiving it cancels its session's ``cancel="session"`` requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import msgspec

__all__ = [
    "AGENT_TABLE",
    "CLIENT_TABLE",
    "DEFAULT_RULE",
    "MethodRule",
    "rule_of",
    "table_of",
]

Gate = Literal["opens", "initialized", "advertised"]


class MethodRule(msgspec.Struct, frozen=True):
    """The rules one incoming method is under (see the module for each field)."""

    gate: Gate = "initialized"
    check: bool = False
    watched: bool = False
    cancel: Literal["session"] | None = None
    cancels: bool = False


#: What a method the table does not list is under.
DEFAULT_RULE: Final = MethodRule()

_CHECKED: Final = MethodRule(check=True)

#: What the agent receives (``AGENT_METHODS``), by handler name.
AGENT_TABLE: Final[Mapping[str, MethodRule]] = {
    "initialize": MethodRule(gate="opens"),
    "session_new": _CHECKED,
    "session_load": _CHECKED,
    "session_resume": _CHECKED,
    "session_fork": _CHECKED,
    "session_list": _CHECKED,
    "session_prompt": MethodRule(cancel="session"),
    "session_cancel": MethodRule(watched=True, cancels=True),
    "session_close": MethodRule(cancels=True),
}

_ADVERTISED: Final = MethodRule(gate="advertised")
_ADVERTISED_CHECKED: Final = MethodRule(gate="advertised", check=True)

#: What the client receives (``CLIENT_METHODS``), by handler name.
CLIENT_TABLE: Final[Mapping[str, MethodRule]] = {
    "fs_read_text_file": _ADVERTISED_CHECKED,
    "fs_write_text_file": _ADVERTISED_CHECKED,
    "terminal_create": _ADVERTISED_CHECKED,
    "terminal_output": _ADVERTISED,
    "terminal_release": _ADVERTISED,
    "terminal_wait_for_exit": _ADVERTISED,
    "terminal_kill": _ADVERTISED,
    "elicitation_complete": _ADVERTISED,
    "elicitation_create": _CHECKED,  # its mode, on the params (-32602)
    "session_request_permission": MethodRule(cancel="session"),
}


def table_of(side: str) -> Mapping[str, MethodRule]:
    """The table of what ``side`` (``"agent"``, ``"client"``) receives."""
    return AGENT_TABLE if side == "agent" else CLIENT_TABLE


def rule_of(side: str, handler: str) -> MethodRule:
    """The rules the method of ``handler`` is under when ``side`` receives it."""
    return table_of(side).get(handler, DEFAULT_RULE)
