"""A proxy's end of its conductor connection, without I/O: lines in, actions out.

A proxy (RFD ``proxy-chains``) is written like an agent and a client at
once: handlers for what comes from its predecessor (the agent's methods:
``session_prompt``...), handlers for what comes back from its successor (the
client's: ``session_update``, ``session_request_permission``...), and two
typed peers to send to, ``successor`` and ``predecessor``.  What it has no
handler for is forwarded unchanged (params and results raw: ``_meta`` and
unknown fields kept; a forwarded request keeps its id where it can, so its
answer passes byte for byte).  This module holds the rules; each adapter's
``serve_proxy`` reads, writes and runs the handlers::

    core = ProxyCore(handled={"session/prompt"})
    for action in core.receive(line):
        ...  # Write / Handle / Resolve / CancelHandler, the adapter's way

Rules: ``proxy/initialize`` tells the proxy it has a successor (unhandled:
forwarded as ``initialize`` inside ``proxy/successor``); ``initialize``
makes it a terminal agent, which it cannot be: answered -32600 saying so.
A ``$/cancel_request`` for a forwarded request is sent on under the id used
for it (hop-local); for a handled one, the adapter cancels the handler.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from ._errors import INTERNAL_ERROR, INVALID_REQUEST, REQUEST_CANCELLED, RequestError
from ._jsonrpc import (
    Envelope,
    Id,
    InvalidMessage,
    decode_envelope,
    encode_error,
    encode_id,
)
from ._limits import Limits

if TYPE_CHECKING:
    from acp_schema.v1 import AgentUnstable, ClientUnstable

from ._successor import (
    CANCEL_REQUEST,
    PROXY_INITIALIZE,
    SUCCESSOR,
    HopIds,
    plain_notification,
    plain_request,
    response_line,
    unwrap_successor,
    wrap_notification,
    wrap_request,
)

__all__ = [
    "FROM_PREDECESSOR",
    "FROM_SUCCESSOR",
    "CancelHandler",
    "Handle",
    "ProxyCore",
    "Resolve",
    "TypedPeer",
    "Write",
]

#: Where a message came from (``Handle.origin``) or goes (:meth:`ProxyCore.call`).
FROM_PREDECESSOR: Final = "predecessor"
FROM_SUCCESSOR: Final = "successor"

#: MCP-over-ACP's one method (a request from the consumer, a notification back).
MCP_MESSAGE: Final = "mcp/message"

TERMINAL_MESSAGE: Final = (
    "this component is a proxy: it needs a successor, so it is initialized with "
    "proxy/initialize by a conductor (python -m acp_conductor), not with initialize"
)

log = logging.getLogger("acp_core.proxy")
_DEFAULT_MAX_HANDLING = Limits().max_concurrent_requests


@dataclass(frozen=True, slots=True)
class Write:
    """A line to write to the conductor."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Handle:
    """Run the proxy's handler of ``method`` (``ident`` UNSET: a notification)."""

    origin: str
    method: str
    ident: Id | msgspec.UnsetType
    params: msgspec.Raw | None


@dataclass(frozen=True, slots=True)
class Resolve:
    """The answer to the proxy's own call ``ident``: a raw result or a :class:`RequestError`."""

    ident: Id
    result: msgspec.Raw | None
    error: RequestError | None


@dataclass(frozen=True, slots=True)
class CancelHandler:
    """``$/cancel_request`` for the handled request ``ident``: cancel its handler."""

    ident: Id


Action = Write | Handle | Resolve | CancelHandler


@dataclass(slots=True)
class _Forward:
    answer_to: Id  # the id the request came with


class _ErrorBody(msgspec.Struct):
    code: int
    message: str
    data: Any = None


_error_decoder = msgspec.json.Decoder(_ErrorBody)


class ProxyCore:
    """The routing state of one proxy: its calls, what it forwarded, its role.

    ``handled``: what the proxy has a handler for: a wire name (either
    direction) or an ``(origin, wire name)`` pair (that direction only: the
    adapters pass pairs, since ``mcp/message`` is a request from the successor
    and a notification from the predecessor); everything else is forwarded.
    A handled request is finished by :meth:`answer` or :meth:`answer_error`.
    """

    def __init__(
        self,
        handled: Collection[str | tuple[str, str]],
        max_handling: int = _DEFAULT_MAX_HANDLING,
    ) -> None:
        self.handled = frozenset(handled)
        #: handled requests running at once past which one is refused -32603
        #: (``Limits.max_concurrent_requests``): a proxy's handler mostly waits
        #: for its successor, whose answer may be behind the requests waiting
        self.max_handling = max_handling
        self._handling: set[Id] = set()
        self.ids = HopIds()
        self._forwards: dict[Id, _Forward] = {}
        self._by_origin: dict[Id, Id] = {}  # the id we were asked with -> ours
        self._calls: set[Id] = set()
        #: ``proxy/initialize`` came: the proxy has a successor
        self.has_successor = False

    def receive(self, data: bytes) -> list[Action]:
        """The actions for one line read from the conductor."""
        try:
            env = decode_envelope(data)
        except InvalidMessage as exc:
            if exc.response:
                return []
            return [Write(encode_error(encode_id(exc.ident), exc.code, exc.message))]
        method = env.method
        if method is msgspec.UNSET:
            return self._response(env, data)
        params = None if env.params is msgspec.UNSET else env.params
        if method == CANCEL_REQUEST:
            return self._cancel(params)
        if method == "initialize" and env.id is not msgspec.UNSET:
            return [
                Write(
                    encode_error(encode_id(env.id), INVALID_REQUEST, TERMINAL_MESSAGE)
                )
            ]
        if method == SUCCESSOR:
            try:
                inner = unwrap_successor(env.params)
            except RequestError as exc:
                if env.id is msgspec.UNSET:
                    return []
                return [Write(encode_error(encode_id(env.id), exc.code, exc.message))]
            return self._route(FROM_SUCCESSOR, inner.method, env, inner.params)
        if method == PROXY_INITIALIZE:
            self.has_successor = True
        return self._route(FROM_PREDECESSOR, method, env, params)

    def _route(
        self, origin: str, method: str, env: Envelope, params: msgspec.Raw | None
    ) -> list[Action]:
        if method in self.handled or (origin, method) in self.handled:
            ident = env.id
            if ident is not msgspec.UNSET:
                if len(self._handling) >= self.max_handling:
                    return [Write(self._too_many(ident))]
                self._handling.add(ident)
            return [Handle(origin, method, ident, params)]
        if method == PROXY_INITIALIZE:
            method = "initialize"  # unhandled: forwarded as the successor's initialize
        if env.id is msgspec.UNSET:
            if origin == FROM_PREDECESSOR:
                return [Write(wrap_notification(method, params))]
            return [Write(plain_notification(method, params))]
        ours = self.ids.take(env.id)
        self._forwards[ours] = _Forward(env.id)
        self._by_origin[env.id] = ours
        if origin == FROM_PREDECESSOR:
            return [Write(wrap_request(encode_id(ours), method, params))]
        return [Write(plain_request(encode_id(ours), method, params))]

    def _response(self, env: Envelope, data: bytes) -> list[Action]:
        ident = env.id
        if ident is msgspec.UNSET:
            return []
        forward = self._forwards.pop(ident, None)
        if forward is not None:
            self.ids.release(ident)
            self._by_origin.pop(forward.answer_to, None)
            if forward.answer_to == ident:
                return [Write(data + b"\n")]
            result = None if env.result is msgspec.UNSET else env.result
            error = None if env.error is msgspec.UNSET else env.error
            return [Write(response_line(encode_id(forward.answer_to), result, error))]
        if ident in self._calls:
            self._calls.discard(ident)
            self.ids.release(ident)
            if env.error is not msgspec.UNSET:
                try:
                    body = _error_decoder.decode(env.error)
                    failure = RequestError(body.code, body.message, body.data)
                except msgspec.MsgspecError as exc:
                    failure = RequestError(
                        INVALID_REQUEST, f"Invalid error object: {exc}"
                    )
                return [Resolve(ident, None, failure)]
            result = None if env.result is msgspec.UNSET else env.result
            return [Resolve(ident, result, None)]
        return []

    def _cancel(self, params: msgspec.Raw | None) -> list[Action]:
        try:
            target = _cancel_decoder.decode(params or b"{}").request_id
        except msgspec.MsgspecError:
            return []
        ours = self._by_origin.get(target)
        if ours is not None:  # forwarded: cancelled on, under our id (hop-local)
            return [
                Write(
                    plain_notification(
                        CANCEL_REQUEST, b'{"requestId":%b}' % encode_id(ours)
                    )
                )
            ]
        return [CancelHandler(target)]

    # -- what the proxy sends of its own -------------------------------------------

    def call(self, to: str, method: str, params: bytes | None) -> tuple[Id, bytes]:
        """A request of the proxy's to its ``successor`` or ``predecessor``:
        its id (awaited in a :class:`Resolve`) and its line."""
        ours = self.ids.take()
        self._calls.add(ours)
        if to == FROM_SUCCESSOR:
            return ours, wrap_request(encode_id(ours), method, params)
        return ours, plain_request(encode_id(ours), method, params)

    def abandon(self, ident: Id) -> bytes | None:
        """The caller of ``ident`` left before its answer: the ``$/cancel_request`` to write."""
        if ident not in self._calls:
            return None
        self._calls.discard(ident)
        return plain_notification(
            CANCEL_REQUEST, b'{"requestId":%b}' % encode_id(ident)
        )

    def notify(self, to: str, method: str, params: bytes | None) -> bytes:
        """A notification of the proxy's to its ``successor`` or ``predecessor``."""
        if to == FROM_SUCCESSOR:
            return wrap_notification(method, params)
        return plain_notification(method, params)

    def answer(self, ident: Id, result: bytes) -> bytes:
        """The answer line of a handled request (which is then finished)."""
        self._handling.discard(ident)
        return response_line(encode_id(ident), result)

    def answer_error(self, ident: Id, error: RequestError) -> bytes:
        """The error line of a handled request (which is then finished)."""
        self._handling.discard(ident)
        return encode_error(
            encode_id(ident), error.code, str(error.message), error.data
        )

    # -- a handled message's outcome (the same on every adapter) ------------------

    @staticmethod
    def params_of(action: Handle, handler: ProxyHandler, schema: Any) -> Any:
        """The typed params of handled ``action`` (raises as the schema does)."""
        raw = bytes(action.params) if action.params is not None else b"{}"
        return schema.decode(raw, handler.method.params)

    def returned(self, action: Handle, result: Any, schema: Any) -> bytes | None:
        """The line answering handled ``action`` whose handler returned
        ``result`` (``None``: a notification, nothing to answer)."""
        if not isinstance(action.ident, (int, str)):
            return None
        return self.answer(action.ident, schema.encode(result))

    def failed(self, action: Handle, exc: BaseException | None) -> bytes | None:
        """The error line of handled ``action`` whose handler raised ``exc``
        (``None``: it was cancelled by ``$/cancel_request``): a
        :class:`RequestError` as it says, anything else logged and answered
        -32603 without its text; ``None`` for a notification."""
        if exc is None:
            error = RequestError(REQUEST_CANCELLED, "Request cancelled")
        elif isinstance(exc, RequestError):
            error = exc
        else:
            log.error("the proxy's %s handler failed", action.method, exc_info=exc)
            error = RequestError(
                INTERNAL_ERROR, f"Internal error: {type(exc).__name__}"
            )
        if not isinstance(action.ident, (int, str)):
            return None
        return self.answer_error(action.ident, error)

    def _too_many(self, ident: Id) -> bytes:
        log.warning("refused a request: %d handled requests running", self.max_handling)
        return encode_error(
            encode_id(ident),
            INTERNAL_ERROR,
            "Too many concurrent requests",
            {"maxConcurrentRequests": self.max_handling},
        )


class _CancelParams(msgspec.Struct):
    request_id: Id = msgspec.field(default=None, name="requestId")


_cancel_decoder = msgspec.json.Decoder(_CancelParams)


class TypedPeer:
    """``proxy.successor.session_prompt(params)``: a typed call by handler name.

    ``table`` is the method table of the other side's methods (wire name ->
    the generated ``Method``); ``send(method, params_bytes, is_request)`` is
    the adapter's: it awaits the raw result of a request.  Results are
    decoded into the method's result type by the schema module ``schema``.
    """

    def __init__(
        self,
        table: dict[str, Any],
        schema: Any,
        send: Callable[[str, bytes, bool], Any],
        forward: Callable[[str, bytes | None, bool], Any],
    ) -> None:
        self._by_handler = {m.handler: m for m in table.values()}
        self._schema = schema
        self._send = send
        self._forward = forward

    def __getattr__(self, name: str) -> Callable[[Any], Any]:
        if name.startswith("__"):
            raise AttributeError(name)
        method = self._by_handler.get(name)
        if method is None:
            raise AttributeError(f"the peer has no method {name!r}")
        schema, send = self._schema, self._send

        async def call(params: Any) -> Any:
            body = schema.encode(params)
            form = getattr(method, "notification", None)
            if method.result is None or (form is not None and isinstance(params, form)):
                await send(method.name, body, False)
                return None
            raw = await send(method.name, body, True)
            return schema.decode(
                bytes(raw) if raw is not None else b"null", method.result
            )

        self.__dict__[name] = call
        return call

    async def forward(
        self, method: str, params: bytes | None, *, request: bool = True
    ) -> Any:
        """Send ``method`` with raw ``params`` bytes; a request's raw result (``msgspec.Raw``)."""
        return await self._forward(method, params, request)


@dataclass(frozen=True, slots=True)
class ProxyHandler:
    """One handler of a proxy: the bound method and the generated ``Method``."""

    call: Callable[[Any], Any]
    method: Any  # acp_schema's Method: name, params, result, handler

    @property
    def is_request_method(self) -> bool:
        return self.method.result is not None


class Proxy:
    """The base of a proxy: define the handlers you need, by handler name.

    From the predecessor (the client's side): the agent's methods
    (``session_prompt``, ``session_new``, ``proxy_initialize``...); from the
    successor (the agent's side): the client's methods (``session_update``,
    ``session_request_permission``, ``fs_read_text_file``...).  Typed by the
    schema's unstable surface of v1 (``acp_schema.v1_unstable``).  Inside a
    handler, ``self.successor`` and ``self.predecessor`` send on
    (``await self.successor.session_prompt(params)``); whatever has no
    handler is forwarded unchanged.
    """

    #: The next component's methods, typed: ``acp_schema.v1.AgentUnstable``
    #: (a :class:`TypedPeer` underneath).
    successor: AgentUnstable
    #: The previous component's methods: ``acp_schema.v1.ClientUnstable``.
    predecessor: ClientUnstable


def attach_peers(proxy: Proxy, successor: TypedPeer, predecessor: TypedPeer) -> None:
    """Give ``proxy`` its two peers (an adapter's, once its connection exists):
    typed for the proxy's author as the schema's Protocols."""
    proxy.successor = cast("AgentUnstable", successor)
    proxy.predecessor = cast("ClientUnstable", predecessor)


def proxy_schema() -> Any:
    """The schema module proxies speak (v1's unstable surface: ``proxy/*``, ``mcp/message``)."""
    import importlib

    return importlib.import_module("acp_schema.v1_unstable")


def proxy_handlers(proxy: object, schema: Any) -> dict[tuple[str, str], ProxyHandler]:
    """The handlers ``proxy`` defines, by (origin, wire name).

    ``mcp_message`` is the successor's ``mcp/message`` request (the agent
    calling a server this proxy offers: ``acp_mcp.McpProvider.answer``); the
    notification of that name from the predecessor (a server upstream
    notifying the agent) is always forwarded."""
    found: dict[tuple[str, str], ProxyHandler] = {}
    tables = (
        (FROM_PREDECESSOR, {**schema.AGENT_METHODS, **schema.PROXY_METHODS}),
        (FROM_SUCCESSOR, schema.CLIENT_METHODS),
    )
    for origin, table in tables:
        for name, method in table.items():
            if name == SUCCESSOR or (origin, name) == (FROM_PREDECESSOR, MCP_MESSAGE):
                continue
            fn = getattr(proxy, method.handler, None)
            if callable(fn):
                found[(origin, name)] = ProxyHandler(fn, method)
    return found
