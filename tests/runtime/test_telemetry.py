"""OpenTelemetry spans per request and notification (acp_core._telemetry): on
when opentelemetry is installed and a tracer provider is set, absent (no
wrapper at all) otherwise.  Each case runs in its own process: a tracer
provider, once set, is global to the process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

TRACED = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import acp_trio, trio
    from acp_schema import v1
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )
    from _acp_helpers import INIT_V1, EchoAgent, RecordingClient, connected, text_prompt

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

    async def main():
        async with connected({1: EchoAgent}, {1: RecordingClient}) as (client, agent):
            await client.agent.initialize(INIT_V1)
            new = await client.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            await client.agent.session_prompt(text_prompt(new.session_id, "hi"))
            try:
                await client.agent.session_set_mode(
                    v1.SetSessionModeRequest(session_id="s", mode_id="m")
                )
            except acp_trio.RequestError:
                pass

    trio.run(main)
    print(json.dumps([
        {"name": s.name, "kind": s.kind.name, "status": s.status.status_code.name,
         "attributes": dict(s.attributes)}
        for s in exporter.get_finished_spans()
    ]))
    """
)


def _run(code: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def spans() -> list[dict[str, Any]]:
    import _acp_helpers

    folder = _acp_helpers.HERE
    result: list[dict[str, Any]] = json.loads(_run(TRACED, folder))
    return result


def _named(spans: list[dict[str, Any]], name: str, method: str) -> list[Any]:
    return [
        s
        for s in spans
        if s["name"] == name and s["attributes"]["rpc.method"] == method
    ]


def test_each_handled_request_and_notification_gets_a_span(
    spans: list[dict[str, Any]],
) -> None:
    (prompt,) = _named(spans, "acp.request", "session/prompt")
    assert prompt["kind"] == "SERVER" and prompt["status"] == "UNSET"
    assert prompt["attributes"] == {
        "rpc.system": "jsonrpc",
        "rpc.method": "session/prompt",
        "acp.side": "agent",
    }
    (update,) = _named(spans, "acp.notification", "session/update")
    assert update["kind"] == "CONSUMER" and update["attributes"]["acp.side"] == "client"
    assert _named(spans, "acp.request", "initialize")


def test_each_call_of_the_peer_gets_a_span(spans: list[dict[str, Any]]) -> None:
    (call,) = _named(spans, "acp.call", "session/prompt")
    assert call["kind"] == "CLIENT" and call["attributes"]["acp.side"] == "client"
    (notify,) = _named(spans, "acp.notify", "session/update")
    assert notify["kind"] == "PRODUCER" and notify["attributes"]["acp.side"] == "agent"


def test_an_error_answer_sets_the_span_status_and_the_code(
    spans: list[dict[str, Any]],
) -> None:
    (load,) = _named(spans, "acp.call", "session/set_mode")
    assert load["status"] == "ERROR"
    assert load["attributes"]["rpc.jsonrpc.error_code"] == -32601


ABSENT = textwrap.dedent(
    """
    import sys
    if sys.argv[1] == "blocked":
        sys.modules["opentelemetry"] = None  # not installed
    from acp_core import AgentRules, Engine, _telemetry
    from acp_core._proxy import PeerProxy
    from acp_schema import v1

    class Agent:
        async def session_new(self, params): ...

    agent = Agent()
    engine = Engine(AgentRules([1]))
    engine.set_handler(agent)
    handler = engine.handler_for(engine.schema.incoming["session/new"])
    print(_telemetry.tracer() is None, engine.tracer is None, handler == agent.session_new)
    """
)


@pytest.mark.parametrize("how", ["blocked", "no-provider"])
def test_without_opentelemetry_or_a_provider_handlers_are_not_wrapped(how: str) -> None:
    assert _run(ABSENT, how).split() == ["True", "True", "True"]


#: one process, both ends in memory: what the agent's handler received in ``_meta``
META_SEEN = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import acp_trio, trio
    from acp_schema import v1
    if sys.argv[2] == "on":
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        trace.set_tracer_provider(TracerProvider())
    from _acp_helpers import INIT_V1, EchoAgent, RecordingClient, connected

    seen = []

    class Agent(EchoAgent):
        async def session_new(self, params):
            seen.append(params.meta)
            return await super().session_new(params)

        async def ext_method(self, method, params):
            seen.append(params.get("_meta", "absent"))
            return {}

    MINE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    async def main():
        async with connected({1: Agent}, {1: RecordingClient}) as (client, agent):
            await client.agent.initialize(INIT_V1)
            for meta in (v1.UNSET, {"mine": 1}, {"traceparent": MINE, "mine": 2}):
                await client.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[], meta=meta)
                )
            await client.agent.ext_method("_probe", {"x": 1})

    trio.run(main)
    seen = [None if isinstance(m, type(v1.UNSET)) else m for m in seen]
    print(json.dumps({"seen": seen, "otel": "opentelemetry" in sys.modules}))
    """
)


def meta_seen(telemetry: str) -> dict[str, Any]:
    import _acp_helpers

    result: dict[str, Any] = json.loads(_run(META_SEEN, _acp_helpers.HERE, telemetry))
    return result


def test_the_trace_context_never_overwrites_what_the_application_put_in_meta() -> None:
    fresh, added, own, ext = meta_seen("on")["seen"]
    assert set(fresh) >= {"traceparent"}
    assert added["mine"] == 1 and "traceparent" in added
    assert own == {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "mine": 2,
    }
    assert "traceparent" in ext  # extensions carry it too


def test_with_telemetry_off_nothing_is_added_and_opentelemetry_is_not_imported() -> (
    None
):
    result = meta_seen("off")
    assert result["seen"] == [
        None,
        {"mine": 1},
        {
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "mine": 2,
        },
        "absent",
    ]
    assert result["otel"] is False
