"""``tools/model_standin.py``, the loopback model stand-in that
``tools/real_agent_chain.py`` puts behind a real agent, speaks the Anthropic
Messages API as a real HTTP client reads it (no npm here)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
REPLY = "Here is the key sk-live0123456789abcdefXYZ, as asked."
#: Seconds any one request may take (the stand-in answers at once).
TIMEOUT = 10.0


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


standin = _tool("model_standin")


@pytest.fixture
def served() -> Iterator[Any]:
    with standin.ModelStandIn(standin.Script(reply=REPLY)) as server:
        yield server


def _events(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events of ``response``: ``(event, data)`` pairs."""
    events = []
    event = ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[len("event: ") :]
        elif line.startswith("data: "):
            events.append((event, json.loads(line[len("data: ") :])))
    return events


def _ask(url: str, **fields: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        **fields,
    }


def test_a_streamed_message_is_the_messages_api_event_sequence(served: Any) -> None:
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream(
            "POST", served.url + "/v1/messages?beta=true", json=_ask("", stream=True)
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _events(response)
    names = [name for name, _ in events]
    deltas = names.count("content_block_delta")
    assert deltas > 1  # the text comes in pieces, as a model streams it
    assert names == [
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * deltas,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    text = "".join(
        data["delta"]["text"] for name, data in events if name == "content_block_delta"
    )
    assert text == REPLY
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_usage_has_every_count_an_agent_adds_up(served: Any) -> None:
    # claude-agent-acp adds all four; one missing made its usage_update `used: null`
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream(
            "POST", served.url + "/v1/messages", json=_ask("", stream=True)
        ) as response,
    ):
        events = dict(_events(response))
    counts = {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }
    assert set(events["message_start"]["message"]["usage"]) == counts
    assert set(events["message_delta"]["usage"]) == counts


def test_an_unstreamed_message_is_one_message_with_the_text(served: Any) -> None:
    response = httpx.post(served.url + "/v1/messages", json=_ask(""), timeout=TIMEOUT)
    assert response.status_code == 200
    answer = response.json()
    assert answer["type"] == "message"
    assert answer["content"] == [{"type": "text", "text": REPLY}]
    assert answer["stop_reason"] == "end_turn"


def test_count_tokens_answers_a_count(served: Any) -> None:
    response = httpx.post(
        served.url + "/v1/messages/count_tokens?beta=true",
        json=_ask(""),
        timeout=TIMEOUT,
    )
    assert response.status_code == 200
    assert response.json()["input_tokens"] > 0


def test_every_request_is_recorded_with_its_body(served: Any) -> None:
    body = json.dumps(_ask("", stream=True)).encode()
    with httpx.Client(timeout=TIMEOUT) as client:
        client.post(served.url + "/v1/messages?beta=true", content=body).read()
        client.head(served.url + "/")
    records = served.records()
    assert [(r.method, r.path, r.body, r.known) for r in records] == [
        ("POST", "/v1/messages?beta=true", body, True),
        ("HEAD", "/", b"", True),
    ]


def test_an_unknown_path_is_recorded_as_unknown_and_answered_404(served: Any) -> None:
    response = httpx.get(served.url + "/api/oauth/profile", timeout=TIMEOUT)
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"
    [record] = served.records()
    assert (record.method, record.path, record.known) == (
        "GET",
        "/api/oauth/profile",
        False,
    )


def test_records_are_bounded_the_oldest_dropped() -> None:
    script = standin.Script(reply=REPLY, max_records=2)
    with standin.ModelStandIn(script) as server, httpx.Client(timeout=TIMEOUT) as c:
        for n in range(3):
            c.get(f"{server.url}/{n}")
        assert [r.path for r in server.records()] == ["/1", "/2"]
    assert script.dropped == 1


def test_a_body_over_the_bound_is_answered_413_unread() -> None:
    script = standin.Script(reply=REPLY, max_body_bytes=100)
    with standin.ModelStandIn(script) as server:
        response = httpx.post(
            server.url + "/v1/messages", content=b"x" * 101, timeout=TIMEOUT
        )
        assert response.status_code == 413
        assert [r.body for r in server.records()] == [b""]


def _tool_script() -> Any:
    read = standin.ToolUse("Read", {"file_path": "/project/deploy.env"})
    return standin.Script(reply=REPLY, tool=read)


def _offering_read(*messages: dict[str, Any]) -> dict[str, Any]:
    return _ask(
        "",
        stream=True,
        tools=[{"name": "Read", "input_schema": {"type": "object"}}],
        messages=[{"role": "user", "content": "read it"}, *messages],
    )


def _streamed(url: str, request: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("POST", url + "/v1/messages", json=request) as response,
    ):
        return _events(response)


def test_the_scripted_tool_call_comes_first_its_input_streamed_in_pieces() -> None:
    with standin.ModelStandIn(_tool_script()) as server:
        events = _streamed(server.url, _offering_read())
    block = events[1][1]["content_block"]
    assert (block["type"], block["name"], block["input"]) == ("tool_use", "Read", {})
    pieces = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert len(pieces) > 1
    assert all(p["type"] == "input_json_delta" for p in pieces)
    joined = "".join(p["partial_json"] for p in pieces)
    assert json.loads(joined) == {"file_path": "/project/deploy.env"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_once_the_request_holds_the_tool_result_the_answer_is_the_text() -> None:
    result = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_standin_1", "content": "x"}
        ],
    }
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}
    with standin.ModelStandIn(_tool_script()) as server:
        events = _streamed(server.url, _offering_read(call, result))
    assert events[1][1]["content_block"]["type"] == "text"
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_a_request_not_offering_the_tool_gets_the_text() -> None:
    with standin.ModelStandIn(_tool_script()) as server:
        events = _streamed(server.url, _ask("", stream=True))
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    assert text == REPLY
