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
from typing import TypeAlias

import trio
from acp_core import AgentT, ClientRules, ClientSide, Limits, normalize_offer

from ._connection import Connection

__all__ = ["AgentT", "ClientFactory", "ClientOffer", "ClientSideConnection"]


class ClientSideConnection(ClientSide[AgentT], Connection):
    """The client's end over a trio stream: :class:`acp_core.ClientSide` (the
    client object, the typed ``agent``, ``initialize`` for several versions)
    over :class:`Connection`.

    Generic over the agent's handler Protocol: a client class declares the
    version it speaks by the connection it takes, and ``conn.agent`` is typed
    accordingly (mypy infers it through ``spawn_agent``/``connect_to_agent``)::

        class MyClient:
            def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
                self.agent = conn.agent          # v1.Agent: every call typed
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


#: Builds the client object for one protocol version, given the connection.
ClientFactory: TypeAlias = Callable[[ClientSideConnection[AgentT]], object]
#: What a client offers: one factory (protocol v1) or ``{version: factory}``.
ClientOffer: TypeAlias = ClientFactory[AgentT] | Mapping[int, ClientFactory[AgentT]]
