"""The client calls only the session methods the agent advertised."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import CLIENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: method -> the spec line that makes it optional
GATED = {
    "session/load": "load-needs-capability",
    "session/resume": "resume-needs-capability",
    "session/close": "close-needs-capability",
    "session/list": "list-needs-capability",
    "session/delete": "delete-needs-capability",
}


#: The messages the rule looks at.
SCOPE: Scope = scope("client", "request")


@dataclass(frozen=True, slots=True)
class UnadvertisedAgentMethod:
    """``session/load`` without ``loadSession`` (v2 ``session.load``),
    ``session/resume`` / ``close`` / ``list`` / ``delete`` / ``fork``
    without their session capability (acp_core's list of gated methods)."""

    key: str = "unadvertised-agent-method"
    spec: SpecRef = REFS["load-needs-capability"]
    applies_to: Scope = SCOPE

    def spec_for(self, method: str) -> SpecRef:
        """The line of that method's capability rule (a method the docs do
        not gate by name, ``session/fork``: the rule for all capabilities)."""
        return REFS[GATED.get(method, "omitted-capabilities-unsupported")]

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != CLIENT or msg.kind != "request" or not state.initialized:
            return None
        method = msg.method or ""
        if method not in state.agent.gated or method in state.agent.methods:
            return None
        return Breach(
            f"client called {method}, which the agent did not advertise",
            self.spec_for(method),
        )
