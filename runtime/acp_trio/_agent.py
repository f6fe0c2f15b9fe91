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

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, cast

import trio
from acp_core._limits import Limits
from acp_core._records import Running
from acp_core._rules import AgentRules
from acp_core._schema import Schema

from ._connection import Connection, PeerProxy

if TYPE_CHECKING:
    from acp_schema import v1, v2

__all__ = [
    "AgentFactory",
    "AgentOffer",
    "AgentSideConnection",
    "ClientT",
    "Offer",
]

log = logging.getLogger("acp_trio")

#: The client's generated handler Protocol as the agent sees it: ``v1.Client`` or ``v2.Client``.
ClientT = TypeVar("ClientT")
#: What a side offers, untyped: one factory (protocol v1) or ``{version: factory}``.
Offer: TypeAlias = Callable[[Any], object] | Mapping[int, Callable[[Any], object]]


def normalize_offer(
    offer: Offer, *, unstable: bool = False
) -> dict[int, Callable[[Any], object]]:
    """``{version: factory}`` from a factory or mapping; checks the versions exist."""
    # a factory (a class or function) is callable, a {version: factory} map is not
    offers = {1: offer} if callable(offer) else dict(offer)
    if not offers:
        raise ValueError("offer at least one protocol version")
    for version in offers:
        # fails early on an unknown version
        Schema.load(version, "agent", unstable=unstable)
    return offers


class AgentSideConnection(Connection, Generic[ClientT]):
    """The agent's end: negotiates the version, serves the agent object.

    Generic over the client's handler Protocol: an agent class declares the
    version it speaks by the connection it takes, and ``conn.client`` is
    typed accordingly::

        class EchoAgent:
            def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
                self.client = conn.client        # v1.Client: every call typed

    :attr:`client_v1` / :attr:`client_v2` are checked views for code that
    holds an ``AgentSideConnection[Any]``.  ``client_capabilities`` and
    ``protocol_version`` are known once ``initialize`` was received.  The
    rules are ``acp_core.AgentRules``'; the agent object is built for the
    version the engine chose (its ``VersionChosen`` step).
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
        self._offers = normalize_offer(agents, unstable=unstable)
        super().__init__(
            stream,
            AgentRules(self._offers),
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
        )
        self._client = PeerProxy(self)
        self.agent: object | None = None

    # -- the client, typed -------------------------------------------------------------

    @property
    def client(self) -> ClientT:
        """Calls the client's methods: ``await conn.client.session_update(params)``.

        Typed as the client Protocol this connection was declared with;
        extension methods: :meth:`ext_request` / :meth:`ext_notify`.
        """
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

    # -- initialization ----------------------------------------------------------------

    @property
    def protocol_version(self) -> int | None:
        """The negotiated version, once ``initialize`` was received."""
        return self.rules.protocol_version

    @property
    def client_capabilities(self) -> Any:
        """What the client advertised in ``initialize``."""
        return self.rules.client_capabilities

    @property
    def init_state(self) -> Literal["waiting", "running", "done"]:
        """``waiting`` for ``initialize``, its handler ``running``, or ``done``."""
        return self.rules.init_state

    def negotiate(self, requested: Any) -> int:
        """The spec's rule: the requested version if offered, else our latest."""
        return self.rules.offer.choose(requested)

    def version_chosen(self, version: int) -> None:
        self.agent = self._offers[version](self)
        self.set_handler(self.agent)

    @property
    def _prompts(self) -> dict[str, set[Running]]:
        return self.rules.prompts.running

    def cancel_session(self, session_id: str) -> None:
        """Cancel every running ``session/prompt`` handler of ``session_id``."""
        self.rules.prompts.cancel(session_id)


#: Builds the agent object for one protocol version, given the connection.
AgentFactory: TypeAlias = Callable[[AgentSideConnection[ClientT]], object]
#: What an agent offers: one factory (protocol v1) or ``{version: factory}``.
AgentOffer: TypeAlias = AgentFactory[ClientT] | Mapping[int, AgentFactory[ClientT]]
