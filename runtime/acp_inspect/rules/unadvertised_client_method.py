"""The agent calls only the client methods the client advertised."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at.
SCOPE: Scope = scope("agent", "request")


@dataclass(frozen=True, slots=True)
class UnadvertisedClientMethod:
    """``fs/read_text_file`` / ``fs/write_text_file`` / ``terminal/*``
    from the agent to a client whose ``initialize`` did not advertise them."""

    key: str = "unadvertised-client-method"
    spec: SpecRef = REFS["fs-needs-capability"]
    applies_to: Scope = SCOPE

    def spec_for(self, method: str) -> SpecRef:
        """The line of that method's capability rule."""
        key = (
            "terminal-needs-capability"
            if method.startswith("terminal/")
            else "fs-needs-capability"
        )
        return REFS[key]

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind != "request":
            return None
        method = msg.method or ""
        if not method.startswith(("fs/", "terminal/")):
            return None
        if method in state.client.methods:
            return None
        return Breach(
            f"agent called {method}, which the client did not advertise",
            self.spec_for(method),
        )
