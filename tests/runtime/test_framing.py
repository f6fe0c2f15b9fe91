"""Newline-delimited framing with a bounded message size."""

from __future__ import annotations

import acp_trio
import trio
import trio.lowlevel
import trio.testing
from _acp_helpers import EchoAgent, RawPeer
from acp_trio._framing import LineReader, Oversized, sniff_oversized


async def test_lines_split_across_and_within_chunks() -> None:
    a, b = trio.testing.memory_stream_pair()
    reader = LineReader(b)
    await a.send_all(b'{"a":1}\n{"b"')
    await a.send_all(b':2}\r\n\n  \n{"c":3}')
    await a.send_stream.aclose()
    assert [await reader.receive_line() for _ in range(4)] == [
        b'{"a":1}',
        b'{"b":2}',
        b'{"c":3}',
        None,
    ]


async def test_oversized_line_is_discarded_without_buffering_it_whole() -> None:
    a, b = trio.testing.memory_stream_pair()
    reader = LineReader(b, max_message_size=1000)
    peak = 0

    async def send() -> None:
        await a.send_all(b'{"id":1,"params":"')
        for _ in range(100):
            await a.send_all(b"x" * 100_000)
            await trio.lowlevel.checkpoint()
        await a.send_all(b'"}\n{"ok":true}\n')

    async def watch() -> None:
        nonlocal peak
        while True:
            peak = max(peak, reader.buffered)
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send)
        nursery.start_soon(watch)
        big = await reader.receive_line()
        assert await reader.receive_line() == b'{"ok":true}'
        nursery.cancel_scope.cancel()
    assert isinstance(big, Oversized) and big.size == 10_000_020
    assert peak < 200_000  # a chunk or two, never the 10 MB line


def test_oversized_id_is_found_at_the_head_or_at_the_tail() -> None:
    head = b'{"jsonrpc":"2.0","id":"r1","method":"session/prompt","params":{"x":"'
    assert sniff_oversized(Oversized(10**6, head, b'"}}')) == (
        "r1",
        "session/prompt",
        False,
    )
    head = b'{"jsonrpc":"2.0","method":"session/prompt","params":{"id":5,"x":"'
    assert sniff_oversized(Oversized(10**6, head, b'xx"}, "id": 42}')) == (
        42,
        "session/prompt",
        False,
    )
    assert sniff_oversized(
        Oversized(10**6, b'{"jsonrpc":"2.0","id":3,"result":{"', b"}}")
    )[::2] == (3, True)


async def test_oversized_request_is_answered_with_its_id_and_connection_continues() -> (
    None
):
    ours, theirs = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, EchoAgent, max_message_size=4096, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.send(
            b'{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"/'
            + b"a" * 100_000
            + b'","mcpServers":[]}}'
        )
        reply = await peer.receive()
        assert reply["id"] == 9 and reply["error"]["code"] == -32600
        assert reply["error"]["data"] == {"maxMessageSize": 4096}
        assert (await peer.initialize())["result"]["protocolVersion"] == 1
        nursery.cancel_scope.cancel()


async def test_oversized_response_fails_its_caller() -> None:
    from _acp_helpers import INIT_V1, RecordingClient

    ours, theirs = trio.testing.memory_stream_pair()
    async with acp_trio.connect_to_agent(
        ours, RecordingClient, max_message_size=1024
    ) as conn:
        peer = RawPeer(theirs)

        async def answer() -> None:
            request = await peer.receive()
            await peer.send(
                b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":1,"_meta":"%b"}}'
                % (request["id"], b"z" * 5000)
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            try:
                await conn.agent.initialize(INIT_V1)
            except acp_trio.RequestError as exc:
                assert "exceeds" in exc.message
            else:
                raise AssertionError("expected RequestError")


async def test_writes_from_concurrent_tasks_never_interleave() -> None:
    from _acp_helpers import INIT_V1, RecordingClient, connected, text_prompt
    from acp_schema import v1

    async with connected(EchoAgent, RecordingClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        s = await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        long = "y" * 200_000
        async with trio.open_nursery() as nursery:
            for _ in range(20):
                nursery.start_soon(
                    conn.agent.session_prompt, text_prompt(s.session_id, long)
                )
        assert conn.client.texts() == [long] * 20  # type: ignore[attr-defined]
