"""A response answers a request the other side sent and has not had answered."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import Message, sender_of
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("both", "response")


@dataclass(frozen=True, slots=True)
class UnknownResponseId:
    """A response whose id matches no pending request of the peer (never
    sent, or answered already).  An error with ``id: null`` (the answer to a
    line whose id could not be read) is exempt."""

    key: str = "response-to-unknown-id"
    spec: SpecRef = REFS["jsonrpc-response-id"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.kind != "response" or (msg.id is None and msg.error is not None):
            return None
        if state.pending_for(msg) is not None:
            return None
        return Breach(
            f"{sender_of(msg.direction)} answered id {msg.id!r}, which no pending request has"
        )
