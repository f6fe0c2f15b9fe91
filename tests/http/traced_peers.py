"""Both ends of the trace-context tests, each a process with telemetry on.

``python traced_peers.py agent``: :class:`remote_agent.RemoteAgent` on stdio,
under asyncio.  ``python traced_peers.py client TARGET``: a trio client that
runs initialize, session/new and a prompt (updates and a permission request)
inside one root span ``editor``, against ``stdio`` (the agent above, spawned)
or an ``http://`` URL.  ``app``: the agent in an acp_http server (served
under hypercorn's asyncio worker).  Each process keeps its finished spans in
an in-memory exporter that also appends them, as JSON lines, to
``$ACP_TRACE_FILE`` (spans cross no process boundary but the file).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)


def record(span: ReadableSpan) -> dict[str, Any]:
    """What the tests read of a span."""
    context = span.get_span_context()
    assert context is not None
    attributes = dict(span.attributes or {})
    return {
        "name": span.name,
        "method": attributes.get("rpc.method"),
        "side": attributes.get("acp.side"),
        "trace": f"{context.trace_id:032x}",
        "span": f"{context.span_id:016x}",
        "parent": None if span.parent is None else f"{span.parent.span_id:016x}",
    }


class FileExporter(InMemorySpanExporter):
    """The in-memory exporter, each span also appended to ``$ACP_TRACE_FILE``."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(os.environ["ACP_TRACE_FILE"], "a") as out:
            out.writelines(json.dumps(record(s)) + "\n" for s in spans)
        return super().export(spans)


def telemetry_on() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileExporter()))
    trace.set_tracer_provider(provider)


async def client(target: str) -> None:
    import acp_http
    import acp_trio
    from _scenario import RecordingClient
    from acp_schema import v1

    if target == "stdio":
        connecting: Any = acp_trio.spawn_agent(
            [sys.executable, __file__, "agent"], RecordingClient
        )
    else:
        connecting = acp_http.connect_http(target, RecordingClient)
    tracer = trace.get_tracer("editor")
    with tracer.start_as_current_span("editor"):
        async with connecting as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            answer = await conn.agent.session_prompt(
                v1.PromptRequest(
                    session_id=session.session_id,
                    prompt=[v1.TextContent(text="hello")],
                )
            )
            assert answer.stop_reason == "end_turn"
            assert conn.client.permissions == 1


if __name__ == "__main__":
    telemetry_on()
    if sys.argv[1] == "agent":
        import acp_asyncio
        from remote_agent import RemoteAgent

        asyncio.run(acp_asyncio.serve_agent_stdio({1: RemoteAgent}))
    else:
        import trio

        trio.run(client, sys.argv[2])
else:  # imported by an ASGI server: the agent over acp_http
    import acp_http
    from remote_agent import RemoteAgent

    telemetry_on()
    app = acp_http.asgi_app(acp_http.InProcessAgent({1: RemoteAgent}))
