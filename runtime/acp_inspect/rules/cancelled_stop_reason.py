"""A prompt turn cancelled by the client ends with ``stopReason: "cancelled"``."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message, id_key
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "response")


@dataclass(frozen=True, slots=True)
class CancelledStopReason:
    """The answer to a ``session/prompt`` whose session got ``session/cancel``
    (or ``session/close``) while it ran is an error or another stop reason
    (prompt-turn.mdx: the agent MUST answer ``cancelled``; it MUST catch the
    errors an aborted operation raises)."""

    key: str = "cancelled-stop-reason"
    spec: SpecRef = REFS["cancelled-stop-reason"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind != "response":
            return None
        pending = state.pending_for(msg)
        if pending is None or pending.method != "session/prompt":
            return None
        sid = pending.params.get("sessionId")
        turn = state.turns.get(sid) if isinstance(sid, str) else None
        if turn is None or not turn.cancelled or turn.request_key != id_key(msg.id):
            return None
        if msg.error is not None:
            code = msg.error.get("code")
            return Breach(
                f"agent answered a cancelled prompt with error {code}, not stopReason cancelled"
            )
        reason = msg.result.get("stopReason") if isinstance(msg.result, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if reason == "cancelled":
            return None
        return Breach(f"agent answered a cancelled prompt with stopReason {reason!r}")
