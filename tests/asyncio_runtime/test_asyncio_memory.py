"""The in-memory seam on asyncio (``acp_asyncio.memory_stream_pair``,
``acp_asyncio.connect_in_memory``): an agent and a client in one process, with
a pipe's bounds and no socket or thread.  Synchronous tests, each running its
own asyncio loop (pytest runs async tests on trio in this project)."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import acp_asyncio
import acp_core
from acp_schema import v1

T = TypeVar("T")
TIMEOUT = 60  # a hang guard only


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), TIMEOUT)

    return asyncio.run(bounded())


async def settle() -> None:
    """Let every ready callback and task run until nothing moves (no clock)."""
    for _ in range(200):
        await asyncio.sleep(0)


class Agent:
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for n in range(3):
            chunk = acp_asyncio.agent_text(f"part {n}", message_id="m1")
            await self.client.session_update(acp_asyncio.notification("s1", chunk))
        return v1.PromptResponse(stop_reason="end_turn")


class Client:
    def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_asyncio.SessionTranscript()

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)


def test_an_agent_and_a_client_connect_in_memory_on_asyncio() -> None:
    clients: list[Client] = []

    def client(conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> Client:
        clients.append(Client(conn))
        return clients[-1]

    async def main() -> str:
        async with acp_asyncio.connect_in_memory(Agent, client) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
            prompt = [acp_asyncio.text_block("hi")]
            answer = await conn.agent.session_prompt(
                v1.PromptRequest(session_id="s1", prompt=prompt)
            )
            return answer.stop_reason

    threads = threading.active_count()
    assert run(main) == "end_turn"
    assert threading.active_count() == threads  # no thread was started
    [message] = clients[0].transcript.messages
    assert [getattr(b, "text", None) for b in message.content] == ["part 0part 1part 2"]


def test_a_writer_to_a_reader_that_does_not_read_is_paused_within_its_bounds() -> None:
    async def main() -> tuple[int, int]:
        left, right = acp_core.seam_ends(capacity=1000)
        ours = acp_asyncio.open_memory_stream(left)
        theirs = acp_asyncio.open_memory_stream(right, limit=100)
        ours.writer.transport.set_write_buffer_limits(high=500)
        sent = 0

        async def flood() -> None:
            nonlocal sent
            while True:
                ours.writer.write(b"x" * 100)
                sent += 100
                await ours.writer.drain()

        task = asyncio.get_running_loop().create_task(flood())
        await settle()
        stuck = sent
        await settle()
        assert sent == stuck  # no progress: drain() waits
        data = await theirs.reader.read(10_000)
        await settle()
        task.cancel()
        return stuck, len(data)

    stuck, read = run(main)
    # the reader's buffer (StreamReader pauses past 2 x its limit, after the
    # chunk that crossed it: one pipeful), the pipe's 1000 bytes, the writer's
    # 500 past the pipe, and the send that crossed that
    assert stuck <= 2 * 100 + 1000 + 1000 + 500 + 100
    assert read > 0


def test_an_agent_whose_client_does_not_read_blocks_within_its_bounds_on_asyncio() -> (
    None
):
    line = 1000

    async def main() -> int:
        limits = acp_asyncio.Limits(write_buffer_bytes=16 * 1024)
        agent_end, _deaf_client = acp_asyncio.memory_stream_pair(capacity=8 * 1024)
        sent = 0
        async with acp_asyncio.connect_to_client(
            *agent_end, Agent, limits=limits
        ) as conn:

            async def flood() -> None:
                nonlocal sent
                while True:
                    await conn.ext_notify("_pad", {"p": "x" * line})
                    sent += 1

            task = asyncio.get_running_loop().create_task(flood())
            await settle()
            stuck = sent
            await settle()
            assert sent == stuck
            task.cancel()
            return stuck

    sent = run(main)
    # the deaf client's reader buffer (2 x 64 KiB), the pipe's 8 KiB, the
    # agent's 16 KiB budget, one line more
    assert 0 < sent * line <= 2 * 64 * 1024 + 8 * 1024 + 16 * 1024 + 2 * (line + 64)


def test_leaving_the_client_s_block_ends_the_agent_served_in_memory_on_asyncio() -> (
    None
):
    async def main() -> None:
        agent_end, client_end = acp_asyncio.memory_stream_pair()
        served = asyncio.get_running_loop().create_task(
            acp_asyncio.serve_agent(*agent_end, Agent)
        )
        async with acp_asyncio.connect_to_agent(*client_end, Client) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        await asyncio.wait_for(served, 10)

    run(main)


def test_a_write_to_a_closed_peer_ends_the_writer_s_transport() -> None:
    async def main() -> bool:
        ours, theirs = acp_asyncio.memory_stream_pair()
        theirs.writer.close()
        await settle()
        ours.writer.write(b"x")
        await settle()
        return ours.writer.transport.is_closing()

    assert run(main)


def test_the_end_of_the_writer_is_the_end_of_the_reader_s_input() -> None:
    async def main() -> list[bytes]:
        ours, theirs = acp_asyncio.memory_stream_pair()
        ours.writer.write(b"last words\n")
        ours.writer.write_eof()
        return [await theirs.reader.readline(), await theirs.reader.read()]

    assert run(main) == [b"last words\n", b""]


def test_an_idle_stream_wire_holds_no_event_of_its_own() -> None:
    # its reading waits on a future made only while reading is paused
    async def main() -> list[object]:
        agent_end, _client_end = acp_asyncio.memory_stream_pair()
        async with acp_asyncio.connect_to_client(*agent_end, Agent) as conn:
            await settle()
            wire = conn._wire  # pyright: ignore[reportPrivateUsage]
            return [o for o in gc.get_referents(wire) if isinstance(o, asyncio.Event)]

    assert run(main) == []


def test_an_agent_served_on_a_seam_end_reads_and_writes_it_without_streams() -> None:
    clients: list[Client] = []

    def client(conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> Client:
        clients.append(Client(conn))
        return clients[-1]

    async def main() -> tuple[int, str, bool]:
        agent_end, client_end = acp_core.seam_ends()
        before = len(asyncio.all_tasks())
        async with acp_asyncio.connect_to_client_in_memory(agent_end, Agent) as agent:
            await settle()
            # the consumer of the ordered queue alone: no task reads the seam
            tasks = len(asyncio.all_tasks()) - before
            reader, writer = acp_asyncio.open_memory_stream(client_end)
            async with acp_asyncio.connect_to_agent(reader, writer, client) as conn:
                await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
                await conn.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[])
                )
                answer = await conn.agent.session_prompt(
                    v1.PromptRequest(
                        session_id="s1", prompt=[acp_asyncio.text_block("hi")]
                    )
                )
            # the client's end closed: the agent reads the end of its input
            await asyncio.wait_for(agent.wait_closed(), 10)
            return tasks, answer.stop_reason, agent.is_closed

    assert run(main) == (1, "end_turn", True)
    [message] = clients[0].transcript.messages
    assert [getattr(b, "text", None) for b in message.content] == ["part 0part 1part 2"]


def test_an_agent_on_a_seam_end_whose_client_does_not_read_blocks_within_its_bounds() -> (
    None
):
    line = 1000

    async def main() -> int:
        limits = acp_asyncio.Limits(write_buffer_bytes=16 * 1024)
        agent_end, _deaf_client = acp_core.seam_ends(capacity=8 * 1024)
        sent = 0
        async with acp_asyncio.connect_to_client_in_memory(
            agent_end, Agent, limits=limits
        ) as conn:

            async def flood() -> None:
                nonlocal sent
                while True:
                    await conn.ext_notify("_pad", {"p": "x" * line})
                    sent += 1

            task = asyncio.get_running_loop().create_task(flood())
            await settle()
            stuck = sent
            await settle()
            assert sent == stuck
            task.cancel()
            return stuck

    sent = run(main)
    # the pipe's 8 KiB, the agent's 16 KiB budget, one line more
    assert 0 < sent * line <= 8 * 1024 + 16 * 1024 + 2 * (line + 64)


def test_an_agent_on_a_seam_end_whose_client_left_is_closed() -> None:
    async def main() -> bool:
        agent_end, client_end = acp_core.seam_ends()
        async with acp_asyncio.connect_to_client_in_memory(agent_end, Agent) as conn:
            client_end.close()  # the client reads and writes no more
            await asyncio.wait_for(conn.wait_closed(), 10)
            return conn.is_closed

    assert run(main)


def test_connect_in_memory_joins_both_ends_on_the_seam_without_streams() -> None:
    """One path for a connection on a seam end: ``connect_in_memory`` serves
    both ends as ``connect_to_client_in_memory`` and
    ``connect_to_agent_in_memory`` do (each connection's queue consumer, no
    task reading a stream, no task serving the agent)."""

    async def main() -> tuple[int, str, bool]:
        before = len(asyncio.all_tasks())
        async with acp_asyncio.connect_in_memory(Agent, Client) as conn:
            await settle()
            tasks = len(asyncio.all_tasks()) - before
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
            answer = await conn.agent.session_prompt(
                v1.PromptRequest(session_id="s1", prompt=[acp_asyncio.text_block("hi")])
            )
        return tasks, answer.stop_reason, conn.is_closed

    assert run(main) == (2, "end_turn", True)


def test_a_client_on_a_seam_end_reads_and_writes_it_without_streams() -> None:
    async def main() -> tuple[int, str]:
        agent_end, client_end = acp_core.seam_ends()
        async with acp_asyncio.connect_to_client_in_memory(agent_end, Agent):
            await settle()
            before = len(asyncio.all_tasks())
            async with acp_asyncio.connect_to_agent_in_memory(
                client_end, Client
            ) as conn:
                await settle()
                tasks = len(asyncio.all_tasks()) - before
                await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
                await conn.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[])
                )
                answer = await conn.agent.session_prompt(
                    v1.PromptRequest(
                        session_id="s1", prompt=[acp_asyncio.text_block("hi")]
                    )
                )
        return tasks, answer.stop_reason

    assert run(main) == (1, "end_turn")
