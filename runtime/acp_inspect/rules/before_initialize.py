"""Nothing but ``initialize`` before the connection is initialized."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import Message, sender_of
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("both", "request", "notification")


@dataclass(frozen=True, slots=True)
class BeforeInitialize:
    """A request or notification (other than ``initialize`` and
    ``$/cancel_request``) from either side before the agent answered
    ``initialize`` successfully (initialization.mdx: clients MUST initialize
    the connection first; the agent has nothing to call before)."""

    key: str = "before-initialize"
    spec: SpecRef = REFS["initialize-first"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if state.initialized or msg.kind == "response":
            return None
        if msg.method in ("initialize", "$/cancel_request"):
            return None
        return Breach(
            f"{sender_of(msg.direction)} sent {msg.method} before initialize was answered"
        )
