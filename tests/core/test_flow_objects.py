"""The flow rules as plain objects (no event loop): limits, read gate, order, batches,
clipping."""

from __future__ import annotations

import dataclasses
import os
import re

import msgspec
import pytest
from acp_core import Limits
from acp_core._flow import NOTIFICATIONS, WRITE_BUFFER, ReadGate, ResumeOrder
from acp_core._jsonrpc import (
    BatchTooLong,
    InvalidMessage,
    clip,
    clip_data,
    decode_envelope,
    split_batch,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_limits_defaults_are_stated_in_the_docstring_and_the_architecture_table() -> (
    None
):
    with open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8") as f:
        status = f.read()
    table = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", status, re.MULTILINE))
    doc = Limits.__doc__ or ""
    for field in dataclasses.fields(Limits):
        default = field.default
        assert isinstance(default, int)
        assert field.name in table, (
            f"ARCHITECTURE.md has no row for Limits.{field.name}"
        )
        stated = table[field.name].replace(",", "").replace(" ", "")
        assert stated in _spellings(default), (field.name, table[field.name])
        assert f"``{field.name}`` (" in doc or f"``{field.name}``" in doc, field.name


def _spellings(n: int) -> set[str]:
    out = {str(n)}
    for unit, size in (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)):
        if n % size == 0:
            out.add(f"{n // size}{unit}")
    return out


def test_limits_refuse_values_that_are_not_positive_ints() -> None:
    for field in dataclasses.fields(Limits):
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError):
                Limits(**{field.name: bad})


def test_max_message_size_keyword_overrides_the_limits_record() -> None:
    base = Limits(write_buffer_bytes=4096)
    merged = Limits.resolve(base, 1000)
    assert merged.max_message_size == 1000 and merged.write_buffer_bytes == 4096
    assert Limits.resolve(None, None) == Limits()
    assert Limits.resolve(base, None) is base


def test_read_gate_stops_reading_at_each_limit() -> None:
    limits = Limits(
        write_buffer_bytes=100,
        max_concurrent_requests=3,
        notification_queue_size=5,
        notification_queue_bytes=1000,
    )
    gate = ReadGate(limits)

    def reason(**kw: int) -> str | None:
        args = {"write_queued": 0, "queued": 0, "queued_bytes": 0} | kw
        assert gate.full(*args.values()) == (gate.reason(**args) is not None)
        return gate.reason(**args)

    assert reason() is None
    # senders wait at write_buffer_bytes; reading stops only at twice that
    assert reason(write_queued=100) is None
    assert reason(write_queued=199) is None
    assert reason(write_queued=200) == WRITE_BUFFER
    assert reason(queued=4) is None
    assert reason(queued=5) == NOTIFICATIONS
    assert reason(queued_bytes=999) is None
    assert reason(queued_bytes=1000) == NOTIFICATIONS


def test_read_gate_keeps_reading_while_a_handler_waits_on_the_peer() -> None:
    gate = ReadGate(Limits(max_concurrent_requests=2, notification_queue_size=2))
    base = {"write_queued": 0, "queued": 0, "queued_bytes": 0}
    # at the request bound a request waits, unless a handler waits for the peer
    assert gate.refuse_request(2, 1) and not gate.refuse_request(1, 1)
    assert not gate.refuse_request(2, 0)
    assert gate.reason(**{**base, "queued": 2}) == NOTIFICATIONS
    assert gate.reason(**{**base, "queued": 2}, notifications_wait=1) is None
    # a handler waiting does not lift the write bound (it bounds our own replies)
    assert (
        gate.reason(**{**base, "write_queued": 1 << 30}, notifications_wait=1)
        == WRITE_BUFFER
    )
    assert not gate.full(0, 2, 0, 1) and gate.full(0, 2, 0, 0)


def test_resume_order_holds_later_messages_until_every_released_caller_resumed() -> (
    None
):
    order = ResumeOrder()
    assert not order.blocked
    order.hold()
    order.hold()
    assert order.blocked
    assert not order.resume()
    assert order.blocked
    assert order.resume()
    assert not order.blocked


@pytest.mark.parametrize(
    ("line", "code", "ident", "response"),
    [
        (b"{", -32700, None, False),
        (b"42", -32600, None, False),
        (b'{"jsonrpc":"1.0","id":7,"method":"x"}', -32600, 7, False),
        (b'{"id":3,"result":{}}', -32600, 3, True),
        (b'{"jsonrpc":"2.0","id":3,"result":{},"error":{}}', -32600, 3, True),
        (b'{"jsonrpc":"2.0","id":[1],"method":"x"}', -32600, None, False),
        (
            b'{"jsonrpc":"2.0","id":5,"method":"x","params":'
            + b"[" * 1200
            + b"]" * 1200
            + b"}",
            -32600,
            5,
            False,
        ),
        (
            b'{"jsonrpc":"2.0","id":6,"result":' + b"[" * 1200 + b"]" * 1200 + b"}",
            -32600,
            6,
            True,
        ),
    ],
    ids=[
        "not-json",
        "not-object",
        "wrong-version",
        "response-without-jsonrpc",
        "result-and-error",
        "bad-id",
        "request-too-deep",
        "response-too-deep",
    ],
)
def test_invalid_messages_are_classified_with_their_id_and_shape(
    line: bytes, code: int, ident: object, response: bool
) -> None:
    with pytest.raises(InvalidMessage) as info:
        decode_envelope(line)
    assert (info.value.code, info.value.ident, info.value.response) == (
        code,
        ident,
        response,
    )


def test_batch_split_reads_at_most_the_limit_of_members() -> None:
    assert [bytes(m) for m in split_batch(b'[1, {"a": [1,2]}]', 2)] == [
        b"1",
        b'{"a": [1,2]}',
    ]
    members = split_batch(b"[" + b",".join([b'"x,y"'] * 4) + b"]", 4)
    assert len(members) == 4  # commas inside strings do not count as members
    with pytest.raises(BatchTooLong):
        split_batch(b"[" + b",".join([b"1"] * 1_000_000) + b"]", 128)
    with pytest.raises(BatchTooLong):
        split_batch(b"[1,2,3]", 2)
    with pytest.raises(msgspec.DecodeError):
        split_batch(b"[1,", 2)


def test_error_text_from_peer_input_is_clipped_to_one_bounded_line() -> None:
    assert clip("abc", 10) == "abc"
    clipped = clip("x" * 1_000_000, 256)
    assert len(clipped) == 256 and clipped.endswith("...")
    assert "\n" not in clip("a\nb\rc", 100)
    data = clip_data({"method": "m" * 10_000, "nested": [["deep" * 1000]]}, 64)
    assert len(msgspec.json.encode(data)) < 400
