"""The client's end of a connection: serves ``CLIENT_METHODS``, calls the agent.

A client is a class per protocol version implementing the methods it
supports (handler names from the generated ``Client`` protocol); the agent
is reached through ``conn.agent``, typed as the ``Agent`` protocol of the
version the class declares with its connection parameter::

    class MyClient:
        def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None: ...

        async def session_update(self, params: v1.SessionNotification) -> None:
            print(params.update)

    async with acp_trio.spawn_agent(["my-agent"], client=MyClient) as conn:
        # conn: ClientSideConnection[v1.Agent], inferred from MyClient
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        session = await conn.agent.session_new(v1.NewSessionRequest(cwd="/work", mcp_servers=[]))

``initialize`` is sent with the client's highest version; the connection
continues in the version the agent answers, or fails with
:class:`~acp_trio.ProtocolVersionError` if the client does not offer it.
A client offering several versions sends ``conn.initialize(v1_request,
v2_request)``: one message carrying each version's fields (v1's
``clientCapabilities`` beside v2's ``capabilities``), so an agent of either
version reads what was advertised to it (see :mod:`acp_trio._initialize`).
Calls the agent did not advertise are refused locally with
:class:`~acp_trio.CapabilityError`.  ``session/cancel`` answers every pending
``session/request_permission`` of that session with outcome ``cancelled``
(and any that arrives until that session's prompt is answered).

The client's own ``initialize`` is enforced on the agent: an ``fs/*`` or
``terminal/*`` request it did not advertise is answered -32601 without
reaching the client object, and a path that is not absolute on this host
(or holds a NUL) -32602.

Until the agent answered ``initialize`` successfully, every request it sends
is answered -32600 (Invalid Request, ``data: {"method": ...}``) and its
notifications are dropped (logged), as the agent side does for the client:
nothing may precede ``initialize``.  A failed ``initialize`` leaves the
connection uninitialized.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, cast

import msgspec
import trio
from acp_core._initialize import merge_initialize
from acp_core._limits import Limits
from acp_core._rules import ClientRules

from ._agent import normalize_offer
from ._connection import Connection, PeerProxy

if TYPE_CHECKING:
    from acp_schema import v1, v2

__all__ = ["AgentT", "ClientFactory", "ClientOffer", "ClientSideConnection"]

#: The agent's generated handler Protocol as the client sees it: ``v1.Agent`` or ``v2.Agent``.
AgentT = TypeVar("AgentT")


class ClientSideConnection(Connection, Generic[AgentT]):
    """The client's end: calls the agent through ``agent``, serves the client object.

    Generic over the agent's handler Protocol: a client class declares the
    version it speaks by the connection it takes, and ``conn.agent`` is typed
    accordingly (mypy infers it through ``spawn_agent``/``connect_to_agent``)::

        class MyClient:
            def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
                self.agent = conn.agent          # v1.Agent: every call typed

    A client offering several versions gets ``ClientSideConnection[Any]``;
    after ``initialize`` use the checked views :attr:`agent_v1` /
    :attr:`agent_v2` (they raise :class:`~acp_trio.ProtocolVersionError` when
    the connection speaks another version).

    ``protocol_version`` and ``agent_capabilities`` are known once
    ``initialize`` was answered; ``init_response`` keeps that response and
    ``client_capabilities`` what this client advertised in it.
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
        self._offers = normalize_offer(client, unstable=unstable)
        super().__init__(
            stream,
            ClientRules(self._offers),
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
        )
        self._agent = PeerProxy(self)
        self.client: object = self._offers[self.schema.version](self)
        self.set_handler(self.client)
        #: The agent's :class:`trio.Process` when started by :func:`~acp_trio.spawn_agent`.
        self.process: trio.Process | None = None
        #: The agent's stderr when captured by :func:`~acp_trio.spawn_agent`.
        self.stderr_output = bytearray()

    # -- the agent, typed --------------------------------------------------------------

    @property
    def agent(self) -> AgentT:
        """Calls the agent's methods: ``await conn.agent.session_new(params)``.

        Requests return the decoded result, notifications ``None``; typed as
        the agent Protocol this connection was declared with.  Extension
        methods: :meth:`ext_request` / :meth:`ext_notify` (or, untyped,
        ``conn.agent.ext_method`` / ``ext_notification``).
        """
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

    # -- negotiation -----------------------------------------------------------------

    @property
    def protocol_version(self) -> int | None:
        """The version the agent answered ``initialize`` with."""
        return self.rules.protocol_version

    @property
    def agent_capabilities(self) -> Any:
        """What the agent advertised in its ``initialize`` answer."""
        return self.rules.agent_capabilities

    @property
    def client_capabilities(self) -> Any:
        """What this client advertised to the agent (in the version it answered)."""
        return self.rules.client_capabilities

    @property
    def init_response(self) -> Any:
        """The agent's ``InitializeResponse``."""
        return self.rules.init_response

    @property
    def initialized(self) -> bool:
        """Whether the agent answered ``initialize`` successfully (its calls are served)."""
        return self.rules.initialized

    def version_chosen(self, version: int) -> None:
        self.client = self._offers[version](self)
        self.set_handler(self.client)

    async def initialize(
        self, *requests: v1.InitializeRequest | v2.InitializeRequest
    ) -> Any:
        """Send one ``initialize`` carrying the fields of each request (one per version).

        For a client offering several versions: the agent's version is not
        known yet, so the message must be read right by an agent of any of
        them.  ``protocolVersion`` is the highest of the requests'; each
        other field comes from the request that has it (v1's
        ``clientCapabilities`` beside v2's ``capabilities``); a field two
        requests share must agree, else :class:`ValueError`.  The
        capabilities this client then enforces on the agent (and reports
        as :attr:`client_capabilities`) are those of the request of the
        version the agent answers, none if it had none.  Returns the
        ``InitializeResponse`` of that version::

            await conn.initialize(
                v1.InitializeRequest(protocol_version=1, client_capabilities=fs_caps),
                v2.InitializeRequest(protocol_version=2),
            )
        """
        offer = merge_initialize(requests, self._offers)
        method = self.schema.outgoing["initialize"]
        self.rules.offer_initialize(offer.requests)
        return await self.request(method, msgspec.Raw(offer.payload))

    def cancel_permissions(self, session_id: str) -> None:
        """Answer ``cancelled`` to every pending permission request of ``session_id``.

        Permission requests of that session arriving before its prompt is
        answered get the same answer without reaching the handler.
        """
        self.rules.permissions.cancelled_sessions.add(session_id)
        self.rules.permissions.cancel(session_id)


#: Builds the client object for one protocol version, given the connection.
ClientFactory: TypeAlias = Callable[[ClientSideConnection[AgentT]], object]
#: What a client offers: one factory (protocol v1) or ``{version: factory}``.
ClientOffer: TypeAlias = ClientFactory[AgentT] | Mapping[int, ClientFactory[AgentT]]
