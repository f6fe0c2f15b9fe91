"""Notifications on the engine, bytes in and queued items out (no event loop, no I/O).

Every notification takes one path (``_receipt.on_notification``): the gate,
the params, the queue's bookkeeping and bounds; these tests feed lines and
read what is queued, answered and dropped.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest
from acp_core import (
    NEED_DATA,
    PAUSED,
    ClientRules,
    Engine,
    IncomingRequest,
    Limits,
    LineBuffer,
    Oversized,
    QueuedNotification,
    Running,
)
from acp_core._framing import KEEP
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


def initialized_client(client: object, limits: Limits | None = None) -> Engine:
    engine = Engine(ClientRules([1]), limits)
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
    assert engine.queue.backlog == 2
    second = engine.next_queued(first)  # first handled: one call, not two
    assert isinstance(second, QueuedNotification)
    assert engine.queue.backlog == 1
    assert engine.next_queued(second) is None
    assert engine.queue.backlog == 0  # a request read now runs at once
    engine.receive_data(
        b'{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":'
        b'{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}\n'
    )
    assert isinstance(engine.next_event(), IncomingRequest)


def test_a_notification_with_invalid_params_is_dropped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = Client()
    engine = initialized_client(client)
    feed(engine, update("a"))
    with caplog.at_level(logging.WARNING, logger="acp_core"):
        feed(engine, update("b", session=7), update("c"))
    drain(engine)
    assert client.seen == ["a", "c"]
    assert "invalid params" in caplog.text
    assert engine.queue.backlog == 0 and engine.queue.size == 0


def test_the_gate_is_asked_whether_the_rules_serve_on_every_notification() -> None:
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


def test_notifications_follow_a_new_handler_object() -> None:
    first, second = Client(), Client()
    engine = initialized_client(first)
    feed(engine, update("a"))
    drain(engine)
    engine.set_handler(second)
    feed(engine, update("b"))
    drain(engine)
    assert first.seen == ["a"] and second.seen == ["b"]


def test_records_handed_per_message_compare_by_identity_not_by_value() -> None:
    method = v1.AGENT_METHODS["session/prompt"]
    one, two = Running(method, "s1"), Running(method, "s1")
    assert one != two and len({one, two}) == 2
    assert one == one


_LINE = st.one_of(
    st.just(b'{"a":1}'),
    st.just(b"{}"),
    st.just(b'{"c":"\r"}'),
    st.just(b"{ }"),
    st.just(b"{\r"),
    st.just(b"{ \r"),
    st.just(b"\r"),
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


# -- the queue's bookkeeping and bounds -------------------------------------------

PREFIX = b'{"jsonrpc":"2.0","method":"session/update","params":'


def test_a_queued_notification_counts_the_bytes_of_its_params() -> None:
    client = Client()
    engine = initialized_client(client)
    feed(engine, update("a"))
    queued = engine.queue.size
    assert queued == len(update("a")) - len(PREFIX) - 1  # the params object
    feed(engine, update("bb"))
    feed(engine, update("ccc"))
    sizes = [queued, *(len(update(t)) - len(PREFIX) - 1 for t in ("bb", "ccc"))]
    assert [item.size for item in engine.queue] == sizes  # type: ignore[union-attr]
    assert engine.queue.size == sum(sizes)
    drain(engine)
    assert engine.queue.size == 0 and engine.queue.backlog == 0


def test_reading_stops_at_the_notification_bounds_within_a_chunk() -> None:
    client = Client()
    engine = initialized_client(client, Limits(notification_queue_size=4))
    feed(engine, update("a"))
    engine.receive_data(b"".join(update(str(i)) + b"\n" for i in range(6)))
    assert engine.next_event() is PAUSED and engine.pause_reason == "notifications"
    assert len(engine.queue) == 4
    drain(engine)
    assert engine.next_event() is NEED_DATA
    drain(engine)
    assert client.seen == ["a", *(str(i) for i in range(6))]
    size = len(update("x")) - len(PREFIX) - 1  # the bytes bound, three updates' worth
    engine = initialized_client(Client(), Limits(notification_queue_bytes=3 * size))
    feed(engine, update("a"))
    engine.receive_data(b"".join(update(str(i)) + b"\n" for i in range(6)))
    assert engine.next_event() is PAUSED and engine.pause_reason == "notifications"
    assert len(engine.queue) == 3


def test_each_line_of_a_chunk_is_read_under_its_own_rules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = Client()
    engine = initialized_client(client, Limits(max_message_size=400))
    feed(engine, update("a"))
    with caplog.at_level(logging.WARNING, logger="acp_core"):
        feed(
            engine,
            update("b"),
            update("c", session=7),  # invalid params: dropped, logged
            PREFIX + b'{"sessionId":"s1","update":{}},"id":3}',  # a request
            PREFIX + b'"' + b"x" * 500 + b'"}',  # oversized, no id: dropped
            update("d"),
        )
    drain(engine)
    assert client.seen == ["a", "b", "d"]
    assert "invalid params" in caplog.text and "discarded a" in caplog.text
    (answer,) = engine.take_outbox()
    assert msgspec.json.decode(answer)["id"] == 3  # a request: answered
    assert engine.queue.backlog == 0 and engine.queue.size == 0


def per_line_rules(data: bytes, limit: int) -> list[Any]:
    """LineBuffer's rules, one line at a time: too long, "\\r" dropped, blank skipped."""
    out: list[Any] = []
    for line in data.split(b"\n")[:-1]:
        if len(line) > limit:
            out.append(Oversized(len(line), line[:KEEP], line[-KEEP:]))
        elif (line := line.rstrip(b"\r")) and not line.isspace():
            out.append(line)
    return out


@given(st.lists(_LINE, min_size=1, max_size=4), st.integers(min_value=1, max_value=40))
def test_a_chunk_of_one_or_more_whole_lines_keeps_the_per_line_rules(
    lines: list[bytes], limit: int
) -> None:
    # feed's fast path (one line: its two ends; more: the whole chunk in C)
    data = b"".join(line + b"\n" for line in lines)
    assert LineBuffer(max_message_size=limit).feed(data) == per_line_rules(data, limit)


# -- the envelope, then the params -------------------------------------------------


def test_a_notification_is_read_whatever_the_order_of_its_members() -> None:
    client = Client()
    engine = initialized_client(client)
    params = msgspec.json.decode(update("a"))["params"]
    params["update"]["content"]["text"] = "b"
    line = msgspec.json.encode(
        {"params": params, "method": "session/update", "jsonrpc": "2.0"}
    )
    feed(engine, update("a"), line)
    drain(engine)
    assert client.seen == ["a", "b"]


def test_params_the_strict_pass_refuses_take_the_schemas_lenient_rules() -> None:
    # availableCommands skips invalid items (the schema's lenient rule): the
    # strict params decoder refuses them, the lenient rules repair them
    seen: list[Any] = []

    class Commands(Client):
        async def session_update(self, p: v1.SessionNotification) -> None:
            seen.append(p.update)

    engine = initialized_client(Commands())
    feed(
        engine,
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1",'
        b'"update":{"sessionUpdate":"available_commands_update","availableCommands":'
        b'[{"name":"a","description":"d"},{"bad":1}]}}}',
    )
    drain(engine)
    (update_,) = seen
    assert [c.name for c in update_.available_commands] == ["a"]
    assert engine.take_outbox() == []


def test_a_known_method_with_another_jsonrpc_version_is_answered_invalid_request() -> (
    None
):
    client = Client()
    engine = initialized_client(client)
    engine.receive_data(
        b'{"jsonrpc":"1.0","id":4,"method":"session/request_permission","params":'
        b'{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}\n'
        + update("a").replace(b'"2.0"', b'"1.0"')
        + b"\n"
    )
    assert engine.next_event() is NEED_DATA
    request, notification = (msgspec.json.decode(a) for a in engine.take_outbox())
    assert request["id"] == 4 and request["error"]["code"] == -32600
    assert notification["id"] is None and notification["error"]["code"] == -32600
    drain(engine)
    assert client.seen == []


def test_the_kinds_of_unknown_variants_logged_at_warning_are_bounded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a peer on a newer spec: each kind once, at most max_unknown_variants kinds
    engine = initialized_client(Client(), Limits(max_unknown_variants=2))
    kinds = [f"newer_{i}" for i in range(4)]
    lines = [
        msgspec.json.encode(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s1", "update": {"sessionUpdate": kind}},
            }
        )
        for kind in [*kinds, *kinds]
    ]
    with caplog.at_level(logging.DEBUG, logger="acp_core"):
        feed(engine, *lines)
    told = [r for r in caplog.records if "newer spec" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.WARNING] * 2 + [logging.DEBUG] * 6
    assert engine.variant_log.seen == {
        ("session/update", "$.update.sessionUpdate", repr(k)) for k in kinds[:2]
    }
