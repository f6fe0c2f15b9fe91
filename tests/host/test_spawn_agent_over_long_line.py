"""The same over-long line in the adapters' ``spawn_agent`` as in every reader
(``acp_core.judge_oversized``): an agent process writes a request over the
client's ``max_message_size``; the client answers it -32600 with its id, the
very bytes the verdict gives (and acp_http's server and wires, acp_inspect:
tests/http/test_oversized_lines.py, tests/inspect/test_over_long_lines.py).
Real processes, real bytes, on trio and on asyncio."""

from __future__ import annotations

import asyncio
import sys

import acp_asyncio
import acp_trio
import trio
from acp_core import LineBuffer, Oversized, judge_oversized

LIMIT = 1000
BIG = (
    b'{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"pad":"'
    + b"x" * 5000
    + b'"}}'
)
WRITTEN = BIG + b"\n"
#: writes BIG, then what it was answered to its stderr, and exits
AGENT = f"import os, sys; os.write(1, {WRITTEN!r}); os.write(2, sys.stdin.buffer.readline())"


def expected_answer() -> bytes:
    [line] = LineBuffer(max_message_size=LIMIT).feed(BIG + b"\n")
    assert isinstance(line, Oversized)
    answer = judge_oversized(line, LIMIT).answer
    assert answer is not None
    return answer


class Client:
    def __init__(self, conn: object) -> None:
        pass


async def test_an_over_long_line_is_refused_the_same_way_in_acp_trio_spawn_agent() -> (
    None
):
    async with acp_trio.spawn_agent(
        [sys.executable, "-c", AGENT],
        Client,
        max_message_size=LIMIT,
        capture_stderr=True,
        grace_period=5,
    ) as conn:
        with trio.fail_after(60):
            await conn.process.wait()  # type: ignore[union-attr]
    assert bytes(conn.stderr_output) == expected_answer()


def test_an_over_long_line_is_refused_the_same_way_in_acp_asyncio_spawn_agent() -> None:
    async def main() -> bytes:
        async with acp_asyncio.spawn_agent(
            [sys.executable, "-c", AGENT],
            Client,
            max_message_size=LIMIT,
            capture_stderr=True,
            grace_period=5,
        ) as conn:
            assert conn.process is not None
            await asyncio.wait_for(conn.process.wait(), 60)
        return bytes(conn.stderr_output)  # complete: the block waited for its end

    assert asyncio.run(main()) == expected_answer()
