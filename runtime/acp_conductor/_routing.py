"""The conductor's routing rules, without I/O: a line from one hop in, lines to hops out.

The hops of a chain: the client (:data:`CLIENT`, the conductor's own
predecessor) and the components ``0 .. n-1`` in chain order; the last is the
agent, unless the conductor runs in proxy mode (no agent: the last
component's successor is the conductor's own, reached through the client
connection wrapped in ``proxy/successor``).  The rules (RFD
``proxy-chains``, schema 2.4.0's ``ProxySuccessorRequest``):

| from | message | goes to |
|---|---|---|
| client | any request or notification | component 0, plain (``initialize`` becomes ``proxy/initialize`` for a proxy) |
| client (proxy mode) | ``proxy/successor`` | the last component, wrapped (it came from our successor) |
| component k | ``proxy/successor`` | k+1 plain, unwrapped (the last, in proxy mode: the client, wrapped) |
| component k | anything else | k-1 wrapped in ``proxy/successor``; the client (k = 0) plain |
| the agent | ``proxy/successor`` | answered -32601: the agent has no successor |
| any hop | a response | the hop and id the request came from (a ``proxy/successor`` request's answer is the wrapped request's, unchanged) |
| any hop | ``$/cancel_request`` | the hop its request went to, under the id used there (hop-local: never wrapped) |
| any hop | ``mcp/message`` | the hop that offered its server, or the hop its request came from (:mod:`._mcp_routes`) |

A forwarded request keeps its id when it is free on the target hop
(:class:`acp_core.HopIds`), so a line that is neither wrapped nor unwrapped,
and its answer, pass byte for byte.  A batch is split and its members routed
one by one; the answers to a batch's requests go back as one array.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec
from acp_core import (
    CANCEL_REQUEST,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROXY_INITIALIZE,
    SUCCESSOR,
    BatchTooLong,
    Envelope,
    HopIds,
    Id,
    InvalidMessage,
    Limits,
    LogThrottle,
    Oversized,
    RequestError,
    decode_envelope,
    encode_error,
    encode_id,
    judge_oversized,
    plain_notification,
    plain_request,
    response_line,
    sniff_oversized,
    split_batch,
    unwrap_successor,
    wrap_notification,
    wrap_request,
)

from ._mcp_routes import (
    MCP_MESSAGE,
    SERVER_UNAVAILABLE,
    SESSION_SETUP,
    BridgeCommand,
    McpRoutes,
    decode_address,
)

__all__ = ["BRIDGE", "CLIENT", "ChainFailure", "Router", "Send"]

log = logging.getLogger("acp_conductor")

#: The client's hop (the conductor's predecessor; in proxy mode also the
#: way to the conductor's successor).
CLIENT: Final = -1
#: The conductor's MCP bridge (:mod:`._mcp_bridge`): sends ``mcp/message``
#: requests for the agent's stdio MCP clients.
BRIDGE: Final = -2
#: The error code of the conductor's own errors (a component exited, an
#: invalid answer): JSON-RPC's internal error.
CHAIN_ERROR: Final = INTERNAL_ERROR

_KEEP = 4096


@dataclass(frozen=True, slots=True)
class Send:
    """One line for one hop (``data`` ends with a newline)."""

    hop: int
    data: bytes


@dataclass(frozen=True, slots=True)
class ChainFailure:
    """Why the chain must end (told to the client as the error of every
    request it is still waiting for)."""

    message: str


@dataclass(slots=True)
class _Origin:
    """Where a forwarded request came from, and what was sent for it."""

    hop: int
    ident: Id
    method: str  # the method as sent to the target
    mcp: tuple[str, str] | None = None  # an mcp/message request's (server, request)


@dataclass(slots=True)
class _Batch:
    """A batch's answers, collected until the last one came."""

    hop: int
    waiting: set[Id]
    answers: list[bytes] = field(default_factory=list[bytes])
    complete: bool = False  # every member was routed


class Router:
    """The routing state of one chain: what each hop was asked and by whom.

    :meth:`receive` takes one line (or an :class:`~acp_core.Oversized` record)
    from one hop and returns the lines to write, each to its hop, in order.
    :meth:`fail_chain` gives the errors owed to the client when the chain ends.
    """

    def __init__(
        self,
        names: Sequence[str],
        *,
        has_agent: bool = True,
        limits: Limits | None = None,
        bridge_command: BridgeCommand | None = None,
    ) -> None:
        if not names:
            raise ValueError("a chain needs at least one component")
        self.names: tuple[str, ...] = tuple(names)
        self.n = len(self.names)
        self.proxy_mode = not has_agent
        self.limits = limits or Limits()
        hops = range(BRIDGE, self.n)
        self._ids: dict[int, HopIds] = {h: HopIds() for h in hops}
        # per target hop: our id there -> where the request came from
        self._pending: dict[int, dict[Id, _Origin]] = {h: {} for h in hops}
        #: the MCP servers offered in the chain (``bridge_command``: how the
        #: agent reaches one through the bridge, when it needs to)
        self.mcp = McpRoutes(None if self.proxy_mode else bridge_command)
        # (origin hop, origin id) -> (target hop, our id), for $/cancel_request
        self._forwarded: dict[tuple[int, Id], tuple[int, Id]] = {}
        self._batches: dict[tuple[int, Id], _Batch] = {}
        #: proxies that forwarded ``initialize`` to their successor
        self.initialized_successor: set[int] = set()
        #: the client's initialize was answered (the conductor's watch on a
        #: chain that never answers it stops)
        self.client_initialized = False
        self.client_initialize_sent = False
        self._out: list[Send] = []
        # a flood of bad lines must not flood the log: one throttle per hop
        self._warnings = {h: LogThrottle() for h in hops}

    # -- names and roles ------------------------------------------------------

    def name(self, hop: int) -> str:
        """The hop's name in messages (``client`` or the component's)."""
        if hop < 0:
            return "client" if hop == CLIENT else "the MCP bridge"
        return self.names[hop]

    def is_proxy(self, hop: int) -> bool:
        """Whether component ``hop`` has a successor (gets ``proxy/initialize``)."""
        return hop >= 0 and (hop < self.n - 1 or self.proxy_mode)

    def pending(self, hop: int) -> int:
        """How many forwarded requests wait for ``hop``'s answer."""
        return len(self._pending[hop])

    # -- input ------------------------------------------------------------------

    def receive(self, hop: int, line: bytes | Oversized) -> list[Send]:
        """Route one line read from ``hop``; the lines to write."""
        self._out = out = list[Send]()
        if isinstance(line, Oversized):
            self._oversized(hop, line)
        elif line.lstrip()[:1] == b"[":
            self._batch(hop, line)
        else:
            self._line(hop, line)
        return out

    def fail_chain(self, failure: ChainFailure) -> list[Send]:
        """The chain ends: every request the client still waits for is
        answered with ``failure`` (a batch's members too); nothing else is owed."""
        self._out = out = list[Send]()
        for table in self._pending.values():
            for origin in list(table.values()):
                if origin.hop == CLIENT:
                    self._to_origin(origin, self._error(origin.ident, failure.message))
            table.clear()
        self._forwarded.clear()
        return out

    # -- one line -----------------------------------------------------------------

    def _line(self, hop: int, data: bytes) -> None:
        try:
            env = decode_envelope(data)
        except InvalidMessage as exc:
            self._invalid(hop, data, exc)
            return
        if env.method is msgspec.UNSET:
            self._response(hop, data, env)
            return
        method = env.method
        if method == CANCEL_REQUEST:
            self._cancel(hop, env)
        elif method == MCP_MESSAGE and hop != CLIENT and env.id is not msgspec.UNSET:
            self._mcp_request(hop, env, data)
        elif hop == BRIDGE:
            self._refuse(
                hop, env, METHOD_NOT_FOUND, "the bridge sends mcp/message only"
            )
        elif method == SUCCESSOR:
            self._from_successor_envelope(hop, env)
        elif hop == CLIENT:
            self._down(CLIENT, env, method, env.params, data)
        else:
            self._up(hop, env, method, env.params, data, wrapped_in=False)

    def _from_successor_envelope(self, hop: int, env: Envelope) -> None:
        """A ``proxy/successor`` from ``hop``: a proxy's message for its
        successor, or (proxy mode) our successor's message from the client."""
        is_request = env.id is not msgspec.UNSET
        if (hop == CLIENT and not self.proxy_mode) or (
            hop == self.n - 1 and not self.proxy_mode
        ):
            who = "the conductor's client" if hop == CLIENT else "the agent"
            self._refuse(
                hop,
                env,
                METHOD_NOT_FOUND,
                f"Method not found: proxy/successor ({who} has no successor here)",
            )
            return
        try:
            inner = unwrap_successor(env.params)
        except RequestError as exc:
            self._refuse(hop, env, exc.code, str(exc.message))
            return
        if inner.method == CANCEL_REQUEST:
            log.warning(
                "%s wrapped a $/cancel_request: cancellation is hop-local, dropped",
                self.name(hop),
            )
            return
        if hop == CLIENT:  # from our successor, through our parent: up to the last
            self._up(self.n, env, inner.method, inner.params, None, wrapped_in=True)
        else:
            if inner.method == "initialize" and is_request:
                self.initialized_successor.add(hop)
            self._down(hop, env, inner.method, inner.params, None)

    def _refuse(self, hop: int, env: Envelope, code: int, message: str) -> None:
        if env.id is not msgspec.UNSET:
            self._to_origin(
                _Origin(hop, env.id, ""), encode_error(encode_id(env.id), code, message)
            )
        else:
            log.warning("%s: %s (a notification, dropped)", self.name(hop), message)

    # -- requests and notifications -------------------------------------------------

    def _down(
        self,
        hop: int,
        env: Envelope,
        method: str,
        params: msgspec.Raw | msgspec.UnsetType | None,
        data: bytes | None,
    ) -> None:
        """From ``hop`` to its successor (from the client: to component 0)."""
        target = hop + 1
        if hop == CLIENT:
            wrong = (
                "initialize"
                if self.proxy_mode and method == "initialize"
                else PROXY_INITIALIZE
                if not self.proxy_mode and method == PROXY_INITIALIZE
                else None
            )
            if wrong is not None:
                self._refuse(
                    hop,
                    env,
                    INVALID_REQUEST,
                    "this conductor runs a chain of proxies without an agent: it needs proxy/initialize"
                    if self.proxy_mode
                    else "this conductor's chain ends in an agent: it is a terminal agent, initialize it with initialize",
                )
                return
        if (
            hop == CLIENT
            and env.id is not msgspec.UNSET
            and method in ("initialize", PROXY_INITIALIZE)
        ):
            self.client_initialize_sent = True
        if method == MCP_MESSAGE and env.id is msgspec.UNSET:
            if self._mcp_notification(hop, params):
                return
        elif method in SESSION_SETUP and env.id is not msgspec.UNSET:
            raw = None if params is msgspec.UNSET else params
            rewritten = self.mcp.session_setup(
                hop, raw, to_agent=not self.proxy_mode and target == self.n - 1
            ).params
            if rewritten is not None:
                params, data = rewritten, None
        if target == self.n:  # proxy mode: past our last component, to our successor
            self._forward(hop, CLIENT, env, method, params, None, wrap=True)
            return
        if method == "initialize" and self.is_proxy(target):
            method, data = PROXY_INITIALIZE, None
        elif method == PROXY_INITIALIZE and not self.is_proxy(target):
            method, data = "initialize", None
        self._forward(hop, target, env, method, params, data, wrap=False)

    def _up(
        self,
        hop: int,
        env: Envelope,
        method: str,
        params: msgspec.Raw | msgspec.UnsetType | None,
        data: bytes | None,
        *,
        wrapped_in: bool,
    ) -> None:
        """From component ``hop`` to its predecessor (``hop == n``: from our
        successor, through the client, to the last component)."""
        target = hop - 1
        source = CLIENT if wrapped_in else hop
        self._forward(source, target, env, method, params, data, wrap=target != CLIENT)

    def _forward(
        self,
        source: int,
        target: int,
        env: Envelope,
        method: str,
        params: msgspec.Raw | msgspec.UnsetType | None,
        data: bytes | None,
        *,
        wrap: bool,
    ) -> None:
        raw = None if params is msgspec.UNSET else params
        if env.id is msgspec.UNSET:  # a notification
            if wrap:
                line = wrap_notification(method, raw)
            elif data is not None:
                line = data + b"\n"
            else:
                line = plain_notification(method, raw)
            self._send(target, line)
            return
        ours = self._ids[target].take(env.id)
        self._pending[target][ours] = _Origin(source, env.id, method)
        self._forwarded[(source, env.id)] = (target, ours)
        ident = encode_id(ours)
        if wrap:
            line = wrap_request(ident, method, raw)
        elif data is not None and ours == env.id:
            line = data + b"\n"
        else:
            line = plain_request(ident, method, raw)
        self._send(target, line)

    def _cancel(self, hop: int, env: Envelope) -> None:
        """``$/cancel_request`` from ``hop``: to where that request went, under our id there."""
        request_id = _request_id(env.params)
        where = (
            self._forwarded.get((hop, request_id)) if request_id is not None else None
        )
        if where is None:
            return  # answered already, or never forwarded: nothing to cancel
        target, ours = where
        self._send(
            target,
            plain_notification(CANCEL_REQUEST, b'{"requestId":%b}' % encode_id(ours)),
        )

    # -- MCP-over-ACP -------------------------------------------------------------------

    def _mcp_request(self, hop: int, env: Envelope, data: bytes) -> None:
        """An ``mcp/message`` request: to the hop that offered its server."""
        address = decode_address(env.params)
        if address is None:
            self._refuse(
                hop,
                env,
                INVALID_PARAMS,
                "Invalid params: mcp/message needs serverId, requestId and method",
            )
            return
        provider = self.mcp.provider(address)
        if provider is None:
            if self.proxy_mode and hop >= 0:  # maybe offered above us: on up
                self._up(hop, env, MCP_MESSAGE, env.params, data, wrapped_in=False)
                return
            self._refuse(
                hop,
                env,
                SERVER_UNAVAILABLE,
                f"MCP server unavailable: no component offered serverId {address.server_id[:200]!r}",
            )
            return
        key = self.mcp.begin(address, hop)
        plain = provider == CLIENT  # a proxy gets it from its successor's side
        self._forward(
            hop,
            provider,
            env,
            MCP_MESSAGE,
            env.params,
            data if plain else None,
            wrap=not plain,
        )
        if key is not None and env.id is not msgspec.UNSET:
            target, ours = self._forwarded[(hop, env.id)]
            self._pending[target][ours].mcp = key

    def _mcp_notification(
        self, hop: int, params: msgspec.Raw | msgspec.UnsetType | None
    ) -> bool:
        """A provider's ``mcp/message`` notification: to its request's
        consumer (``False``: not ours to route, on down as any notification)."""
        address = decode_address(params)
        consumer = None if address is None else self.mcp.consumer(address)
        if consumer is None:
            return False
        raw = None if params is msgspec.UNSET else params
        self._send(consumer, plain_notification(MCP_MESSAGE, raw))
        return True

    # -- answers ------------------------------------------------------------------------

    def _response(self, hop: int, data: bytes, env: Envelope) -> None:
        ident = env.id
        origin = self._take(hop, ident)
        if origin is None:
            log.warning(
                "%s answered id %r, which no request of the chain is waiting on",
                self.name(hop),
                ident,
            )
            return
        if origin.hop == CLIENT and origin.method in ("initialize", PROXY_INITIALIZE):
            self.client_initialized = True
        if origin.mcp is not None:
            self.mcp.end(origin.mcp)
        if (
            origin.method == "initialize"
            and hop == self.n - 1
            and not self.proxy_mode
            and env.error is msgspec.UNSET
        ):
            advertised = self.mcp.initialized(env.result)
            if advertised is not None:
                self._to_origin(
                    origin, response_line(encode_id(origin.ident), advertised)
                )
                return
        if (
            origin.method == PROXY_INITIALIZE
            and env.error is msgspec.UNSET
            and hop != CLIENT
            and hop not in self.initialized_successor
        ):
            # the schema: a proxy MUST initialize its successor before answering
            self._to_origin(
                origin,
                self._error(
                    origin.ident,
                    f"{self.name(hop)} answered proxy/initialize without initializing its successor",
                ),
            )
            return
        if origin.ident == ident:
            line = data + b"\n"
        else:
            result = None if env.result is msgspec.UNSET else env.result
            error = None if env.error is msgspec.UNSET else env.error
            line = response_line(encode_id(origin.ident), result, error)
        self._to_origin(origin, line)

    def _take(self, hop: int, ident: Id | msgspec.UnsetType) -> _Origin | None:
        if ident is msgspec.UNSET:
            return None
        origin = self._pending[hop].pop(ident, None)
        if origin is not None:
            self._ids[hop].release(ident)
            self._forwarded.pop((origin.hop, origin.ident), None)
        return origin

    def _to_origin(self, origin: _Origin, line: bytes) -> None:
        batch = self._batches.pop((origin.hop, origin.ident), None)
        if batch is None:
            self._send(origin.hop, line)
            return
        batch.waiting.discard(origin.ident)
        batch.answers.append(line.rstrip(b"\n"))
        if batch.complete and not batch.waiting:
            self._send(batch.hop, b"[" + b",".join(batch.answers) + b"]\n")

    def _fail_call(self, hop: int, ident: Id, message: str) -> None:
        origin = self._take(hop, ident)
        if origin is not None:
            self._to_origin(
                origin, self._error(origin.ident, f"{self.name(hop)}: {message}")
            )

    def _error(self, ident: Id, message: str) -> bytes:
        return encode_error(encode_id(ident), CHAIN_ERROR, message)

    # -- what is not a message -------------------------------------------------------

    def _invalid(self, hop: int, data: bytes, exc: InvalidMessage) -> None:
        ident, response = exc.ident, exc.response
        if exc.code == PARSE_ERROR and hop != CLIENT:
            # unreadable: an id its text names may still be an answer we wait for
            sniffed, method, _ = sniff_oversized(
                Oversized(len(data), data[:_KEEP], data[-_KEEP:])
            )
            if method is None and sniffed in self._pending[hop]:
                ident, response = sniffed, True
        if response:
            if ident in self._pending[hop]:
                self._fail_call(hop, ident, f"invalid answer ({exc.message})")
            else:
                log.warning(
                    "%s sent an invalid answer: %s", self.name(hop), exc.message
                )
            return
        self._warn(hop, "sent an invalid message: " + exc.message)
        self._to_origin(
            _Origin(hop, ident, ""),
            encode_error(encode_id(ident), exc.code, exc.message),
        )

    def _oversized(self, hop: int, line: Oversized) -> None:
        verdict = judge_oversized(
            line,
            self.limits.max_message_size,
            self.limits.max_error_text,
            calls=self._pending[hop],
        )
        self._warn(hop, verdict.log)
        if verdict.answer is not None:
            self._send(hop, verdict.answer)
        if verdict.fails is not None:
            self._fail_call(hop, verdict.fails, verdict.message)

    def _batch(self, hop: int, data: bytes) -> None:
        try:
            members = split_batch(data, self.limits.max_batch_members)
        except BatchTooLong:
            self._send(
                hop,
                encode_error(
                    b"null", INVALID_REQUEST, "Invalid request: batch too long"
                ),
            )
            return
        except (msgspec.MsgspecError, RecursionError):
            self._send(hop, encode_error(b"null", PARSE_ERROR, "Parse error"))
            return
        if not members:
            self._send(
                hop,
                encode_error(b"null", INVALID_REQUEST, "Invalid request: empty batch"),
            )
            return
        batch = _Batch(hop, set())
        decoded: list[tuple[bytes, Envelope | InvalidMessage]] = []
        for member in members:
            raw = bytes(member)
            try:
                env: Envelope | InvalidMessage = decode_envelope(raw)
            except InvalidMessage as exc:
                env = exc
            decoded.append((raw, env))
            if (
                isinstance(env, Envelope)
                and env.method is not msgspec.UNSET
                and env.id is not msgspec.UNSET
            ):
                if env.method != CANCEL_REQUEST:
                    batch.waiting.add(env.id)
                    self._batches[(hop, env.id)] = batch
        for raw, env in decoded:
            if isinstance(env, InvalidMessage):
                if not env.response:  # answered inside the batch's array
                    batch.answers.append(
                        encode_error(
                            encode_id(env.ident), env.code, env.message
                        ).rstrip(b"\n")
                    )
                continue
            self._line(hop, raw)
        batch.complete = True
        if not batch.waiting and batch.answers:
            self._send(hop, b"[" + b",".join(batch.answers) + b"]\n")

    def _warn(self, hop: int, text: str) -> None:
        throttle = self._warnings[hop]
        if throttle.allow():
            log.warning("%s: %s (%d so far)", self.name(hop), text, throttle.count)

    def _send(self, hop: int, data: bytes) -> None:
        self._out.append(Send(hop, data))


class _CancelParams(msgspec.Struct):
    request_id: Id | msgspec.UnsetType = msgspec.field(
        default=msgspec.UNSET, name="requestId"
    )


_cancel_decoder = msgspec.json.Decoder(_CancelParams)


def _request_id(params: msgspec.Raw | msgspec.UnsetType) -> Id | None:
    if params is msgspec.UNSET:
        return None
    try:
        value = _cancel_decoder.decode(params).request_id
    except msgspec.MsgspecError:
        return None
    return None if value is msgspec.UNSET else value
