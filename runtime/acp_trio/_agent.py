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
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeAlias, TypeVar, cast

import msgspec
import trio
from acp_core import _capabilities, _handlers
from acp_core._errors import (
    INVALID_REQUEST,
    RequestError,
    not_initialized,
)
from acp_core._limits import Limits
from acp_core._schema import MethodSpec, Schema
from acp_core._support import support

from ._connection import Connection, Handler, PeerProxy, Running, peek_protocol_version

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

_CANCELLED_PROMPT: Final = b'{"stopReason":"cancelled"}'
_INITIALIZE: Final = "initialize"


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
    ``protocol_version`` are known once ``initialize`` was received.
    """

    # Requests pipelined behind initialize are refused until it was answered,
    # so its answer must wait until the rest of its chunk was read.
    NOT_INLINE = frozenset({_INITIALIZE})

    def __init__(
        self,
        stream: trio.abc.Stream,
        agents: AgentOffer[ClientT],
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
    ) -> None:
        self._unstable = unstable
        self._offers = normalize_offer(agents, unstable=unstable)
        super().__init__(
            stream,
            Schema.load(max(self._offers), "agent", unstable=unstable),
            limits=limits,
            max_message_size=max_message_size,
        )
        self._client = PeerProxy(self)
        self.agent: object | None = None
        self.protocol_version: int | None = None
        self.client_capabilities: Any = None
        self._prompts: dict[str, set[Running]] = {}
        #: ``waiting`` for ``initialize``, its handler ``running``, or ``done``.
        self.init_state: Literal["waiting", "running", "done"] = "waiting"

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

    def _instantiate(self, version: int) -> None:
        self.protocol_version = version
        self.agent = self._offers[version](self)
        self.set_handler(self.agent)
        self.init_state = "running"

    def _reset(self) -> None:
        """Back to waiting for ``initialize`` (the last one failed)."""
        self.init_state = "waiting"
        self.agent = None
        self.protocol_version = None
        self.client_capabilities = None
        self.set_handler(None)

    def negotiate(self, requested: Any) -> int:
        """The spec's rule: the requested version if offered, else our latest."""
        if (
            isinstance(requested, int)
            and not isinstance(requested, bool)
            and requested in self._offers
        ):
            return requested
        return max(self._offers)

    # -- incoming --------------------------------------------------------------------

    def refuse(self, name: str, request: bool) -> RequestError | None:
        state = self.init_state
        if name == _INITIALIZE and request:
            if state == "waiting":
                return None
            reason = (
                "already initialized" if state == "done" else "initialize in progress"
            )
            return RequestError(INVALID_REQUEST, f"Invalid request: {reason}")
        if state == "done" or (state == "running" and not request):
            return None
        return not_initialized(name, "send initialize first")

    def decode_params(
        self,
        method: MethodSpec,
        raw: msgspec.Raw | msgspec.UnsetType,
        *,
        notification: bool = False,
    ) -> Any:
        if method.handler == "initialize" and self.init_state == "waiting":
            version = self.negotiate(
                None if raw is msgspec.UNSET else peek_protocol_version(raw)
            )
            if version != self.schema.version:
                self.bind(Schema.load(version, "agent", unstable=self._unstable))
            method = self.schema.incoming[method.name]
            params = super().decode_params(method, raw)
            self._instantiate(version)
            return params
        return super().decode_params(method, raw, notification=notification)

    def resolve_request(self, method: MethodSpec, params: Any) -> Handler | None:
        handler = super().resolve_request(method, params)
        if method.handler != "initialize":
            return handler
        if handler is None:
            self._reset()
            return None
        init = handler
        self.client_capabilities = _capabilities.client_capabilities(params)

        async def initialize(p: Any) -> Any:
            # checked here: an answer that is not sent must not end initialization
            response = _handlers.checked_result(method, await init(p))
            if (
                getattr(response, "protocol_version", self.protocol_version)
                != self.protocol_version
            ):
                response = msgspec.structs.replace(
                    response, protocol_version=self.protocol_version
                )
            self.init_state = "done"
            return response

        return initialize

    def request_received(self, running: Running) -> None:
        handler = running.method.handler
        if running.session_id is None:
            return
        if handler == "session_prompt":
            self._prompts.setdefault(running.session_id, set()).add(running)
        elif handler == "session_close":
            self.cancel_session(running.session_id)

    def request_finished(self, running: Running) -> None:
        if running.method.handler == "initialize" and self.init_state != "done":
            self._reset()  # failed or cancelled: initialize may be sent again
        elif (
            running.method.handler == "session_prompt"
            and running.session_id is not None
        ):
            prompts = self._prompts.get(running.session_id)
            if prompts is not None:
                prompts.discard(running)
                if not prompts:
                    del self._prompts[running.session_id]
        elif (
            running.method.handler == "session_close" and running.session_id is not None
        ):
            self._prompts.pop(running.session_id, None)

    def cancelled_result(self, running: Running, result: Any = None) -> bytes | None:
        if running.method.handler != "session_prompt":
            return None
        known = support(self.schema.module)
        if not known.prompt_stop_reason:
            known.warn(
                "a cancelled session/prompt is answered like any cancelled request",
                "its session/prompt result has no stopReason",
            )
            return None
        if isinstance(result, msgspec.Struct) and hasattr(result, "stop_reason"):
            # returned normally after the cancel: keep its other fields (_meta, usage)
            return self.schema.encode(
                msgspec.structs.replace(result, stop_reason="cancelled")
            )
        return _CANCELLED_PROMPT

    def notification_received(self, method: MethodSpec, params: Any) -> None:
        if method.handler == "session_cancel":
            self.cancel_session(params.session_id)

    def cancel_session(self, session_id: str) -> None:
        """Cancel every running ``session/prompt`` handler of ``session_id``."""
        for running in list(self._prompts.get(session_id, ())):
            running.cancel("session")

    # -- outgoing ------------------------------------------------------------------

    def check_outgoing(self, method: MethodSpec, params: Any) -> None:
        if method.handler in _capabilities.CLIENT_CHECKED:
            _capabilities.check_client_call(
                self.schema.version, method.handler, params, self.client_capabilities
            )


#: Builds the agent object for one protocol version, given the connection.
AgentFactory: TypeAlias = Callable[[AgentSideConnection[ClientT]], object]
#: What an agent offers: one factory (protocol v1) or ``{version: factory}``.
AgentOffer: TypeAlias = AgentFactory[ClientT] | Mapping[int, AgentFactory[ClientT]]
