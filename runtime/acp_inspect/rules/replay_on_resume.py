"""``session/resume`` restores a session without replaying it."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope
from .update_after_turn import TURN_UPDATES

#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "notification")


@dataclass(frozen=True, slots=True)
class ReplayOnResume:
    """A content, tool call or plan ``session/update`` for a session while
    its ``session/resume`` is unanswered and no prompt or load runs for it."""

    key: str = "replay-on-resume"
    spec: SpecRef = REFS["resume-no-replay"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.method != "session/update":
            return None
        sid = msg.session_id
        if sid is None or state.loading.get(sid):
            return None
        resuming = any(
            p.method == "session/resume" and p.params.get("sessionId") == sid
            for p in state.pending["to_agent"].values()
        )
        if not resuming:
            return None
        turn = state.turns.get(sid)
        if turn is not None and not turn.ended:
            return None
        update = msg.params.get("update")
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if kind not in TURN_UPDATES:
            return None
        return Breach(f"agent replayed a {kind} update while resuming the session")
