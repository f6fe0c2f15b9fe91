"""The routing and bounding rules as tables, without an event loop or a server."""

from __future__ import annotations

import dataclasses

import acp_core
import msgspec
import pytest
from acp_http import HttpLimits
from acp_http._outbox import Budget, Outbox
from acp_http._routing import MessageError, Scope, decode_envelope, id_key, post_rule
from acp_http._sse import SseReader


def rule(
    body: dict[str, object], header: str | None = None
) -> tuple[Scope, str | None, int]:
    found = post_rule(decode_envelope(msgspec.json.encode(body)), header)
    return found.scope, found.session, found.status


@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        (
            {"id": 1, "method": "initialize", "params": {}},
            None,
            (Scope.INITIALIZE, None, 202),
        ),
        (
            {"id": 1, "method": "session/new", "params": {"cwd": "/"}},
            None,
            (Scope.CONNECTION, None, 202),
        ),
        (
            {"id": 1, "method": "session/prompt", "params": {"sessionId": "s"}},
            "s",
            (Scope.SESSION, "s", 202),
        ),
        (
            {"id": 1, "method": "session/prompt", "params": {"sessionId": "s"}},
            None,
            (Scope.SESSION, None, 400),
        ),
        (
            {"method": "session/cancel", "params": {"sessionId": "s"}},
            None,
            (Scope.SESSION, None, 400),
        ),
        (
            {"id": 1, "method": "session/prompt", "params": {"sessionId": "s"}},
            "t",
            (Scope.SESSION, None, 400),
        ),
        (
            {"id": 1, "method": "session/load", "params": {"sessionId": "s"}},
            None,
            (Scope.REATTACH, "s", 202),
        ),
        (
            {"id": 1, "method": "session/resume", "params": {"sessionId": "s"}},
            "s",
            (Scope.REATTACH, "s", 202),
        ),
        (
            {"id": 1, "method": "session/fork", "params": {"sessionId": "s"}},
            None,
            (Scope.SESSION, "s", 202),
        ),
        ({"id": 7, "result": {}}, None, (Scope.CONNECTION, None, 202)),
        ({"id": 7, "result": {}}, "s", (Scope.SESSION, "s", 202)),
        ({"method": "_x/y", "params": [1, 2]}, None, (Scope.CONNECTION, None, 202)),
    ],
)
def test_the_post_routing_table(
    body: dict[str, object], header: str | None, expected: tuple[Scope, str | None, int]
) -> None:
    assert rule({"jsonrpc": "2.0", **body}, header) == expected


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"[1, 2]", 501, -32600),
        (b"{nope", 400, -32700),
        (b"42", 400, -32600),
        (b"", 400, -32700),
    ],
)
def test_a_body_that_is_not_one_message_is_refused(
    data: bytes, status: int, code: int
) -> None:
    with pytest.raises(MessageError) as refused:
        decode_envelope(data)
    assert (refused.value.status, refused.value.code) == (status, code)


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"1.0","id":1,"method":"session/new","params":{}}',
        b'{"id":1,"method":"session/new","params":{}}',
        b'{"jsonrpc":"2.0","id":1}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
        b'{"jsonrpc":"2.0","id":true,"method":"session/new"}',
    ],
)
def test_a_body_the_engine_refuses_as_no_message_is_refused_the_same_way(
    data: bytes,
) -> None:
    # one envelope reader: acp_core's rules, HTTP's status on top
    with pytest.raises(acp_core.InvalidMessage) as engine:
        acp_core.decode_envelope(data)
    with pytest.raises(MessageError) as refused:
        decode_envelope(data)
    assert (refused.value.status, refused.value.code) == (400, engine.value.code)
    assert refused.value.message == engine.value.message


def test_params_or_result_that_are_not_objects_name_no_session() -> None:
    request = decode_envelope(b'{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}')
    assert request.is_request and request.params_session is None
    answer = decode_envelope(b'{"jsonrpc":"2.0","id":1,"result":null}')
    assert answer.is_response and answer.result_session is None
    odd = decode_envelope(b'{"jsonrpc":"2.0","method":"x","params":{"sessionId":7}}')
    assert odd.params_session is None


def test_the_envelope_reads_the_session_of_params_and_result() -> None:
    answer = decode_envelope(
        b'{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s1","x":[1]}}'
    )
    assert answer.is_response and answer.result_session == "s1" and not answer.is_error
    failed = decode_envelope(
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}'
    )
    assert failed.is_response and failed.is_error
    assert (
        id_key(1) != id_key("1")
        and id_key(None) == "null"
        and id_key(msgspec.UNSET) is None
    )


def test_the_sse_reader_joins_data_lines_and_is_bounded() -> None:
    reader = SseReader(64)
    assert reader.feed(b': keepalive\n\ndata: {"a"') == []
    assert reader.feed(b":1}\n\nevent: x\ndata:2\r\n\r\n") == [b'{"a":1}', b"2"]


def test_an_over_long_sse_event_is_discarded_while_it_streams_and_given_by_its_ends() -> (
    None
):
    # the verdict every reader takes needs the message's ends, not the field name
    reader = SseReader(8)
    assert reader.feed(b"data: 0123456789") == []
    assert reader.feed(b"x" * 100_000) == []
    assert reader._lines.buffered == 0  # discarded while it streams
    assert reader.feed(b"\n\ndata: ok\n\n") == [
        # the head: what the framer held when the line went past the bound
        acp_core.Oversized(100_010, b"0123456789", b"x" * 4096),
        b"ok",  # the next event read as usual
    ]
    # data lines within the bound, an event past it: the same record
    assert SseReader(10).feed(b"data:01234\ndata:56789\n\n") == [
        acp_core.Oversized(11, b"01234\n56789", b"01234\n56789")
    ]
    assert SseReader(8).feed(b"data: 0123456789\n\n") == [
        acp_core.Oversized(10, b"0123456789", b"0123456789")
    ]
    assert SseReader(8).feed(b": " + b"x" * 20 + b"\n\n") == []  # no message


def test_an_outbox_is_full_by_count_or_its_connections_bytes_but_takes_one_large_line() -> (
    None
):
    budget = Budget(10)  # one connection's: every outbox of it counts
    outbox = Outbox(2, budget)
    assert not outbox.full_for(100)  # nothing held: even a line over the bound goes in
    budget.take(8)  # held for another stream of the connection
    assert outbox.full_for(3) and not outbox.full_for(2)
    budget.release(8)
    outbox._items.extend([b"1", b"2"])
    assert outbox.full_for(0)  # the count bound


def test_limits_are_positive_and_replaceable() -> None:
    limits = dataclasses.replace(HttpLimits(), max_connections=3)
    assert limits.max_connections == 3
    with pytest.raises(ValueError, match="max_body_bytes"):
        HttpLimits(max_body_bytes=0)
