"""Building lines for the inspector's tests."""

from __future__ import annotations

from typing import Any

import msgspec
from acp_inspect import Finding, Inspector

V1_INIT_RESULT: dict[str, Any] = {
    "protocolVersion": 1,
    "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"resume": {}}},
}


def line(**obj: Any) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", **obj})


class Wire:
    """An inspector fed from both sides, with an initialized v1 connection
    and one session ``s1`` unless told otherwise."""

    def __init__(
        self,
        *,
        init: bool = True,
        client_caps: dict[str, Any] | None = None,
        agent_result: dict[str, Any] | None = None,
    ) -> None:
        self.inspector = Inspector()
        self.next_id = 100
        if init:
            params = {"protocolVersion": 1, "clientCapabilities": client_caps or {}}
            self.call("initialize", params, agent_result or V1_INIT_RESULT)
            self.call(
                "session/new", {"cwd": "/w", "mcpServers": []}, {"sessionId": "s1"}
            )

    def client(self, **obj: Any) -> list[Finding]:
        return self.inspector.feed("to_agent", 0.0, line(**obj))

    def agent(self, **obj: Any) -> list[Finding]:
        return self.inspector.feed("from_agent", 0.0, line(**obj))

    def call(self, method: str, params: Any, result: Any) -> list[Finding]:
        self.next_id += 1
        found = self.client(id=self.next_id, method=method, params=params)
        return found + self.agent(id=self.next_id, result=result)

    def update(
        self, kind: str = "agent_message_chunk", sid: str = "s1"
    ) -> list[Finding]:
        update: dict[str, Any] = {"sessionUpdate": kind}
        if kind.endswith("_chunk"):
            update["content"] = {"type": "text", "text": "x"}
        elif kind.startswith("tool_call"):
            update["toolCallId"] = "c1"
        return self.agent(
            method="session/update", params={"sessionId": sid, "update": update}
        )


def rules(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]
