"""The agent's and the client's end of a connection on asyncio.

Same shape as acp_trio's: an agent (a client) is a class per protocol
version, built with the connection once the version is known, serving the
handler names of the generated ``Agent`` (``Client``) Protocol; the peer is
reached through ``conn.client`` (``conn.agent``), typed by the connection
parameter the class declares::

    class EchoAgent(v1.Agent):
        def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client        # a v1.Client for the type checker

The rules (initialization, negotiation, capability and path refusals,
session-cancel answers) are the engine's (:mod:`acp_core`), identical to
acp_trio's; ``session/cancel`` cancels the prompt's task (an
:class:`asyncio.CancelledError` at its next ``await``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, cast

import msgspec
from acp_core import (
    AgentRules,
    ClientRules,
    Engine,
    Limits,
    ProtocolVersionError,
    Schema,
    merge_initialize,
)

from ._connection import Connection, PeerProxy

if TYPE_CHECKING:
    from acp_schema import v1, v2

__all__ = [
    "AgentFactory",
    "AgentOffer",
    "AgentSideConnection",
    "AgentT",
    "ClientFactory",
    "ClientOffer",
    "ClientSideConnection",
    "ClientT",
    "Offer",
]

#: The client's generated handler Protocol as the agent sees it: ``v1.Client`` or ``v2.Client``.
ClientT = TypeVar("ClientT")
#: The agent's generated handler Protocol as the client sees it: ``v1.Agent`` or ``v2.Agent``.
AgentT = TypeVar("AgentT")
#: What a side offers, untyped: one factory (protocol v1) or ``{version: factory}``.
Offer: TypeAlias = Callable[[Any], object] | Mapping[int, Callable[[Any], object]]


def normalize_offer(
    offer: Offer, side: Literal["agent", "client"], unstable: bool
) -> dict[int, Callable[[Any], object]]:
    """``{version: factory}`` from a factory or mapping; checks the versions exist."""
    # a factory (a class or function) is callable, a {version: factory} map is not
    offers = {1: offer} if callable(offer) else dict(offer)
    if not offers:
        raise ValueError("offer at least one protocol version")
    for version in offers:
        Schema.load(version, side, unstable=unstable)  # fails early on an unknown one
    return offers


class _Side(Connection):
    def __init__(
        self,
        rules: AgentRules | ClientRules,
        offers: dict[int, Callable[[Any], object]],
        limits: Limits | None,
        max_message_size: int | None,
        unstable: bool,
    ) -> None:
        self._offers = offers
        self._rules = rules
        resolved = Limits.resolve(limits, max_message_size)
        super().__init__(Engine(rules, resolved, unstable=unstable))

    @property
    def protocol_version(self) -> int | None:
        """The version negotiated by ``initialize`` (``None`` before)."""
        return self._rules.protocol_version

    def _require_version(self, version: int) -> None:
        if self.protocol_version != version:
            raise ProtocolVersionError(
                f"this connection speaks protocol v{self.protocol_version}, not v{version}"
            )


class AgentSideConnection(_Side, Generic[ClientT]):
    """The agent's end: negotiates the version, serves the agent object.

    Generic over the client's handler Protocol; :attr:`client_v1` /
    :attr:`client_v2` are checked views for code that holds an
    ``AgentSideConnection[Any]``.  ``client_capabilities`` and
    ``protocol_version`` are known once ``initialize`` was received.
    """

    def __init__(
        self,
        agents: AgentOffer[ClientT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        offers = normalize_offer(agents, "agent", unstable)
        self._agent_rules = AgentRules(offers)
        super().__init__(self._agent_rules, offers, limits, max_message_size, unstable)
        self._client = PeerProxy(self)
        #: The agent object, once ``initialize`` chose the version.
        self.agent: object | None = None

    @property
    def client(self) -> ClientT:
        """Calls the client's methods: ``await conn.client.session_update(params)``."""
        return cast(ClientT, self._client)

    @property
    def client_v1(self) -> v1.Client:
        """``client`` as ``acp_schema.v1.Client``; raises unless this connection speaks v1."""
        self._require_version(1)
        return cast("v1.Client", self._client)

    @property
    def client_v2(self) -> v2.Client:
        """``client`` as ``acp_schema.v2.Client``; raises unless this connection speaks v2."""
        self._require_version(2)
        return cast("v2.Client", self._client)

    @property
    def client_capabilities(self) -> Any:
        """What the client advertised in ``initialize`` (``None`` before)."""
        return self._agent_rules.client_capabilities

    def _build_handler(self, version: int) -> object:
        self.agent = self._offers[version](self)
        return self.agent


class ClientSideConnection(_Side, Generic[AgentT]):
    """The client's end: calls the agent through ``agent``, serves the client object.

    Generic over the agent's handler Protocol (inferred from the client
    class by :func:`~acp_asyncio.spawn_agent` / ``connect_to_agent``).
    ``protocol_version``, ``agent_capabilities`` and ``init_response`` are
    known once ``initialize`` was answered.
    """

    def __init__(
        self,
        client: ClientOffer[AgentT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        offers = normalize_offer(client, "client", unstable)
        self._client_rules = ClientRules(offers)
        super().__init__(self._client_rules, offers, limits, max_message_size, unstable)
        self._agent = PeerProxy(self)
        #: The agent's process when started by :func:`~acp_asyncio.spawn_agent`.
        self.process: asyncio.subprocess.Process | None = None
        #: The agent's stderr when captured by :func:`~acp_asyncio.spawn_agent`.
        self.stderr_output = bytearray()
        self._version = max(self._offers)
        #: The client object (rebuilt if the agent answers another version).
        self.client: object = self._offers[self._version](self)
        self._engine.set_handler(self.client)

    @property
    def agent(self) -> AgentT:
        """Calls the agent's methods: ``await conn.agent.session_new(params)``."""
        return cast(AgentT, self._agent)

    @property
    def agent_v1(self) -> v1.Agent:
        """``agent`` as ``acp_schema.v1.Agent``; raises unless this connection speaks v1."""
        self._require_version(1)
        return cast("v1.Agent", self._agent)

    @property
    def agent_v2(self) -> v2.Agent:
        """``agent`` as ``acp_schema.v2.Agent``; raises unless this connection speaks v2."""
        self._require_version(2)
        return cast("v2.Agent", self._agent)

    @property
    def agent_capabilities(self) -> Any:
        """What the agent advertised in its ``initialize`` answer (``None`` before)."""
        return self._client_rules.agent_capabilities

    @property
    def init_response(self) -> Any:
        """The agent's ``initialize`` answer (``None`` before)."""
        return self._client_rules.init_response

    @property
    def initialized(self) -> bool:
        """Whether the agent answered ``initialize`` successfully (its calls are served)."""
        return self._client_rules.initialized

    @property
    def client_capabilities(self) -> Any:
        """What this client advertised to the agent in ``initialize``."""
        return self._client_rules.client_capabilities

    async def initialize(
        self, *requests: v1.InitializeRequest | v2.InitializeRequest
    ) -> Any:
        """Send one ``initialize`` carrying the fields of each request (one per version).

        As :meth:`acp_trio.ClientSideConnection.initialize`: for a client
        offering several versions; returns the ``InitializeResponse`` of the
        version the agent answered.
        """
        offer = merge_initialize(requests, self._offers)
        self._client_rules.offer_initialize(offer.requests)
        return await self.request(
            self._engine.schema.outgoing["initialize"], msgspec.Raw(offer.payload)
        )

    def _build_handler(self, version: int) -> object:
        if version != self._version:
            self._version = version
            self.client = self._offers[version](self)
        return self.client


#: Builds the agent object for one protocol version, given the connection.
AgentFactory: TypeAlias = Callable[[AgentSideConnection[ClientT]], object]
#: What an agent offers: one factory (protocol v1) or ``{version: factory}``.
AgentOffer: TypeAlias = AgentFactory[ClientT] | Mapping[int, AgentFactory[ClientT]]
#: Builds the client object for one protocol version, given the connection.
ClientFactory: TypeAlias = Callable[[ClientSideConnection[AgentT]], object]
#: What a client offers: one factory (protocol v1) or ``{version: factory}``.
ClientOffer: TypeAlias = ClientFactory[AgentT] | Mapping[int, ClientFactory[AgentT]]
