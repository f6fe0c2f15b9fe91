"""Terminal login only for a client that advertised ``auth.terminal``."""

from __future__ import annotations

from dataclasses import dataclass

from .._message import AGENT, Message
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach


@dataclass(frozen=True, slots=True)
class TerminalAuthNotAdvertised:
    """The agent's ``initialize`` answer offers a ``type: "terminal"``
    authentication method to a client without ``auth.terminal: true``."""

    key: str = "terminal-auth-not-advertised"
    spec: SpecRef = REFS["terminal-auth-needs-capability"]

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.direction != AGENT or msg.kind != "response" or msg.error is not None:
            return None
        pending = state.pending_for(msg)
        if pending is None or pending.method != "initialize":
            return None
        if not isinstance(msg.result, dict):
            return None
        methods = msg.result.get("authMethods") or ()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        terminal = [
            m for m in methods if isinstance(m, dict) and m.get("type") == "terminal"
        ]  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
        if not terminal:
            return None
        params = pending.params
        caps = params.get("clientCapabilities") or params.get("capabilities") or {}
        auth = caps.get("auth") if isinstance(caps, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(auth, dict) and auth.get("terminal") is True:  # pyright: ignore[reportUnknownMemberType]
            return None
        return Breach(
            "agent offered terminal authentication to a client without auth.terminal"
        )
