"""A scriptable agent for testing clients: each prompt plays the script, then stops.

::

    agent = FakeAgent(
        [
            acp_core.agent_text("Reading.", message_id="m1"),
            acp_core.tool_call("c1", "Read a.txt", kind="read"),
            v1.ReadTextFileRequest(session_id="session-1", path="/w/a.txt"),
            acp_core.tool_call_update("c1", status="completed"),
        ],
        stop_reason="end_turn",
    )
    conn = await acp_in_memory.connect(agent, MyClient)

A step is a session update (sent as ``session/update`` for the prompt's
session), the params of a client method (sent as that request or
notification; the answer, or the error, is recorded in :attr:`FakeAgent.sent`:
a call the client's capabilities do not allow is refused by the runtime and
recorded as its :class:`~acp_core.CapabilityError`),
or an ``async`` function of the agent's connection (anything else).  A
:class:`FakeAgent` is the agent's factory (pass it where an agent class goes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from acp_core import CapabilityError, RequestError, notification

from ._schema_calls import (
    MAX_CALLS,
    RecordedCall,
    answer_of,
    keep,
    method_of_params,
    module_of,
)

__all__ = ["FakeAgent", "Step"]

#: One step of a :class:`FakeAgent`'s turn: an update, a client method's
#: params (a generated Struct), or an ``async`` function of the agent's connection.
Step: TypeAlias = Any


def _is_update(step: object) -> bool:
    config = getattr(type(step), "__struct_config__", None)
    return getattr(config, "tag_field", None) == "sessionUpdate"


@dataclass
class FakeAgent:
    """An agent whose every prompt turn sends ``steps``, then answers ``stop_reason``.

    ``initialize`` is answered with the version asked for (if offered) and
    ``capabilities`` (JSON of the version's agent capabilities);
    ``session/new`` with ``session_id``.  Records: :attr:`calls` (every call
    the client made, its params and the answer), :attr:`sent` (each request
    and notification of the script, with the client's answer or
    :class:`~acp_core.RequestError`), :attr:`cancelled` (the sessions the
    client sent ``session/cancel`` for).  Each list keeps ``max_calls``
    (``MAX_CALLS`` by default); later ones are only counted in :attr:`dropped`.
    """

    steps: Sequence[Step] = ()
    stop_reason: str = "end_turn"
    session_id: str = "session-1"
    capabilities: Mapping[str, Any] = field(default_factory=dict[str, Any])
    calls: list[RecordedCall] = field(default_factory=list[RecordedCall])
    sent: list[RecordedCall] = field(default_factory=list[RecordedCall])
    cancelled: list[str] = field(default_factory=list[str])
    max_calls: int = MAX_CALLS
    dropped: int = 0

    def __call__(self, conn: Any) -> _FakeAgentHandler:
        """The handler object of one connection (the runtime calls this)."""
        return _FakeAgentHandler(self, conn)

    def methods(self) -> list[str]:
        """The methods the client called, in order."""
        return [call.method for call in self.calls]


class _FakeAgentHandler:
    """The handler object a connection serves: the script, played per prompt."""

    def __init__(self, fake: FakeAgent, conn: Any) -> None:
        self._fake = fake
        self._conn = conn
        self._turns = 0

    def _keep(self, into: list[RecordedCall], call: RecordedCall) -> RecordedCall:
        if not keep(into, call, self._fake.max_calls):
            self._fake.dropped += 1
        return call

    def _answer(self, method: str, params: Any, answer: Mapping[str, Any]) -> Any:
        call = self._keep(self._fake.calls, RecordedCall(method, params))
        call.answer = answer_of(module_of(params), "AGENT", method, answer)
        return call.answer

    async def initialize(self, params: Any) -> Any:
        version = module_of(params).PROTOCOL_VERSION
        caps = dict(self._fake.capabilities)
        info = {"name": "acp-pytest-fake-agent", "version": "1"}
        # both spellings: v1's agentCapabilities / agentInfo, v2 drafts'
        # capabilities / info (each version's type keeps the keys it declares)
        answer = {"protocolVersion": version, "agentCapabilities": caps}
        answer.update(capabilities=caps, agentInfo=info, info=info)
        return self._answer("initialize", params, answer)

    async def session_new(self, params: Any) -> Any:
        return self._answer("session/new", params, {"sessionId": self._fake.session_id})

    async def session_cancel(self, params: Any) -> None:
        self._keep(self._fake.calls, RecordedCall("session/cancel", params))
        if len(self._fake.cancelled) < self._fake.max_calls:
            self._fake.cancelled.append(params.session_id)

    async def session_prompt(self, params: Any) -> Any:
        call = self._keep(self._fake.calls, RecordedCall("session/prompt", params))
        for step in self._fake.steps:
            await self._play(params.session_id, step)
        self._turns += 1
        # v1 answers the stop reason; the v2 draft of 2.4.0 a messageId
        answer = {
            "stopReason": self._fake.stop_reason,
            "messageId": f"turn-{self._turns}",
        }
        call.answer = answer_of(module_of(params), "AGENT", "session/prompt", answer)
        return call.answer

    async def _play(self, session_id: str, step: Step) -> None:
        peer = self._conn.client
        if _is_update(step):
            await peer.session_update(notification(session_id, step))
            return
        if callable(step):
            played: Any = step(self._conn)  # an async function of the connection
            await played
            return
        method, handler, request = method_of_params(step, "CLIENT")
        record = self._keep(self._fake.sent, RecordedCall(method, step))
        try:
            record.answer = await getattr(peer, handler)(step)
        except (RequestError, CapabilityError) as exc:
            # the client's error answer, or a call our side refused to send
            # (a capability the client did not advertise): recorded, the turn goes on
            if not request:
                raise
            record.answer = exc
