"""Issue 8, items 4 and 5: no silent hangs, bounded work per message."""

from __future__ import annotations

import logging
from typing import Any

import acp_trio
import msgspec
import pytest
import trio
from _acp_helpers import (
    EchoAgent,
    RecordingClient,
    initialize_raw,
    raw_agent_of,
    raw_client_of,
)
from acp_schema import v1

DEEP = 1200  # deeper than msgspec decodes (RecursionError)


def deep(n: int = DEEP) -> bytes:
    return b"[" * n + b"]" * n


async def test_request_nested_too_deep_is_answered_invalid_request_with_its_id() -> (
    None
):
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(
            b'{"jsonrpc":"2.0","id":41,"method":"initialize","params":{"x":'
            + deep()
            + b"}}"
        )
        reply = await peer.receive()
        assert reply["id"] == 41 and reply["error"]["code"] == -32600
        assert (await peer.initialize())["result"]["protocolVersion"] == 1


async def test_line_nested_too_deep_without_readable_id_is_answered_with_null_id() -> (
    None
):
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(deep())
        reply = await peer.receive()
        assert reply["id"] is None and reply["error"]["code"] in (-32700, -32600)
        assert (await peer.initialize())["id"] == 0


async def test_response_nested_too_deep_fails_its_caller() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        async with trio.open_nursery() as nursery:

            async def answer() -> None:
                request = await peer.receive()
                await peer.send(
                    b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (request["id"], deep())
                )

            nursery.start_soon(answer)
            with trio.fail_after(5), pytest.raises(acp_trio.RequestError) as info:
                await conn.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[])
                )
        assert info.value.code == -32600


@pytest.mark.parametrize(
    "shape",
    [
        {"result": {"sessionId": "s"}},  # no "jsonrpc"
        {"jsonrpc": "1.0", "result": {"sessionId": "s"}},
        {
            "jsonrpc": "2.0",
            "result": {"sessionId": "s"},
            "error": {"code": 1, "message": "m"},
        },
        {"jsonrpc": "2.0"},  # neither result nor error
    ],
    ids=["no-jsonrpc", "wrong-jsonrpc", "result-and-error", "neither"],
)
async def test_invalid_response_for_a_pending_id_fails_the_caller_and_is_never_answered_with_that_id(
    shape: dict[str, Any],
) -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        async with trio.open_nursery() as nursery:

            async def answer() -> None:
                request = await peer.receive()
                await peer.send({**shape, "id": request["id"]})

            nursery.start_soon(answer)
            with trio.fail_after(5), pytest.raises(acp_trio.RequestError) as info:
                await conn.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[])
                )
        assert info.value.code == -32600
        assert "Invalid response" in info.value.message
        reply = await peer.receive()  # told it sent garbage, not answered by id
        assert reply["id"] is None and reply["error"]["code"] == -32600


async def test_bad_input_is_logged_at_warning_on_one_bounded_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "acp_trio")
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(b"{not json" + b"x" * 100_000)
        assert (await peer.receive())["error"]["code"] == -32700
        await peer.send(
            b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"a"}}'
        )
        assert (await peer.receive())["error"]["code"] == -32602
        await peer.send(b"x\n" * 50_000)
        for _ in range(50_000):
            assert (await peer.receive())["error"]["code"] == -32700
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings
    assert all("\n" not in w and len(w) < 800 for w in warnings)
    assert "Parse error" in warnings[0] and "100009 bytes" in warnings[0]
    assert "initialize" in warnings[1]
    assert len(warnings) < 30  # 50,002 bad lines: the first ten, then milestones


async def test_batch_beyond_the_member_cap_is_answered_with_one_short_error() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(b"[" + b",".join([b"1"] * 1_000_000) + b"]")  # 2 MB
        line = await peer.reader.receive_line()
        assert isinstance(line, bytes) and len(line) < 1000  # not 110 MB
        reply = msgspec.json.decode(line)
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert reply["error"]["data"] == {"maxBatchMembers": 128}
        assert (await peer.initialize())["id"] == 0


async def test_batch_at_the_member_cap_is_served_and_its_reply_bounded() -> None:
    limits = acp_trio.Limits(max_batch_members=4)
    ours, theirs = trio.testing.memory_stream_pair()
    from _acp_helpers import RawPeer

    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, EchoAgent, limits=limits, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.send(
            [{"jsonrpc": "2.0", "id": n, "method": "no/such"} for n in range(4)]
        )
        replies = await peer.receive()
        assert sorted(r["id"] for r in replies) == [0, 1, 2, 3]
        await peer.send([1, 1, 1, 1, 1])
        reply = await peer.receive()
        assert reply["error"]["data"] == {"maxBatchMembers": 4}
        nursery.cancel_scope.cancel()


async def test_a_huge_method_name_is_not_echoed_back_whole() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        await peer.send({"jsonrpc": "2.0", "id": 5, "method": "m" * 1_000_000})
        line = await peer.reader.receive_line()
        assert isinstance(line, bytes) and len(line) < 1000
        reply = msgspec.json.decode(line)
        assert reply["id"] == 5 and reply["error"]["code"] == -32601


async def test_a_huge_method_name_before_initialize_is_not_echoed_back_whole() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send({"jsonrpc": "2.0", "id": 5, "method": "m" * 1_000_000})
        line = await peer.reader.receive_line()
        assert isinstance(line, bytes) and len(line) < 1000


async def test_a_huge_tag_is_not_echoed_back_whole() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        session = await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        sid = session["result"]["sessionId"]
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [{"type": "t" * 1_000_000}]},
            }
        )
        line = await peer.reader.receive_line()
        assert isinstance(line, bytes) and len(line) < 1500
        reply = msgspec.json.decode(line)
        assert reply["id"] == 2 and reply["error"]["code"] == -32602
