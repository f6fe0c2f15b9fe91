"""The engine's hot path keeps every rule of the long way (no event loop, no I/O).

A notification that needs no rule is decoded and queued without the long
way once its route is known (``Engine._routes``); these tests check that
what the long way decides is still decided: refusals, invalid params,
handler and version changes, the ordered queue's bookkeeping.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest
from acp_core import (
    NEED_DATA,
    ClientRules,
    Engine,
    IncomingRequest,
    LineBuffer,
    QueuedNotification,
    Running,
)
from acp_schema import v1
from hypothesis import given
from hypothesis import strategies as st


class Flag:
    def set(self) -> None:
        pass


class Client:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def session_update(self, p: v1.SessionNotification) -> None:
        self.seen.append(p.update.content.text)  # type: ignore[union-attr]

    async def session_request_permission(
        self, p: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("not called in these tests")


def update(text: str, session: Any = "s1") -> bytes:
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": session,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                },
            },
        }
    )


def initialized_client(client: object) -> Engine:
    engine = Engine(ClientRules([1]))
    engine.set_handler(client)
    call = engine.start_call(
        engine.schema.outgoing["initialize"],
        v1.InitializeRequest(protocol_version=1),
        Flag(),
    )
    engine.receive_data(
        b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":1}}\n' % call.id
    )
    assert engine.next_event() is NEED_DATA
    engine.call_finished(call)
    return engine


def run(coro: Any) -> None:
    try:
        coro.send(None)
    except StopIteration:
        return
    raise AssertionError("the handler yielded")


def drain(engine: Engine) -> None:
    """The adapter's one consumer: handle every queued notification, in order."""
    item = engine.next_queued()
    while item is not None:
        assert isinstance(item, QueuedNotification)
        run(item.handler(item.params))
        item = engine.next_queued(item)


def feed(engine: Engine, *lines: bytes) -> None:
    engine.receive_data(b"".join(line + b"\n" for line in lines))
    assert engine.next_event() is NEED_DATA


def test_next_queued_takes_the_handled_notification_as_done() -> None:
    client = Client()
    engine = initialized_client(client)
    feed(engine, update("a"), update("b"))
    first = engine.next_queued()
    assert isinstance(first, QueuedNotification)
    assert engine.backlog == 2
    second = engine.next_queued(first)  # first handled: one call, not two
    assert isinstance(second, QueuedNotification)
    assert engine.backlog == 1
    assert engine.next_queued(second) is None
    assert engine.backlog == 0  # a request read now runs at once
    engine.receive_data(
        b'{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":'
        b'{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}\n'
    )
    assert isinstance(engine.next_event(), IncomingRequest)


def test_a_notification_with_invalid_params_is_dropped_on_the_hot_path_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = Client()
    engine = initialized_client(client)
    feed(engine, update("a"))  # the route is known from here on
    with caplog.at_level(logging.WARNING, logger="acp_core"):
        feed(engine, update("b", session=7), update("c"))
    drain(engine)
    assert client.seen == ["a", "c"]
    assert "invalid params" in caplog.text
    assert engine.backlog == 0 and engine.queued_bytes == 0


def test_the_hot_path_asks_the_rules_whether_they_serve_on_every_message() -> None:
    client = Client()
    engine = initialized_client(client)
    feed(engine, update("a"))
    engine.rules.serving = False  # as rules that stopped serving would say
    engine.rules.initialized = False  # type: ignore[union-attr]
    feed(engine, update("b"))
    engine.rules.serving = True
    engine.rules.initialized = True  # type: ignore[union-attr]
    feed(engine, update("c"))
    drain(engine)
    assert client.seen == ["a", "c"]


def test_the_hot_path_follows_a_new_handler_object() -> None:
    first, second = Client(), Client()
    engine = initialized_client(first)
    feed(engine, update("a"))
    drain(engine)
    engine.set_handler(second)
    feed(engine, update("b"))
    drain(engine)
    assert first.seen == ["a"] and second.seen == ["b"]


def test_receive_line_takes_the_same_hot_path_as_next_event() -> None:
    client = Client()
    engine = initialized_client(client)
    for text in ("a", "b"):
        engine.receive_line(update(text))
    engine.receive_line(update("c", session=7))  # dropped, as by next_event
    drain(engine)
    assert client.seen == ["a", "b"]


def test_records_handed_per_message_compare_by_identity_not_by_value() -> None:
    method = v1.AGENT_METHODS["session/prompt"]
    one, two = Running(method, "s1"), Running(method, "s1")
    assert one != two and len({one, two}) == 2
    assert one == one


_LINE = st.one_of(
    st.just(b'{"a":1}'),
    st.just(b"  "),
    st.just(b""),
    st.just(b'{"b":[1,2]}\r'),
    st.just(b"\t"),
    st.just(b'|{"after-brace":1}'),
    st.just(b' {"lead":1}'),
    st.binary(max_size=12).filter(lambda b: b"\n" not in b),
)


@given(st.lists(_LINE, max_size=20), st.integers(min_value=1, max_value=40))
def test_a_chunk_of_whole_lines_is_split_as_line_by_line(
    lines: list[bytes], limit: int
) -> None:
    # The whole-chunk split (decided in C) gives what the per-line rules give.
    data = b"".join(line + b"\n" for line in lines)
    at_once = LineBuffer(max_message_size=limit).feed(data)
    one_by_one = LineBuffer(max_message_size=limit)
    expected: list[Any] = []
    for line in lines:
        expected += one_by_one.feed(line + b"\n")
    assert at_once == expected
