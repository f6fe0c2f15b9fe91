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
from acp_core import _capabilities
from acp_core._errors import ProtocolVersionError, RequestError, not_initialized
from acp_core._initialize import merge_initialize
from acp_core._limits import Limits
from acp_core._schema import MethodSpec, Schema
from acp_core._support import support

from ._agent import normalize_offer
from ._connection import (
    Connection,
    Envelope,
    PeerProxy,
    Running,
    _Pending,  # pyright: ignore[reportPrivateUsage]
    peek_protocol_version,
)

if TYPE_CHECKING:
    from acp_schema import v1, v2

__all__ = ["AgentT", "ClientFactory", "ClientOffer", "ClientSideConnection"]

#: The agent's generated handler Protocol as the client sees it: ``v1.Agent`` or ``v2.Agent``.
AgentT = TypeVar("AgentT")

_CANCELLED_PERMISSION = b'{"outcome":{"outcome":"cancelled"}}'


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

    def __init__(
        self,
        stream: trio.abc.Stream,
        client: ClientOffer[AgentT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        self._unstable = unstable
        self._offers = normalize_offer(client, unstable=unstable)
        version = max(self._offers)
        super().__init__(
            stream,
            Schema.load(version, "client", unstable=unstable),
            limits=limits,
            max_message_size=max_message_size,
        )
        self._agent = PeerProxy(self)
        self.client_capabilities: Any = None
        # The initialize request(s) sent, by version; merged: by conn.initialize().
        self._init_requests: dict[int, Any] = {}
        self._merged_init = False
        self.protocol_version: int | None = None
        self.agent_capabilities: Any = None
        self.init_response: Any = None
        self.client: object = self._offers[version](self)
        self.set_handler(self.client)
        #: The agent's :class:`trio.Process` when started by :func:`~acp_trio.spawn_agent`.
        self.process: trio.Process | None = None
        #: The agent's stderr when captured by :func:`~acp_trio.spawn_agent`.
        self.stderr_output = bytearray()
        self._permissions: dict[str, set[Running]] = {}
        self._cancelled_sessions: set[str] = set()
        # What agent_capabilities allow, rebuilt when they (or the version) change.
        self._agent_checks = _capabilities.AgentCallChecks(version, None)
        # Agent methods the capabilities this client advertised refuse, by wire
        # name; rebuilt when they are sent and on a version switch (one dict
        # lookup per incoming message).
        self._refusals: dict[str, RequestError] = {}
        #: Whether the agent answered ``initialize`` successfully (its calls are served).
        self.initialized = False

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

    def response_received(self, pending: _Pending, env: Envelope) -> None:
        if pending.method.handler != "initialize" or env.result is msgspec.UNSET:
            return
        version = peek_protocol_version(env.result)
        if version not in self._offers:
            pending.failure = ProtocolVersionError(
                f"the agent answered protocol version {version!r}; this client speaks {sorted(self._offers)}"
            )
            pending.event.set()
            self.close()
            return
        if version != self.schema.version:
            self.bind(Schema.load(version, "client", unstable=self._unstable))
            self.client = self._offers[version](self)
            self.set_handler(self.client)
            pending.method = self.schema.outgoing[pending.method.name]
            self._advertised(version)
        self.protocol_version = version

    def _advertised(self, version: int) -> None:
        """Read what this client advertised to an agent of ``version``."""
        requests = self._init_requests
        if version in requests or self._merged_init:
            self.client_capabilities = _capabilities.client_capabilities(
                requests.get(version)
            )
        self._refusals = _capabilities.ReceivedCallChecks(
            self.schema, self.client_capabilities
        ).refusals

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
        self._init_requests = offer.requests
        self._merged_init = True
        return await self.request(method, msgspec.Raw(offer.payload))

    def _release(self, p: _Pending, env: Envelope) -> None:
        super()._release(p, env)
        if (
            p.method.handler == "initialize"
            and p.failure is None
            and p.value is not None
        ):
            self.init_response = p.value
            self.agent_capabilities = _capabilities.agent_capabilities(p.value)
            self.initialized = True

    # -- outgoing ------------------------------------------------------------------

    def check_outgoing(self, method: MethodSpec, params: Any) -> None:
        checks = self._agent_checks
        if (
            checks.caps is not self.agent_capabilities
            or checks.version != self.schema.version
        ):
            checks = self._agent_checks = _capabilities.AgentCallChecks(
                self.schema.version, self.agent_capabilities, self.schema.module
            )
        checks.check(method.handler, params)

    def sent(self, method: MethodSpec, params: Any) -> None:
        if method.handler == "initialize":
            if not isinstance(params, msgspec.Raw):  # one request, sent as given
                self._init_requests = {self.schema.version: params}
                self._merged_init = False
            self._advertised(self.schema.version)
        elif method.handler == "session_cancel":
            self.cancel_permissions(params.session_id)
        elif method.handler == "session_prompt":
            self._cancelled_sessions.discard(params.session_id)

    async def request(self, method: MethodSpec, params: Any) -> Any:
        try:
            return await super().request(method, params)
        finally:
            if method.handler == "session_prompt":
                self._cancelled_sessions.discard(params.session_id)

    def cancel_permissions(self, session_id: str) -> None:
        """Answer ``cancelled`` to every pending permission request of ``session_id``.

        Permission requests of that session arriving before its prompt is
        answered get the same answer without reaching the handler.
        """
        self._cancelled_sessions.add(session_id)
        for running in list(self._permissions.get(session_id, ())):
            running.cancel("session")

    # -- incoming --------------------------------------------------------------------

    def refuse(self, name: str, request: bool) -> RequestError | None:
        if not self.initialized:
            return not_initialized(name, "the client has no initialize answer yet")
        return self._refusals.get(name)  # fs/*, terminal/* not advertised

    def decode_params(
        self,
        method: MethodSpec,
        raw: msgspec.Raw | msgspec.UnsetType,
        *,
        notification: bool = False,
    ) -> Any:
        params = super().decode_params(method, raw, notification=notification)
        if method.handler == "elicitation_create":
            _capabilities.check_elicitation_received(params, self.client_capabilities)
        return params

    def request_started(self, running: Running) -> None:
        if (
            running.method.handler == "session_request_permission"
            and running.session_id is not None
        ):
            self._permissions.setdefault(running.session_id, set()).add(running)
            if running.session_id in self._cancelled_sessions:
                running.cancel("session")

    def request_finished(self, running: Running) -> None:
        if (
            running.method.handler == "session_request_permission"
            and running.session_id is not None
        ):
            pending = self._permissions.get(running.session_id)
            if pending is not None:
                pending.discard(running)
                if not pending:
                    del self._permissions[running.session_id]

    def cancelled_result(self, running: Running, result: Any = None) -> bytes | None:
        if running.method.handler != "session_request_permission":
            return None
        known = support(self.schema.module)
        if not known.permission_cancelled:
            known.warn(
                "a cancelled session's permission request is answered like any "
                "cancelled request",
                "its permission outcome has no cancelled variant",
            )
            return None
        meta = getattr(result, "meta", None)
        if isinstance(meta, dict):  # returned normally after the cancel: keep its _meta
            return b'%b,"_meta":%b}' % (
                _CANCELLED_PERMISSION[:-1],
                msgspec.json.encode(meta),
            )
        return _CANCELLED_PERMISSION


#: Builds the client object for one protocol version, given the connection.
ClientFactory: TypeAlias = Callable[[ClientSideConnection[AgentT]], object]
#: What a client offers: one factory (protocol v1) or ``{version: factory}``.
ClientOffer: TypeAlias = ClientFactory[AgentT] | Mapping[int, ClientFactory[AgentT]]
