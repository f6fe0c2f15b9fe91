"""The in-memory seam on trio (``acp_trio.memory_stream_pair``,
``acp_trio.connect_in_memory``): an agent and a client in one process, with a
pipe's bounds and no socket or thread."""

from __future__ import annotations

import threading

import acp_trio
import pytest
import trio
import trio.testing
from acp_schema import v1


class Agent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for n in range(3):
            chunk = acp_trio.agent_text(f"part {n}", message_id="m1")
            await self.client.session_update(acp_trio.notification("s1", chunk))
        return v1.PromptResponse(stop_reason="end_turn")


class Client:
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_trio.SessionTranscript()

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)


async def test_an_agent_and_a_client_connect_in_memory() -> None:
    threads = threading.active_count()
    clients: list[Client] = []

    def client(conn: acp_trio.ClientSideConnection[v1.Agent]) -> Client:
        clients.append(Client(conn))
        return clients[-1]

    async with acp_trio.connect_in_memory(Agent, client) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = [acp_trio.text_block("hi")]
        answer = await conn.agent.session_prompt(
            v1.PromptRequest(session_id="s1", prompt=prompt)
        )
        assert answer.stop_reason == "end_turn"
        [message] = clients[0].transcript.messages
        assert [getattr(block, "text", None) for block in message.content] == [
            "part 0part 1part 2"
        ]
        assert isinstance(conn.stream, acp_trio.MemoryStream)
    assert threading.active_count() == threads  # no thread was started


async def test_a_writer_to_a_reader_that_does_not_read_stops_at_the_capacity() -> None:
    writer, reader = acp_trio.memory_stream_pair(capacity=1000)
    sent = 0
    async with trio.open_nursery() as nursery:

        async def flood() -> None:
            nonlocal sent
            for _ in range(11):
                await writer.send_all(b"x" * 100)
                sent += 100

        nursery.start_soon(flood)
        await trio.testing.wait_all_tasks_blocked()
        assert sent == 1000  # the 11th send waits for the reader
        assert await reader.receive_some(300) == b"x" * 300
        await trio.testing.wait_all_tasks_blocked()
        assert sent == 1100  # room was made: the 11th went on
    assert await reader.receive_some() == b"x" * 800


async def test_an_agent_whose_client_does_not_read_blocks_within_capacity_and_write_buffer() -> (
    None
):
    limits = acp_trio.Limits(write_buffer_bytes=16 * 1024)
    agent_end, deaf_client = acp_trio.memory_stream_pair(capacity=8 * 1024)
    sent = 0
    line = 1000
    async with acp_trio.connect_to_client(agent_end, Agent, limits=limits) as conn:

        async def flood() -> None:
            nonlocal sent
            while True:
                await conn.ext_notify("_pad", {"p": "x" * line})
                sent += 1

        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood)
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    # what left the agent: the pipe's 8 KiB, its own 16 KiB budget, one line more
    assert 0 < sent * line <= 8 * 1024 + 16 * 1024 + 2 * (line + 64)
    await deaf_client.aclose()


async def test_leaving_the_client_s_block_ends_the_agent_served_in_memory() -> None:
    ended = trio.Event()

    class Watched(Agent):
        def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
            super().__init__(conn)

    agent_end, client_end = acp_trio.memory_stream_pair()
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            await acp_trio.serve_agent(agent_end, Watched)
            ended.set()

        nursery.start_soon(serve)
        async with acp_trio.connect_to_agent(client_end, Client) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        with trio.fail_after(10):
            await ended.wait()


async def test_a_send_to_a_closed_peer_breaks_and_a_read_after_its_end_is_empty() -> (
    None
):
    ours, theirs = acp_trio.memory_stream_pair()
    await ours.send_all(b"last words\n")
    await ours.send_eof()
    assert await theirs.receive_some() == b"last words\n"
    assert await theirs.receive_some() == b""
    with pytest.raises(trio.ClosedResourceError):  # after our own send_eof
        await ours.send_all(b"x")
    await theirs.send_all(b"still open the other way")
    assert await ours.receive_some() == b"still open the other way"
    await theirs.aclose()
    left, right = acp_trio.memory_stream_pair()
    await right.aclose()
    with pytest.raises(trio.BrokenResourceError):
        await left.send_all(b"x")
    with pytest.raises(trio.ClosedResourceError):
        await theirs.receive_some()


async def test_every_send_on_the_seam_is_a_checkpoint() -> None:
    ours, _theirs = acp_trio.memory_stream_pair()
    with trio.testing.assert_checkpoints():
        await ours.send_all(b"x")
    with trio.testing.assert_checkpoints():
        await ours.send_all(b"")
