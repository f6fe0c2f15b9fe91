"""The agent speaks only of sessions it created or was asked to load or resume."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "request", "notification")


@dataclass(frozen=True, slots=True)
class UnknownSession:
    """An agent notification or request naming a ``sessionId`` that no
    ``session/new`` / ``session/fork`` answer returned and no
    ``session/load`` / ``session/resume`` / ``session/list`` named."""

    key: str = "unknown-session"
    spec: SpecRef = REFS["session-id"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind == "response":
            return None
        sid = msg.session_id
        if sid is None or sid in state.sessions:
            return None
        return Breach(f"agent sent {msg.method} for unknown session {sid[:80]!r}")
