"""The agent's and the client's end of a connection on trio.

Each is :class:`acp_core.AgentSide` / :class:`acp_core.ClientSide` (the
offer, the handler object built once ``initialize`` picked the version, the
typed peer, the state ``initialize`` fixed) over this adapter's
:class:`~acp_trio.Connection`; a class declares the version it speaks by
the connection it takes::

    class EchoAgent:
        def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client        # a v1.Client for mypy

The rules (initialization, negotiation, capability and path refusals,
session-cancel answers) are the engine's, the same on every adapter
(docs/guide.md); ``session/cancel`` cancels the prompt's trio cancel scope.
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
