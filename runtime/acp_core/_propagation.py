"""Trace context across processes: W3C ``traceparent`` / ``tracestate`` in ``params._meta``.

The upstream RFD *meta-propagation* reserves the root keys ``traceparent``,
``tracestate`` and ``baggage`` of ``_meta`` for W3C trace context, as MCP
does.  With telemetry on (:mod:`acp_core._telemetry`: a tracer provider set):

- every call and notification a connection sends through ``conn.agent`` /
  ``conn.client`` (extensions included) carries the context of its
  ``acp.call`` / ``acp.notify`` span in its params' ``_meta``, written by
  OpenTelemetry's global propagator (W3C trace context and baggage unless
  your setup chose others).  What the application put in ``_meta`` is never
  overwritten: its keys stay as they are, and a ``_meta`` that already has a
  ``traceparent`` (the application's own trace context), is ``null`` or is
  not an object gets nothing.  The params object given is not changed (a
  copy is sent);
- every request and notification received continues the trace its
  ``_meta`` carries: the handler's ``acp.request`` / ``acp.notification``
  span is the child of the peer's span, and is the current span while the
  handler runs (each step of the handler runs in a context of its own, so a
  handler that goes on in another task keeps it), so the spans the handler
  makes and the calls it sends join the same trace.

With telemetry off, nothing here runs and nothing is added to ``_meta``;
OpenTelemetry's modules are imported only by these functions, which run
only when a tracer provider is set.
"""

from __future__ import annotations

import contextvars
import importlib
import sys
from collections.abc import Awaitable, Generator
from typing import Any, cast

import msgspec
from msgspec import UnsetType

__all__ = ["in_span_context", "trace_context_of", "with_trace_context"]

_TRACE_MODULE = "opentelemetry.trace"
#: the key whose presence says "the application's own trace context"
TRACEPARENT = "traceparent"


def _textmap() -> Any:
    """OpenTelemetry's global propagator (W3C trace context and baggage by default)."""
    return importlib.import_module("opentelemetry.propagate").get_global_textmap()


def _merged(meta: object, carrier: dict[str, str]) -> dict[str, Any] | None:
    """``meta`` with the keys of ``carrier`` it lacks, or None: leave it alone."""
    if isinstance(meta, UnsetType):
        return dict(carrier)
    if isinstance(meta, dict):
        fields = cast("dict[str, Any]", meta)
        if TRACEPARENT in fields:
            return None
        added = {k: v for k, v in carrier.items() if k not in fields}
        return {**fields, **added}
    return None  # null, not an object, or the application's trace context


def with_trace_context(params: Any, span: Any) -> Any:
    """``params`` (a message's typed params, or an extension's dict) with the
    context of ``span`` in its ``_meta``; ``params`` itself when there is no
    room for it (see the module's rules)."""
    trace: Any = sys.modules[_TRACE_MODULE]
    carrier: dict[str, str] = {}
    _textmap().inject(carrier, context=trace.set_span_in_context(span))
    if not carrier:
        return params
    if isinstance(params, msgspec.Struct):
        if "meta" not in params.__struct_fields__:
            return params
        merged = _merged(params.meta, carrier)  # type: ignore[attr-defined]
        if merged is None:
            return params
        return msgspec.structs.replace(params, meta=merged)
    if isinstance(params, dict):
        fields = cast("dict[str, Any]", params)
        merged = _merged(fields.get("_meta", msgspec.UNSET), carrier)
        if merged is None:
            return fields
        return {**fields, "_meta": merged}
    return params


def trace_context_of(params: object) -> Any:
    """The OpenTelemetry context the ``_meta`` of ``params`` carries, or
    None (no ``traceparent`` there: the span's parent is the current one)."""
    meta: object = None
    if isinstance(params, msgspec.Struct):
        meta = getattr(params, "meta", None)
    elif isinstance(params, dict):
        meta = cast("dict[str, Any]", params).get("_meta")
    if not isinstance(meta, dict):
        return None
    fields = cast("dict[str, Any]", meta)
    if not isinstance(fields.get(TRACEPARENT), str):
        return None
    textmap = _textmap()
    # only the propagator's own keys (traceparent, tracestate, baggage)
    carrier = {k: v for k in textmap.fields if isinstance(v := fields.get(k), str)}
    return textmap.extract(carrier)


class _InContext:
    """Awaits ``awaitable`` with each of its steps run in ``context``: whatever
    task drives it, its code sees the context's variables (the current span)."""

    __slots__ = ("_awaitable", "_context")

    def __init__(self, awaitable: Awaitable[Any], context: contextvars.Context) -> None:
        self._awaitable = awaitable
        self._context = context

    def __await__(self) -> Generator[Any, Any, Any]:
        # a coroutine's (or a generator's) iterator: it has send and throw
        coro: Any = self._awaitable.__await__()
        run = self._context.run
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                if error is None:
                    yielded = run(coro.send, value)
                else:
                    yielded = run(coro.throw, error)
            except StopIteration as stop:
                return stop.value
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # thrown in (cancellation): passed on
                value, error = None, exc


def in_span_context(awaitable: Awaitable[Any], span: Any) -> Awaitable[Any]:
    """``awaitable`` run with ``span`` as the current span (in a copy of the
    current context: nothing of the caller's changes)."""
    trace: Any = sys.modules[_TRACE_MODULE]
    attach = importlib.import_module("opentelemetry.context").attach
    context = contextvars.copy_context()
    context.run(attach, trace.set_span_in_context(span))
    return _InContext(awaitable, context)
