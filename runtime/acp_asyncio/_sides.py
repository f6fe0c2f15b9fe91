"""The agent's and the client's end of a connection on asyncio.

Same shape as acp_trio's, from the same pieces: :class:`acp_core.AgentSide`
/ :class:`acp_core.ClientSide` (the offer, the handler object built once
the version is known, the typed peer, the state ``initialize`` fixed) over
this adapter's :class:`~acp_asyncio.Connection`::

    class EchoAgent(v1.Agent):
        def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client        # a v1.Client for the type checker

The rules (initialization, negotiation, capability and path refusals,
session-cancel answers) are the engine's, identical to acp_trio's;
``session/cancel`` cancels the prompt's task (an
:class:`asyncio.CancelledError` at its next ``await``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TypeAlias

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
    """The agent's end on asyncio: :class:`acp_core.AgentSide` over :class:`Connection`."""

    rules: AgentRules

    def __init__(
        self,
        agents: AgentOffer[ClientT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        offers = normalize_offer(agents, "agent", unstable=unstable)
        super().__init__(AgentRules(offers), limits, max_message_size, unstable)
        self._init_side(offers)


class ClientSideConnection(ClientSide[AgentT], Connection):
    """The client's end on asyncio: :class:`acp_core.ClientSide` over :class:`Connection`."""

    rules: ClientRules

    def __init__(
        self,
        client: ClientOffer[AgentT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        offers = normalize_offer(client, "client", unstable=unstable)
        super().__init__(ClientRules(offers), limits, max_message_size, unstable)
        #: The agent's process when started by :func:`~acp_asyncio.spawn_agent`.
        self.process: asyncio.subprocess.Process | None = None
        #: The agent's stderr when captured by :func:`~acp_asyncio.spawn_agent`.
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
