"""Sends made back to back in one step leave in one write (acp_trio's LineWriter).

What a handler sends without yielding to trio stays queued and is written
together when it yields: one ``write`` per burst instead of one per
message, so the peer wakes once per turn.  Queued bytes count against
``write_buffer_bytes``, leave before any real schedule point, and at once
past ``hold_bytes`` or ``hold_seconds``.

The agent (coalescing_agent.py) is a process of its own over real pipes; it
records each ``os.write`` / ``os.writev`` on its output (the chunk
boundaries its peer sees), read back with the ``_writes`` extension method.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import acp_trio
import msgspec
import pytest
import trio
from _acp_helpers import HERE, INIT_V1, RawPeer, RecordingClient, pipe_pair
from acp_schema import v1
from acp_trio._framing import HOLD_BYTES, HOLD_SECONDS

AGENT = os.path.join(HERE, "coalescing_agent.py")
SESSION = "s1"


class Served:
    """The test's end of one coalescing_agent.py process."""

    def __init__(self, peer: RawPeer) -> None:
        self.peer = peer
        self.next_id = 100
        self.mark = 0  # writes before this one do not count

    async def call(self, method: str, params: Any) -> Any:
        self.next_id += 1
        answer = await self.peer.call(self.next_id, method, params)
        assert answer["id"] == self.next_id, answer
        return answer.get("result")

    async def prompt(self, text: str) -> int:
        """Send the prompt running script ``text``; its id."""
        # Settle: a task of the last turn still running would share the
        # handler's batch, and a send while another task can run is a
        # real schedule point (which writes what was held).
        await trio.sleep(0.02)
        self.next_id += 1
        await self.peer.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "session/prompt",
                "params": {
                    "sessionId": SESSION,
                    "prompt": [{"type": "text", "text": text}],
                },
            }
        )
        return self.next_id

    async def turn(self, text: str) -> tuple[list[str], Any]:
        """Run one prompt: the texts of its updates and its answer."""
        ident = await self.prompt(text)
        return await read_until_answer(self.peer, ident)

    async def lines_per_write(self) -> list[int]:
        """Messages in each write the agent made since it was configured."""
        calls = await self.call("_writes", {})
        return [call.count("\n") for call in calls[self.mark :]]


async def read_until_answer(peer: RawPeer, ident: int) -> tuple[list[str], Any]:
    texts: list[str] = []
    while True:
        message = await peer.receive()
        if message.get("id") == ident:
            return texts, message
        texts.append(message["params"]["update"]["content"]["text"])


@asynccontextmanager
async def serving(
    *,
    hold_bytes: int = HOLD_BYTES,
    hold_seconds: float = HOLD_SECONDS,
    fake_clock: bool = False,
    write_buffer_bytes: int | None = None,
) -> AsyncIterator[Served]:
    """coalescing_agent.py, initialized, with a session, warmed up, configured."""
    env = dict(os.environ)
    if write_buffer_bytes is not None:
        env["COALESCING_WRITE_BUFFER_BYTES"] = str(write_buffer_bytes)
    process = await trio.lowlevel.open_process(
        [sys.executable, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    served = Served(RawPeer(trio.StapledStream(process.stdin, process.stdout)))
    try:
        with trio.fail_after(20):
            await served.peer.initialize()
            await served.call("session/new", {"cwd": "/", "mcpServers": []})
            # A connection's first send makes a real schedule point (it knows
            # nothing of trio's batches yet): not in a measured turn.
            await served.turn("warm up")
            await served.call(
                "_configure",
                {
                    "hold_bytes": hold_bytes,
                    "hold_seconds": hold_seconds,
                    "fake_clock": fake_clock,
                    "io_poll_interval": 3600.0,
                },
            )
            served.mark = len(await served.call("_writes", {})) + 1  # + its answer
        yield served
    finally:
        await process.stdin.aclose()
        with trio.move_on_after(5):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.stdout.aclose()


async def test_updates_sent_back_to_back_in_one_step_reach_the_peer_in_one_write() -> (
    None
):
    # (hold_seconds out of reach: a loaded machine may stall a step that long)
    async with serving(hold_seconds=3600.0) as served:
        with trio.fail_after(20):
            for _ in range(3):
                texts, answer = await served.turn("five")
                assert texts == [f"u{k}" for k in range(5)]
                assert answer["result"]["stopReason"] == "end_turn"
            # each turn: its 5 updates and the answer in one write (it was 6)
            assert await served.lines_per_write() == [6, 6, 6]


async def test_a_pending_write_is_flushed_before_a_real_schedule_point() -> None:
    # held bounds out of reach: only the flush before yielding can deliver
    async with serving(hold_bytes=1 << 40, hold_seconds=3600.0) as served:
        ident = await served.prompt("wait")
        with trio.fail_after(5):  # it would wait for ever if held across the wait
            first = await served.peer.receive()
        assert first["params"]["update"]["content"]["text"] == "before the wait"
        await served.peer.send({"jsonrpc": "2.0", "method": "_go", "params": {}})
        with trio.fail_after(20):
            texts, answer = await read_until_answer(served.peer, ident)
        assert texts == ["after the wait"]
        assert answer["result"]["stopReason"] == "end_turn"


async def test_pending_bytes_count_against_write_buffer_bytes() -> None:
    budget = 4096
    # only the budget bounds what is held
    async with serving(
        hold_bytes=1 << 40, hold_seconds=3600.0, write_buffer_bytes=budget
    ) as served:
        with trio.fail_after(20):
            texts, answer = await served.turn("budget")
            log = await served.call("_log", {})
        assert [int(t[:3]) for t in texts] == list(range(20))
        assert answer["result"]["stopReason"] == "end_turn"
        assert len(log) == 20
        for queued, kept in log:
            assert queued == kept  # every byte kept back is counted
            assert kept <= budget + 1300  # a send past the budget waited


async def test_a_held_update_leaves_once_hold_seconds_passed_at_the_next_send() -> None:
    async with serving(fake_clock=True) as served:  # moved by the script
        with trio.fail_after(20):
            texts, _ = await served.turn("slow")
            assert texts == ["a", "b", "c"]
            # a+b at b's send (a was a second old), c+answer at the end
            assert await served.lines_per_write() == [2, 2]


async def test_held_sends_are_written_once_hold_bytes_are_kept_back() -> None:
    # 3 updates of 12 KB (36 KB in all: the pipe takes each write whole)
    async with serving(hold_bytes=20_000, hold_seconds=3600.0) as served:
        with trio.fail_after(20):
            texts, _ = await served.turn("big")
            assert [t[0] for t in texts] == ["0", "1", "2"]
            # 2 x 12 KB pass hold_bytes: written; then the third and the answer
            assert await served.lines_per_write() == [2, 2]


async def test_updates_sent_before_the_connection_is_closed_mid_step_are_delivered() -> (
    None
):
    async with serving(hold_bytes=1 << 40, hold_seconds=3600.0) as served:
        await served.prompt("close")
        lines = []
        with trio.fail_after(20):
            while (line := await served.peer.reader.receive_line()) is not None:
                lines.append(line)
        assert len(lines) == 2
        assert b'"text":"a"' in lines[0] and b'"text":"b"' in lines[1]


async def test_updates_sent_before_the_request_is_cancelled_mid_step_are_delivered() -> (
    None
):
    async with serving(hold_bytes=1 << 40, hold_seconds=3600.0) as served:
        with trio.fail_after(20):
            texts, answer = await served.turn("cancel")
            assert texts == ["a", "b"]
            assert answer["error"]["code"] == -32800
            texts, answer = await served.turn("five")  # and it goes on
            assert texts == [f"u{k}" for k in range(5)]


async def test_after_answering_the_next_read_waits_for_the_pipe_instead_of_failing() -> (
    None
):
    # The peer answers what we sent: reading at once would only find the
    # pipe empty (a system call and an exception per turn).
    async with serving() as served:
        with trio.fail_after(20):
            before = await served.call("_empty_reads", {})
            for _ in range(10):
                await served.turn("five")  # prompt() pauses before each prompt
            after = await served.call("_empty_reads", {})
        assert after - before == 0  # it was one per turn


async def test_after_a_response_the_client_waits_for_the_pipe_instead_of_failing_a_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The caller got its answer and will send next: the agent has nothing
    # to say before that, so reading at once would find the pipe empty.
    ours, theirs = pipe_pair()
    input_fd = ours.receive_stream.fileno()
    empty = [0]
    real_read = os.read

    def read(fd: int, n: int) -> bytes:
        try:
            return real_read(fd, n)
        except BlockingIOError:
            if fd == input_fd:
                empty[0] += 1
            raise

    monkeypatch.setattr(os, "read", read)
    peer = RawPeer(theirs)

    async def agent() -> None:  # answers each request, nothing else
        while (line := await peer.reader.receive_line()) is not None:
            request = msgspec.json.decode(line)  # type: ignore[arg-type]
            result: Any = {"protocolVersion": 1}
            if request["method"] == "session/new":
                result = {"sessionId": "s1"}
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent)
        async with acp_trio.connect_to_agent(ours, RecordingClient) as conn:
            with trio.fail_after(10):
                await conn.agent.initialize(INIT_V1)
                before = empty[0]
                for _ in range(10):
                    await conn.agent.session_new(
                        v1.NewSessionRequest(cwd="/", mcp_servers=[])
                    )
                after = empty[0]
        nursery.cancel_scope.cancel()
    assert after - before == 0  # it was one per call
