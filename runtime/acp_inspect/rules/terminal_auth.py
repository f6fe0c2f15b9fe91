"""Terminal login only for a client that advertised ``auth.terminal``."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message, as_list, as_obj
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "response")


@dataclass(frozen=True, slots=True)
class TerminalAuthNotAdvertised:
    """The agent's ``initialize`` answer offers a ``type: "terminal"``
    authentication method to a client without ``auth.terminal: true``."""

    key: str = "terminal-auth-not-advertised"
    spec: SpecRef = REFS["terminal-auth-needs-capability"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind != "response" or msg.error is not None:
            return None
        pending = state.pending_for(msg)
        if pending is None or pending.method != "initialize":
            return None
        methods = as_list(as_obj(msg.result).get("authMethods"))
        if not any(as_obj(m).get("type") == "terminal" for m in methods):
            return None
        params = pending.params
        caps = as_obj(params.get("clientCapabilities") or params.get("capabilities"))
        if as_obj(caps.get("auth")).get("terminal") is True:
            return None
        return Breach(
            "agent offered terminal authentication to a client without auth.terminal"
        )
