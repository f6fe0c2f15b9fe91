"""The agent's and the client's end of a connection, whatever the event loop.

An adapter's ``AgentSideConnection`` is :class:`AgentSide` over its own
connection class (reading, writing, tasks); everything else of a side is
here: the offer (one factory or ``{version: factory}``), the handler object
built for the version the engine chose (:class:`~acp_core.VersionChosen`),
the typed peer (``conn.client`` / ``conn.agent``) and its checked views, the
state ``initialize`` fixed (version, capabilities), and the client's
multi-version ``initialize``.  The rules themselves are
:class:`~acp_core.AgentRules` / :class:`~acp_core.ClientRules`.

The adapter's connection class provides ``engine`` (an
:class:`~acp_core.Engine`) and the coroutine methods ``request``,
``notify``, ``ext_request`` and ``ext_notify``; it calls
``version_chosen(version)`` at the engine's ``VersionChosen`` event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    TypeAlias,
    TypeVar,
    cast,
    overload,
)

import msgspec

from ._capabilities import NONE_ADVERTISED
from ._errors import ProtocolVersionError
from ._initialize import merge_initialize
from ._proxy import PeerProxy
from ._schema import Schema, draft_of

if TYPE_CHECKING:
    from acp_schema import v1, v2, v2_alpha0

    from ._engine import Engine
    from ._records import Running
    from ._rules import AgentRules, ClientRules
    from ._schema import MethodSpec

__all__ = ["AgentSide", "AgentT", "ClientSide", "ClientT", "Offer", "normalize_offer"]

log = logging.getLogger("acp_core")

#: The client's generated handler Protocol as the agent sees it: ``v1.Client`` or ``v2.Client``.
ClientT = TypeVar("ClientT")
#: The agent's generated handler Protocol as the client sees it: ``v1.Agent`` or ``v2.Agent``.
AgentT = TypeVar("AgentT")
#: What a side offers, untyped: one factory (protocol v1) or ``{version: factory}``.
Offer: TypeAlias = Callable[[Any], object] | Mapping[int, Callable[[Any], object]]


def normalize_offer(
    offer: Offer,
    side: Literal["agent", "client"] = "agent",
    *,
    unstable: bool = False,
) -> dict[int, Callable[[Any], object]]:
    """``{version: factory}`` from a factory (protocol v1) or a mapping.

    Raises :class:`ValueError` for an empty mapping or a version the schema
    does not have, before any connection (or agent process) exists.
    """
    # a factory (a class or function) is callable, a {version: factory} map is not
    offers = {1: offer} if callable(offer) else dict(offer)
    if not offers:
        raise ValueError("offer at least one protocol version")
    for version, factory in offers.items():
        # fails early on an unknown version or a draft of another version
        Schema.load(version, side, unstable=unstable, draft=draft_of(factory))
    return offers


class _Side:
    """What both ends share: the offer, the version spoken, the peer proxy."""

    engine: Engine
    _offers: dict[int, Callable[[Any], object]]
    _peer: PeerProxy

    if TYPE_CHECKING:  # the adapter's connection class has them

        async def request(self, method: MethodSpec, params: Any) -> Any: ...
        async def notify(self, method: MethodSpec, params: Any) -> None: ...
        async def ext_request(self, name: str, params: Any) -> Any: ...
        async def ext_notify(self, name: str, params: Any) -> None: ...

    def _require_version(self, version: int) -> None:
        """For the checked views (``agent_v1``, ``client_v2``, ...)."""
        spoken = self.engine.schema.version
        if spoken != version:
            raise ProtocolVersionError(
                f"this connection speaks protocol v{spoken}, not v{version}"
            )

    def _advertised(self, caps: Any, name: str) -> Any:
        """Capabilities as the public properties give them: the version's
        ``name`` class with its defaults when none were advertised."""
        if caps is NONE_ADVERTISED:
            return getattr(self.engine.schema.module, name)()
        return caps

    def _version_switched(self) -> None:
        """The version spoken changed: the peer proxy's methods are those of another table."""
        self._peer.forget()

    def _build(self, version: int) -> tuple[object | None, str | None]:
        """The handler object for ``version``, or none and the one-line cause
        when its factory raised (logged with the traceback)."""
        self._peer.forget()
        factory = self._offers[version]
        try:
            return factory(self), None
        except Exception as exc:
            log.exception("failed to build the handler for v%d", version)
            name = getattr(factory, "__qualname__", type(factory).__name__)
            return None, f"{name}() raised {type(exc).__name__}: {exc}"


class AgentSide(_Side, Generic[ClientT]):
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
    agent object is built for the version the engine chose.
    """

    rules: AgentRules
    #: The agent object, once ``initialize`` chose the version.
    agent: object | None

    def _init_side(self, offers: dict[int, Callable[[Any], object]]) -> None:
        """Called by the adapter once its connection (``engine``) exists."""
        self._offers = offers
        self._peer = PeerProxy(self)
        self.agent = None

    @property
    def client(self) -> ClientT:
        """Calls the client's methods: ``await conn.client.session_update(params)``.

        Typed as the client Protocol this connection was declared with;
        extension methods: ``ext_request`` / ``ext_notify``.
        """
        return cast(ClientT, self._peer)

    @property
    def client_v1(self) -> v1.Client:
        """``client`` as ``acp_schema.v1.Client``; raises unless this connection speaks v1."""
        self._require_version(1)
        return cast("v1.Client", self._peer)

    @property
    def client_v2(self) -> v2.Client:
        """``client`` as ``acp_schema.v2.Client``; raises unless this connection speaks v2."""
        self._require_version(2)
        return cast("v2.Client", self._peer)

    @property
    def protocol_version(self) -> int | None:
        """The negotiated version, once ``initialize`` was received (``None`` before)."""
        return self.rules.protocol_version

    @property
    def client_capabilities(
        self,
    ) -> v1.ClientCapabilities | v2.ClientCapabilities | None:
        """What the client advertised in ``initialize``, in the version spoken
        (the defaults if it advertised none; ``None`` before ``initialize``)."""
        caps: v1.ClientCapabilities | v2.ClientCapabilities | None = self._advertised(
            self.rules.client_capabilities, "ClientCapabilities"
        )
        return caps

    @property
    def init_state(self) -> Literal["waiting", "running", "done"]:
        """``waiting`` for ``initialize``, its handler ``running``, or ``done``."""
        return self.rules.init_state

    def negotiate(self, requested: object) -> int:
        """The spec's rule: the requested version if offered, else our latest."""
        return self.rules.offer.choose(requested)

    def version_chosen(self, version: int) -> None:
        """The engine's initialize step: build the agent object for ``version``
        (a factory that raises: ``initialize`` is answered -32603 with the cause)."""
        self.agent, failure = self._build(version)
        self.engine.set_handler(self.agent, failure=failure)

    @property
    def _prompts(self) -> dict[str, set[Running]]:
        return self.rules.session_cancel.running

    def cancel_session(self, session_id: str) -> None:
        """Cancel every running ``session/prompt`` handler of ``session_id``."""
        self.rules.session_cancel.cancel(session_id)


class ClientSide(_Side, Generic[AgentT]):
    """The client's end: calls the agent through ``agent``, serves the client object.

    Generic over the agent's handler Protocol: a client class declares the
    version it speaks by the connection it takes, and ``conn.agent`` is typed
    accordingly (inferred through ``spawn_agent`` / ``connect_to_agent``)::

        class MyClient:
            def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
                self.agent = conn.agent          # v1.Agent: every call typed

    A client offering several versions gets ``ClientSideConnection[Any]``;
    after ``initialize`` use the checked views :attr:`agent_v1` /
    :attr:`agent_v2` (they raise :class:`~acp_core.ProtocolVersionError`
    when the connection speaks another version).  ``protocol_version`` and
    ``agent_capabilities`` are known once ``initialize`` was answered;
    ``init_response`` keeps that response and ``client_capabilities`` what
    this client advertised in it.
    """

    rules: ClientRules
    #: The client object (rebuilt if the agent answers another version).
    client: object

    def _init_side(self, offers: dict[int, Callable[[Any], object]]) -> None:
        """Called by the adapter once its connection (``engine``) exists:
        builds the client object for the highest version offered."""
        self._offers = offers
        self._peer = PeerProxy(self)
        self.client = self._offers[self.engine.schema.version](self)
        self.engine.set_handler(self.client)

    @property
    def agent(self) -> AgentT:
        """Calls the agent's methods: ``await conn.agent.session_new(params)``.

        Requests return the decoded result, notifications ``None``; typed as
        the agent Protocol this connection was declared with.  Extension
        methods: ``ext_request`` / ``ext_notify`` (or, untyped,
        ``conn.agent.ext_method`` / ``ext_notification``).
        """
        return cast(AgentT, self._peer)

    @property
    def agent_v1(self) -> v1.Agent:
        """``agent`` as ``acp_schema.v1.Agent``; raises unless this connection speaks v1."""
        self._require_version(1)
        return cast("v1.Agent", self._peer)

    @property
    def agent_v2(self) -> v2.Agent:
        """``agent`` as ``acp_schema.v2.Agent``; raises unless this connection speaks v2."""
        self._require_version(2)
        return cast("v2.Agent", self._peer)

    @property
    def protocol_version(self) -> int | None:
        """The version the agent answered ``initialize`` with (``None`` before)."""
        return self.rules.protocol_version

    @property
    def agent_capabilities(self) -> v1.AgentCapabilities | v2.AgentCapabilities | None:
        """What the agent advertised in its ``initialize`` answer, in the version
        it answered (the defaults if it advertised none; ``None`` before)."""
        caps: v1.AgentCapabilities | v2.AgentCapabilities | None = self._advertised(
            self.rules.agent_capabilities, "AgentCapabilities"
        )
        return caps

    @property
    def client_capabilities(
        self,
    ) -> v1.ClientCapabilities | v2.ClientCapabilities | None:
        """What this client advertised to the agent, in the version it answered
        (the defaults if none; ``None`` before the answer)."""
        caps: v1.ClientCapabilities | v2.ClientCapabilities | None = self._advertised(
            self.rules.client_capabilities, "ClientCapabilities"
        )
        return caps

    @property
    def init_response(self) -> v1.InitializeResponse | v2.InitializeResponse | None:
        """The agent's ``InitializeResponse`` (``None`` before)."""
        response: v1.InitializeResponse | v2.InitializeResponse | None = (
            self.rules.init_response
        )
        return response

    @property
    def initialized(self) -> bool:
        """Whether the agent answered ``initialize`` successfully (its calls are served)."""
        return self.rules.initialized

    def version_chosen(self, version: int) -> None:
        """The agent answered ``initialize`` in ``version``: rebuild the client object."""
        client, _ = self._build(version)  # logged; its calls answer -32601
        if client is not None:
            self.client = client
        self.engine.set_handler(client)

    @overload
    async def initialize(
        self, *requests: v1.InitializeRequest
    ) -> v1.InitializeResponse: ...
    @overload
    async def initialize(
        self, *requests: v2.InitializeRequest
    ) -> v2.InitializeResponse: ...
    @overload
    async def initialize(
        self, *requests: v2_alpha0.InitializeRequest
    ) -> v2_alpha0.InitializeResponse: ...
    @overload
    async def initialize(
        self,
        *requests: v1.InitializeRequest
        | v2.InitializeRequest
        | v2_alpha0.InitializeRequest,
    ) -> (
        v1.InitializeResponse | v2.InitializeResponse | v2_alpha0.InitializeResponse
    ): ...
    async def initialize(
        self,
        *requests: v1.InitializeRequest
        | v2.InitializeRequest
        | v2_alpha0.InitializeRequest,
    ) -> v1.InitializeResponse | v2.InitializeResponse | v2_alpha0.InitializeResponse:
        """Send one ``initialize`` carrying the fields of each request (one per version).

        For a client offering several versions: the agent's version is not
        known yet, so the message must be read right by an agent of any of
        them.  ``protocolVersion`` is the highest of the requests'; each
        other field comes from the request that has it (v1's
        ``clientCapabilities`` beside v2's ``capabilities``); a field two
        requests share must agree, and the message must be valid under the
        schema of each request and of each offered version's draft this
        connection speaks, else :class:`ValueError`.  The
        capabilities this client then enforces on the agent (and reports
        as :attr:`client_capabilities`) are those of the request of the
        version the agent answers, none if it had none.  Returns the
        ``InitializeResponse`` of that version::

            await conn.initialize(
                v1.InitializeRequest(protocol_version=1, client_capabilities=fs_caps),
                v2.InitializeRequest(protocol_version=2, info=client_info),
            )
        """
        offer = merge_initialize(requests, self._offers, self.rules.offer.drafts)
        method = self.engine.schema.outgoing["initialize"]
        self.rules.offer_initialize(offer.requests)
        response: v1.InitializeResponse | v2.InitializeResponse = await self.request(
            method, msgspec.Raw(offer.payload)
        )
        return response

    def cancel_permissions(self, session_id: str) -> None:
        """Answer ``cancelled`` to every pending permission request of ``session_id``.

        Permission requests of that session arriving before its prompt is
        answered get the same answer without reaching the handler.
        """
        self.rules.session_cancel.cancelled_sessions.add(session_id)
        self.rules.session_cancel.cancel(session_id)
