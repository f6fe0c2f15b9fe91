"""The client sends nothing but ``initialize`` before the connection is initialized."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import CLIENT, Message, sender_of
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("client", "request", "notification")


@dataclass(frozen=True, slots=True)
class BeforeInitialize:
    """A request or notification of the client (other than ``initialize``
    and ``$/cancel_request``) before the agent answered ``initialize``
    successfully.  The cited line binds clients only: what an agent sends
    before (answering a client that broke this rule first, as the check's
    ``initialize.first`` does on purpose) is not held against it."""

    key: str = "before-initialize"
    spec: SpecRef = REFS["initialize-first"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if state.initialized or msg.kind == "response" or msg.direction != CLIENT:
            return None
        if msg.method in ("initialize", "$/cancel_request"):
            return None
        return Breach(
            f"{sender_of(msg.direction)} sent {msg.method} before initialize was answered"
        )
