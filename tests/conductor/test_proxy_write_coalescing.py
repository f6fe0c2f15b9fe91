"""A proxy writes on the lines one read brought in one write: a turn's updates
cross a hop together (one wakeup of the conductor, not one per line)."""

from __future__ import annotations

import asyncio

import acp_asyncio
import acp_trio
import trio

UPDATES = b"".join(
    b'{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update",'
    b'"params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
    b'"content":{"type":"text","text":"w%d "}}}}}\n' % n
    for n in range(6)
)


def _forwarded(data: bytes) -> int:
    return data.count(b'"method":"session/update"')


async def test_a_trio_proxy_writes_the_lines_of_one_read_in_one_write() -> None:
    conductor, proxy_end = acp_trio.memory_stream_pair()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(acp_trio.serve_proxy, proxy_end, acp_trio.Proxy())
            await conductor.send_all(UPDATES)
            first = await conductor.receive_some()
            assert _forwarded(first) == 6
            await conductor.aclose()


def test_an_asyncio_proxy_writes_the_lines_of_one_read_in_one_write() -> None:
    async def main() -> list[bytes]:
        conductor, proxy_end = acp_asyncio.memory_stream_pair()
        writes: list[bytes] = []
        transport = proxy_end.writer.transport
        write = transport.write

        def counted(data: bytes | bytearray | memoryview) -> None:
            writes.append(bytes(data))
            write(data)

        transport.write = counted  # type: ignore[method-assign]
        served = asyncio.create_task(
            acp_asyncio.serve_proxy(*proxy_end, acp_asyncio.Proxy())
        )
        conductor.writer.write(UPDATES)
        await asyncio.wait_for(conductor.reader.readline(), 10)
        conductor.writer.close()
        await asyncio.wait_for(served, 10)
        return writes

    writes = asyncio.run(main())
    assert [_forwarded(w) for w in writes] == [6]
