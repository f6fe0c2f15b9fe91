"""After ``session/cancel`` the agent stops its tool calls."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message, as_obj
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "notification", "request")

#: Statuses of a tool call that is about to run or running.
RUNNING = frozenset({"pending", "in_progress"})


@dataclass(frozen=True, slots=True)
class ToolAfterCancel:
    """While a cancelled turn is not yet answered, the agent asks permission
    for a tool call, reports a new tool call that is not over (``tool_call``
    without a status, ``pending`` or ``in_progress``), or moves one to
    ``pending`` or ``in_progress``: it keeps running tools after the
    client's ``session/cancel``."""

    key: str = "tool-after-cancel"
    spec: SpecRef = REFS["cancel-stops-tools"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind == "response":
            return None
        sid = msg.session_id
        turn = state.turns.get(sid) if sid is not None else None
        if turn is None or not turn.cancelled or turn.ended:
            return None
        if msg.method == "session/request_permission":
            return Breach("agent asked permission for a tool call after session/cancel")
        if msg.method != "session/update":
            return None
        update = as_obj(msg.params.get("update"))
        kind, status = update.get("sessionUpdate"), update.get("status")
        started = kind == "tool_call" and (status is None or status in RUNNING)
        if started or (kind == "tool_call_update" and status in RUNNING):
            ident = update.get("toolCallId")
            return Breach(
                f"agent reported tool call {ident!r} {status or 'pending'} after session/cancel"
            )
        return None
