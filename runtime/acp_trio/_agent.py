"""The agent's end of a connection: serves ``AGENT_METHODS``, calls the client.

An agent is a class per protocol version, built with the connection once
``initialize`` picked the version; it implements the methods it supports
(handler names from the generated ``Agent`` protocol) and reaches the client
through ``conn.client``::

    class EchoAgent:
        def __init__(self, conn: acp_trio.AgentSideConnection) -> None:
            self.client = conn.client

        async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
            return v1.InitializeResponse(protocol_version=1)

        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            await self.client.session_update(v1.SessionNotification(...))
            return v1.PromptResponse(stop_reason="end_turn")

    trio.run(acp_trio.serve_agent_stdio, {1: EchoAgent})

Session rules applied by the runtime: ``session/cancel`` cancels the running
``session/prompt`` handlers of that session (their trio cancel scope), and
the prompt is answered ``stopReason: "cancelled"`` even if the cancellation
surfaced as another exception in the handler; ``session/close`` cancels the
same way before its handler runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import msgspec
import trio

from . import _capabilities
from ._connection import Connection, Handler, PeerProxy, Running, peek_protocol_version
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._schema import MethodSpec, Schema

__all__ = ["AgentFactory", "AgentSideConnection", "Offer"]

log = logging.getLogger("acp_trio")

AgentFactory: TypeAlias = Callable[["AgentSideConnection"], object]
#: What a side offers: one factory (protocol v1) or ``{version: factory}``.
Offer: TypeAlias = Callable[[Any], object] | Mapping[int, Callable[[Any], object]]

_CANCELLED_PROMPT = b'{"stopReason":"cancelled"}'


def normalize_offer(offer: Offer) -> dict[int, Callable[[Any], object]]:
    """``{version: factory}`` from a factory or mapping; checks the versions exist."""
    offers = dict(offer) if isinstance(offer, Mapping) else {1: offer}
    if not offers:
        raise ValueError("offer at least one protocol version")
    for version in offers:
        Schema.load(version, "agent")  # fails early on an unknown version
    return offers


class AgentSideConnection(Connection):
    """The agent's end: negotiates the version, serves the agent object.

    ``client`` calls the client's methods (``conn.client.session_update(...)``);
    ``client_capabilities`` and ``protocol_version`` are known once
    ``initialize`` was answered.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        agents: Offer,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._offers = normalize_offer(agents)
        super().__init__(
            stream,
            Schema.load(max(self._offers), "agent"),
            max_message_size=max_message_size,
        )
        self.client = PeerProxy(self)
        self.agent: object | None = None
        self.protocol_version: int | None = None
        self.client_capabilities: Any = None
        self._prompts: dict[str, set[Running]] = {}

    def _instantiate(self, version: int) -> None:
        if version != self.schema.version:
            self.bind(Schema.load(version, "agent"))
        self.protocol_version = version
        self.agent = self._offers[version](self)
        self.set_handler(self.agent)

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

    def decode_params(
        self, method: MethodSpec, raw: msgspec.Raw | msgspec.UnsetType
    ) -> Any:
        if self.agent is None:
            if method.handler == "initialize" and raw is not msgspec.UNSET:
                self._instantiate(self.negotiate(peek_protocol_version(raw)))
                method = self.schema.incoming[method.name]
            else:
                log.warning(
                    "%s before initialize; speaking v%d", method.name, max(self._offers)
                )
                self._instantiate(max(self._offers))
        params = super().decode_params(method, raw)
        _capabilities.check_incoming(self.schema.version, method.handler, params)
        return params

    def resolve_request(self, method: MethodSpec, params: Any) -> Handler | None:
        handler = super().resolve_request(method, params)
        if handler is None or method.handler != "initialize":
            return handler
        init = handler
        self.client_capabilities = _capabilities.client_capabilities(params)

        async def initialize(p: Any) -> Any:
            response = await init(p)
            if (
                getattr(response, "protocol_version", self.protocol_version)
                != self.protocol_version
            ):
                response = msgspec.structs.replace(
                    response, protocol_version=self.protocol_version
                )
            return response

        return initialize

    def request_started(self, running: Running) -> None:
        handler = running.method.handler
        if running.session_id is None:
            return
        if handler == "session_prompt":
            self._prompts.setdefault(running.session_id, set()).add(running)
        elif handler == "session_close":
            self.cancel_session(running.session_id)

    def request_finished(self, running: Running) -> None:
        if (
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

    def cancelled_result(self, running: Running) -> bytes | None:
        if running.method.handler == "session_prompt":
            return _CANCELLED_PROMPT
        return None

    def notification_received(self, method: MethodSpec, params: Any) -> None:
        if method.handler == "session_cancel":
            self.cancel_session(params.session_id)

    def cancel_session(self, session_id: str) -> None:
        """Cancel every running ``session/prompt`` handler of ``session_id``."""
        for running in list(self._prompts.get(session_id, ())):
            running.cancel("session")

    # -- outgoing ------------------------------------------------------------------

    def check_outgoing(self, method: MethodSpec, params: Any) -> None:
        _capabilities.check_client_call(
            self.schema.version, method.handler, self.client_capabilities
        )
