"""The agent calls only the client methods the client advertised."""

from __future__ import annotations

from dataclasses import dataclass

from acp_core import CapabilityError, check_client_call

from .._message import AGENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: The messages the rule looks at (``elicitation/complete`` is a notification).
SCOPE: Scope = scope("agent", "request", "notification")


@dataclass(frozen=True, slots=True)
class UnadvertisedClientMethod:
    """``fs/read_text_file`` / ``fs/write_text_file`` / ``terminal/*`` /
    ``elicitation/complete`` from the agent to a client whose ``initialize``
    did not advertise them, and ``elicitation/create`` in a mode it did not
    advertise (acp_core's rules, as the runtimes refuse such calls)."""

    key: str = "unadvertised-client-method"
    spec: SpecRef = REFS["fs-needs-capability"]
    applies_to: Scope = SCOPE

    def spec_for(self, method: str) -> SpecRef:
        """The line of that method's capability rule."""
        if method.startswith("terminal/"):
            return REFS["terminal-needs-capability"]
        if method.startswith("elicitation/"):
            return REFS["elicitation-mode-needs-capability"]
        return REFS["fs-needs-capability"]

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind == "response":
            return None
        method = msg.method or ""
        client = state.client
        if method == "elicitation/create" and msg.kind == "request":
            if msg.typed is None or client.capabilities is None:
                return None  # params that do not decode: the schema check says so
            try:
                check_client_call(
                    client.version, "elicitation_create", msg.typed, client.capabilities
                )
            except CapabilityError as exc:
                return Breach(f"agent called {method}: {exc}", self.spec_for(method))
            return None
        if method not in client.gated or method in client.methods:
            return None
        return Breach(
            f"agent called {method}, which the client did not advertise",
            self.spec_for(method),
        )
