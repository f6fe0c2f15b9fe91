"""The agent's end of a connection: serves ``AGENT_METHODS``, calls the client.

An agent is a class per protocol version, built with the connection once
``initialize`` picked the version; it implements the methods it supports
(handler names from the generated ``Agent`` protocol) and reaches the client
through ``conn.client``, typed as the ``Client`` protocol of the version the
class declares with its connection parameter::

    class EchoAgent:
        def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client        # a v1.Client for mypy

        async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
            return v1.InitializeResponse(protocol_version=1)

        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            await self.client.session_update(v1.SessionNotification(...))
            return v1.PromptResponse(stop_reason="end_turn")

    trio.run(acp_trio.serve_agent_stdio, {1: EchoAgent})

Rules applied by the runtime:

- Initialization: until ``initialize`` was answered successfully every other
  request is answered -32600 (Invalid Request) and notifications are dropped;
  a second ``initialize`` is answered -32600 too (the version and
  capabilities are fixed for the connection's life).  A failed
  ``initialize`` (error, cancelled) may be retried.
- ``session/cancel`` cancels the ``session/prompt`` requests of that session
  (their trio cancel scope; one received but not yet started never starts),
  and each is answered ``stopReason: "cancelled"``: when the cancellation
  surfaced as another exception in the handler, and when the handler
  swallowed it and returned normally (its other fields, ``_meta`` included,
  are kept).  A prompt whose handler had returned before the cancel arrived
  keeps its answer.  ``session/close`` cancels the same way on receipt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

import trio
from acp_core import AgentRules, AgentSide, ClientT, Limits, Offer, normalize_offer

from ._connection import Connection

__all__ = [
    "AgentFactory",
    "AgentOffer",
    "AgentSideConnection",
    "ClientT",
    "Offer",
    "normalize_offer",
]


class AgentSideConnection(AgentSide[ClientT], Connection):
    """The agent's end over a trio stream: :class:`acp_core.AgentSide` (the
    version, the agent object, the typed ``client``) over :class:`Connection`.

    Generic over the client's handler Protocol: an agent class declares the
    version it speaks by the connection it takes, and ``conn.client`` is
    typed accordingly::

        class EchoAgent:
            def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
                self.client = conn.client        # v1.Client: every call typed
    """

    rules: AgentRules

    def __init__(
        self,
        stream: trio.abc.Stream,
        agents: AgentOffer[ClientT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        offers = normalize_offer(agents, "agent", unstable=unstable)
        super().__init__(
            stream,
            AgentRules(offers),
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
        )
        self._init_side(offers)


#: Builds the agent object for one protocol version, given the connection.
AgentFactory: TypeAlias = Callable[[AgentSideConnection[ClientT]], object]
#: What an agent offers: one factory (protocol v1) or ``{version: factory}``.
AgentOffer: TypeAlias = AgentFactory[ClientT] | Mapping[int, AgentFactory[ClientT]]
