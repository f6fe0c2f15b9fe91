"""A turn's updates come before its response."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: updates that belong to a prompt turn (content, tool calls, plan); session
#: metadata updates (commands, modes, config, title, usage) may come any time
TURN_UPDATES = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "user_message",
        "agent_message",
        "agent_thought",
        "tool_call",
        "tool_call_update",
        "plan",
    }
)


#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "notification")


@dataclass(frozen=True, slots=True)
class UpdateAfterTurn:
    """A content, tool call or plan ``session/update`` for a session whose
    last prompt turn was answered, while no prompt and no ``session/load`` is
    running for it.  After a cancelled turn this breaks prompt-turn.mdx's
    "MUST ensure that it does so before responding"; after any other turn,
    the turn had ended with its response (cited as such, as a SHOULD: the
    line does not say that nothing may follow)."""

    key: str = "update-after-turn"
    spec: SpecRef = REFS["updates-before-response"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.method != "session/update":
            return None
        sid = msg.session_id
        if sid is None or state.loading.get(sid):
            return None
        turn = state.turns.get(sid)
        if turn is None or not turn.ended:
            return None
        update = msg.params.get("update")
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if kind not in TURN_UPDATES:
            return None
        if turn.cancelled:
            return Breach(
                f"agent sent a {kind} update after answering the cancelled turn"
            )
        # the line says the turn ends with the response; that nothing of the
        # turn follows it is a reading: SHOULD, not the line's MUST
        return Breach(
            f"agent sent a {kind} update after the turn's response ({turn.stop_reason})",
            REFS["turn-ends-with-response"],
            "SHOULD",
        )
