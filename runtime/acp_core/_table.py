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
``cancelled``
    what a request of the method cancelled with its session answers
    (:class:`CancelledAnswer`) instead of -32800: the prompt's
    ``stopReason: "cancelled"``, the permission request's ``cancelled``
    outcome.
``cancels``
    receiving it cancels its session's ``cancel="session"`` requests.

What a side *sends* has a table too (:class:`SentRule`, ``AGENT_SENT`` /
``CLIENT_SENT``): sending ``session/cancel`` cancels that session's
``cancel="session"`` requests this side serves (the client's permission
requests) and those arriving until the session's turn (a ``turn`` call:
``session/prompt``) is answered.

The rules objects (``AgentRules``, ``ClientRules``) take their tables as
arguments: a table built elsewhere (a test, a later spec) changes what the
engine does, with no method named in the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import msgspec

__all__ = [
    "AGENT_SENT",
    "AGENT_TABLE",
    "CLIENT_SENT",
    "CLIENT_TABLE",
    "DEFAULT_RULE",
    "CancelledAnswer",
    "MethodRule",
    "SentRule",
    "rule_of",
    "sent_table_of",
    "table_of",
]

Gate = Literal["opens", "initialized", "advertised"]


class CancelledAnswer(msgspec.Struct, frozen=True):
    """What a request cancelled with its session answers (its result's JSON).

    ``result``: the answer when its handler returned nothing; ``field``: the
    attribute of a result the handler returned after the cancel that is set
    to ``"cancelled"`` (its other fields kept), or ``None``: only that
    result's ``_meta`` is kept; ``support``: the ``_support.Support``
    property the version's schema must have for this answer (else the
    request is answered as any cancelled one, with one WARNING: ``why``).
    """

    result: bytes
    field: str | None
    support: str
    why: str


class MethodRule(msgspec.Struct, frozen=True):
    """The rules one incoming method is under (see the module for each field)."""

    gate: Gate = "initialized"
    check: bool = False
    watched: bool = False
    cancel: Literal["session"] | None = None
    cancelled: CancelledAnswer | None = None
    cancels: bool = False


class SentRule(msgspec.Struct, frozen=True):
    """What sending one method does to the session-cancel rule (see the module)."""

    #: sending it cancels its session's ``cancel="session"`` requests
    cancels: bool = False
    #: a turn: sending it ends its session's cancel; so does its answer
    turn: bool = False


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
    "session_prompt": MethodRule(
        cancel="session",
        cancelled=CancelledAnswer(
            b'{"stopReason":"cancelled"}',
            field="stop_reason",
            support="prompt_stop_reason",
            why="its session/prompt result has no stopReason",
        ),
    ),
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
    "session_request_permission": MethodRule(
        cancel="session",
        cancelled=CancelledAnswer(
            b'{"outcome":{"outcome":"cancelled"}}',
            field=None,
            support="permission_cancelled",
            why="its permission outcome has no cancelled variant",
        ),
    ),
}

#: What sending a method does, on the agent (nothing of the session-cancel rule).
AGENT_SENT: Final[Mapping[str, SentRule]] = {}
#: What sending a method does, on the client.
CLIENT_SENT: Final[Mapping[str, SentRule]] = {
    "session_cancel": SentRule(cancels=True),
    "session_prompt": SentRule(turn=True),
}
#: What sending a method the sent table does not list does.
NO_SENT_RULE: Final = SentRule()


def table_of(side: str) -> Mapping[str, MethodRule]:
    """The table of what ``side`` (``"agent"``, ``"client"``) receives."""
    return AGENT_TABLE if side == "agent" else CLIENT_TABLE


def sent_table_of(side: str) -> Mapping[str, SentRule]:
    """The table of what ``side`` sends."""
    return AGENT_SENT if side == "agent" else CLIENT_SENT


def rule_of(side: str, handler: str) -> MethodRule:
    """The rules the method of ``handler`` is under when ``side`` receives it."""
    return table_of(side).get(handler, DEFAULT_RULE)
