"""After ``session/cancel`` the client answers pending permission requests ``cancelled``."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import CLIENT, Message, as_obj
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("client", "response")


@dataclass(frozen=True, slots=True)
class PermissionNotCancelled:
    """The client's answer to a ``session/request_permission`` that was
    pending when it sent ``session/cancel`` for that session is not the
    ``cancelled`` outcome."""

    key: str = "permission-not-cancelled"
    spec: SpecRef = REFS["permission-cancelled-on-cancel"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != CLIENT or msg.kind != "response":
            return None
        pending = state.pending_for(msg)
        if pending is None or pending.method != "session/request_permission":
            return None
        if not pending.cancelled_after or msg.error is not None:
            return None  # an error is no outcome either way; not this rule's business
        kind = as_obj(as_obj(msg.result).get("outcome")).get("outcome")
        if kind == "cancelled":
            return None
        return Breach(
            f"client answered a permission request of a cancelled turn with outcome {kind!r}"
        )
