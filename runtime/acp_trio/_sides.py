"""The agent's and the client's end of a connection on trio.

Each is :class:`acp_core.AgentSide` / :class:`acp_core.ClientSide` (the
offer, the handler object built once ``initialize`` picked the version, the
typed peer, the state ``initialize`` fixed) over this adapter's
:class:`~acp_trio.Connection`.  An agent or a client is a class per protocol
version implementing the methods it supports (handler names from the
generated ``Agent`` / ``Client`` protocols); it declares the version it
speaks by the connection it takes, and reaches its peer through
``conn.client`` / ``conn.agent``, typed accordingly::

    class EchoAgent:
        def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client        # a v1.Client for mypy

        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            await self.client.session_update(v1.SessionNotification(...))
            return v1.PromptResponse(stop_reason="end_turn")

    class MyClient:
        def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
            self.agent = conn.agent          # a v1.Agent

Rules applied by the engine, the same on every adapter:

- Initialization: until ``initialize`` was answered successfully every other
  request is answered -32600 (Invalid Request) and notifications are dropped,
  on both sides; a second ``initialize`` is answered -32600 too.  A failed
  ``initialize`` (error, cancelled) may be retried.
- ``session/cancel`` cancels the ``session/prompt`` requests of that session
  (their trio cancel scope; one received but not yet started never starts),
  and each is answered ``stopReason: "cancelled"``, also when the handler
  swallowed the cancellation.  ``session/close`` cancels the same way.  On
  the client, ``session/cancel`` answers every pending
  ``session/request_permission`` of that session with outcome ``cancelled``.
- The client sends ``initialize`` with its highest version (or one message
  for several: ``conn.initialize(v1_request, v2_request)``) and goes on in
  the version the agent answers, or fails with
  :class:`~acp_trio.ProtocolVersionError`.  Calls the peer did not
  advertise are refused locally with :class:`~acp_trio.CapabilityError`;
  an ``fs/*`` or ``terminal/*`` request the client did not advertise is
  answered -32601, a path that is not absolute on this host -32602.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

import trio
from acp_core import (
    AgentRules,
    AgentSide,
    AgentT,
    ClientRules,
    ClientSide,
    ClientT,
    Limits,
    normalize_offer,
)

from ._connection import Connection

__all__ = [
    "AgentFactory",
    "AgentOffer",
    "AgentSideConnection",
    "ClientFactory",
    "ClientOffer",
    "ClientSideConnection",
]


class AgentSideConnection(AgentSide[ClientT], Connection):
    """The agent's end over a trio stream: :class:`acp_core.AgentSide` over :class:`Connection`.

    Generic over the client's handler Protocol: ``conn.client`` is typed
    as the version the agent class declares with its connection parameter.
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


class ClientSideConnection(ClientSide[AgentT], Connection):
    """The client's end over a trio stream: :class:`acp_core.ClientSide` over :class:`Connection`.

    Generic over the agent's handler Protocol: ``conn.agent`` is typed as
    the version the client class declares (mypy infers it through
    ``spawn_agent`` / ``connect_to_agent``).
    """

    rules: ClientRules

    def __init__(
        self,
        stream: trio.abc.Stream,
        client: ClientOffer[AgentT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        offers = normalize_offer(client, "client", unstable=unstable)
        super().__init__(
            stream,
            ClientRules(offers),
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
        )
        #: The agent's :class:`trio.Process` when started by :func:`~acp_trio.spawn_agent`.
        self.process: trio.Process | None = None
        #: The agent's stderr when captured by :func:`~acp_trio.spawn_agent`.
        self.stderr_output = bytearray()
        self._init_side(offers)


#: Builds the agent object for one protocol version, given the connection.
AgentFactory: TypeAlias = Callable[[AgentSideConnection[ClientT]], object]
#: What an agent offers: one factory (protocol v1) or ``{version: factory}``.
AgentOffer: TypeAlias = AgentFactory[ClientT] | Mapping[int, AgentFactory[ClientT]]
#: Builds the client object for one protocol version, given the connection.
ClientFactory: TypeAlias = Callable[[ClientSideConnection[AgentT]], object]
#: What a client offers: one factory (protocol v1) or ``{version: factory}``.
ClientOffer: TypeAlias = ClientFactory[AgentT] | Mapping[int, ClientFactory[AgentT]]
