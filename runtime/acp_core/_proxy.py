"""The peer as an object: ``conn.agent.session_new(params)`` on any adapter.

A handler name is looked up in the method table of the version spoken
(``Engine.by_handler``) and becomes a call of the connection: a request
(answered with the decoded result), a notification (``None`` once sent), or,
for a method the schema defines both ways, whichever the params' type says.
Nothing here awaits anything but the connection's own ``request`` /
``notify``: each adapter supplies those.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ._telemetry import traced_call

if TYPE_CHECKING:
    from ._schema import MethodSpec
    from ._state import EngineState

__all__ = ["Caller", "PeerProxy"]


class Caller(Protocol):
    """What :class:`PeerProxy` needs of a connection (both adapters have it)."""

    @property
    def engine(self) -> EngineState:
        """The connection's protocol state (its ``by_handler`` table)."""
        ...

    async def request(self, method: MethodSpec, params: Any) -> Any:
        """Send the request ``method``; its decoded result."""
        ...

    async def notify(self, method: MethodSpec, params: Any) -> None:
        """Send the notification ``method``."""
        ...

    async def ext_request(self, name: str, params: Any) -> Any:
        """Call the ``_``-prefixed extension ``name``; its raw result."""
        ...

    async def ext_notify(self, name: str, params: Any) -> None:
        """Send the ``_``-prefixed extension notification ``name``."""
        ...


async def _request_or_notify(
    conn: Caller, method: MethodSpec, form: type, params: Any
) -> Any:
    if isinstance(params, form):
        await conn.notify(method, params)
        return None
    return await conn.request(method, params)


class PeerProxy:
    """Calls the peer's methods by handler name: ``conn.agent.session_new(params)``.

    Requests return the decoded result; notifications return ``None`` once
    queued.  ``_``-prefixed extensions go through :meth:`ext_method` and
    :meth:`ext_notification`.  The callable of each name is built on first
    use and kept as an instance attribute (so later lookups skip
    ``__getattr__``) until :meth:`forget` (the connection switched
    protocol version).
    """

    def __init__(self, conn: Caller) -> None:
        self._conn = conn

    def __getattr__(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        if name.startswith("__"):  # copy, pickle and the like: not a method
            raise AttributeError(name)
        conn = self._conn
        engine = conn.engine
        method = engine.by_handler.get(name)
        if method is None:
            raise AttributeError(
                f"the peer has no method {name!r} in protocol v{engine.schema.version}"
            )
        call: Callable[[Any], Awaitable[Any]]
        form = getattr(method, "notification", None)
        if method.result is None:
            call = functools.partial(conn.notify, method)
        elif form is None:
            call = functools.partial(conn.request, method)
        else:  # a request also defined as a notification: the params type decides
            call = functools.partial(_request_or_notify, conn, method, form)
        if engine.tracer is not None:  # OpenTelemetry set up: a span per call
            call = traced_call(
                engine.tracer,
                call,
                method.name,
                engine.rules.side,
                method.result is not None,
            )
        self.__dict__[name] = call
        return call

    def forget(self) -> None:
        """Drop the callables built for the previous protocol version."""
        conn = self._conn
        self.__dict__.clear()
        self._conn = conn

    async def ext_method(self, method: str, params: Any) -> Any:
        """Call the ``_``-prefixed extension ``method``; returns the raw result (builtins)."""
        conn = self._conn
        if conn.engine.tracer is None:
            return await conn.ext_request(method, params)
        call = functools.partial(conn.ext_request, method)
        return await self._traced(call, method, True)(params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send the ``_``-prefixed extension notification ``method``."""
        conn = self._conn
        if conn.engine.tracer is None:
            await conn.ext_notify(method, params)
            return
        call = functools.partial(conn.ext_notify, method)
        await self._traced(call, method, False)(params)

    def _traced(
        self, call: Callable[[Any], Awaitable[Any]], method: str, request: bool
    ) -> Callable[[Any], Awaitable[Any]]:
        """``call`` in a span carrying its trace context (OpenTelemetry set up)."""
        engine = self._conn.engine
        return traced_call(engine.tracer, call, method, engine.rules.side, request)
