"""OpenTelemetry spans per request and notification, when OpenTelemetry is set up.

With ``opentelemetry-api`` installed (``pip install "acp-msgspec[telemetry]"``)
and a tracer provider set (``opentelemetry.trace.set_tracer_provider``, as
the SDK's or a distro's setup does), a connection wraps:

- each handler of yours it calls: a span ``acp.request`` (kind SERVER) or
  ``acp.notification`` (kind CONSUMER) around the handler, as the official
  SDK names them;
- each call of the peer's methods through ``conn.agent`` / ``conn.client``:
  a span ``acp.call`` (kind CLIENT) around a request until its answer, or
  ``acp.notify`` (kind PRODUCER) around a notification's send.

Attributes: ``rpc.system`` (``jsonrpc``), ``rpc.method`` (the wire name),
``acp.side`` (``agent`` or ``client``, the side that runs the code) and, for
an error answer, ``rpc.jsonrpc.error_code``; an exception is recorded and
sets the span's status to ERROR.

Trace context crosses processes in ``params._meta`` (:mod:`acp_core._propagation`,
the RFD meta-propagation): each call and notification sent carries its span's
``traceparent`` / ``tracestate``; each handler's span continues the trace its
params carry and is the current span while the handler runs, so the spans your
handler makes, and the calls it sends, join that trace.

Without OpenTelemetry, or before a provider is set, nothing is wrapped: the
runtime calls your handlers and the peer as it does without this module (one
check when a connection binds a protocol version, none per message), and
opentelemetry is never imported by this module (it looks for the module your
setup imported).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from ._errors import RequestError
from ._propagation import in_span_context, trace_context_of, with_trace_context
from ._version import __version__

# Never imported here: an application that set a tracer provider up has
# imported opentelemetry.trace itself, so without it nothing is loaded at all.
_TRACE_MODULE = "opentelemetry.trace"

__all__ = ["traced_call", "traced_handler", "tracer"]

Coroutine = Callable[..., Awaitable[Any]]


def tracer() -> Any:
    """The tracer spans go to, or ``None``: OpenTelemetry absent, or no tracer
    provider set yet (spans would go nowhere)."""
    trace: Any = sys.modules.get(_TRACE_MODULE)
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return provider.get_tracer("acp_core", __version__)


def _run_in_span(
    tracer: Any,
    name: str,
    kind: Any,
    attributes: dict[str, str],
    call: Coroutine,
    incoming: bool,
) -> Coroutine:
    trace: Any = sys.modules[_TRACE_MODULE]

    @functools.wraps(call)
    async def traced(params: Any, *args: Any) -> Any:
        # a handler's span continues the peer's trace; a call's, the current one
        parent = trace_context_of(params) if incoming else None
        span = tracer.start_span(name, context=parent, kind=kind, attributes=attributes)
        try:
            if incoming:  # the handler runs with its span current
                return await in_span_context(call(params, *args), span)
            return await call(with_trace_context(params, span), *args)
        except RequestError as exc:
            span.set_attribute("rpc.jsonrpc.error_code", exc.code)
            span.set_status(trace.Status(trace.StatusCode.ERROR, exc.message))
            raise
        except BaseException as exc:  # cancellation included: the span ends
            span.record_exception(exc)
            span.set_status(trace.Status(trace.StatusCode.ERROR, type(exc).__name__))
            raise
        finally:
            span.end()

    return traced


def traced_handler(
    tracer: Any, handler: Coroutine, method: str, side: str, request: bool
) -> Coroutine:
    """``handler`` in an ``acp.request`` / ``acp.notification`` span."""
    trace: Any = sys.modules[_TRACE_MODULE]
    kind = trace.SpanKind.SERVER if request else trace.SpanKind.CONSUMER
    name = "acp.request" if request else "acp.notification"
    attributes = {"rpc.system": "jsonrpc", "rpc.method": method, "acp.side": side}
    return _run_in_span(tracer, name, kind, attributes, handler, incoming=True)


def traced_call(
    tracer: Any, call: Coroutine, method: str, side: str, request: bool
) -> Coroutine:
    """A call of the peer's ``method`` in an ``acp.call`` / ``acp.notify``
    span, its params carrying the span's trace context in ``_meta``."""
    trace: Any = sys.modules[_TRACE_MODULE]
    kind = trace.SpanKind.CLIENT if request else trace.SpanKind.PRODUCER
    name = "acp.call" if request else "acp.notify"
    attributes = {"rpc.system": "jsonrpc", "rpc.method": method, "acp.side": side}
    return _run_in_span(tracer, name, kind, attributes, call, incoming=False)
