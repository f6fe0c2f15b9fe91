"""Issue 8, item 3: backpressure in bytes, both directions, over real pipes.

"The peer stops reading" is a raw peer that does not read its end of the
pipe; "reading stopped" shows as the peer's own write blocking on a full
pipe while the connection's buffers stay within their limits.
``trio.testing.wait_all_tasks_blocked`` waits until every task waits (on
a pipe, an event, ...): the state in which the bounds are checked.
"""

from __future__ import annotations

from typing import Any

import acp_trio
import msgspec
import trio
import trio.testing
from _acp_helpers import RawPeer, initialize_raw, pipe_pair
from acp_schema import v1
from acp_trio._framing import LineWriter

BIG = 20_000  # bytes of text per update
COUNT = 3_000  # updates: 60 MB, far beyond any budget


def _prompt(ident: int, text: str = "go") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": text}]},
    }


class FloodingAgent:
    """Sends COUNT updates of BIG bytes per prompt (or until cancelled)."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.conn = conn
        self.client = conn.client
        self.sent = 0
        self.timed_out = trio.Event()

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        text = params.prompt[0].text  # type: ignore[union-attr]
        for i in range(COUNT):
            update = v1.SessionNotification(
                session_id=params.session_id,
                update=v1.AgentMessageChunk(
                    content=v1.TextContent(text=f"{i:06d}" + "x" * BIG)
                ),
            )
            if text == "timeout":
                with trio.move_on_after(0.2) as scope:
                    await self.client.session_update(update)
                if scope.cancelled_caught:
                    self.timed_out.set()
                    break
            else:
                await self.client.session_update(update)
            self.sent += 1
        return v1.PromptResponse(stop_reason="end_turn")


async def _read_turn(peer: RawPeer, ident: int) -> tuple[list[int], Any]:
    numbers: list[int] = []
    while True:
        message = await peer.receive()
        if message.get("id") == ident:
            return numbers, message
        numbers.append(int(message["params"]["update"]["content"]["text"][:6]))


async def test_send_blocks_once_the_byte_budget_is_queued_and_memory_stays_bounded() -> (
    None
):
    budget = 256 * 1024
    limits = acp_trio.Limits(write_buffer_bytes=budget)
    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        conn = await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, FloodingAgent, limits=limits, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.initialize()
        await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        await peer.send(_prompt(2))
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked(0.05)  # the peer reads nothing
        agent = conn.agent
        assert conn._writer.queued <= budget + BIG + 200  # one message past the budget
        assert agent.sent < 30  # blocked in send, not buffering 60 MB
        with trio.fail_after(60):
            numbers, answer = await _read_turn(peer, 2)
        assert numbers == list(range(COUNT))  # all of them, in order
        assert answer["result"]["stopReason"] == "end_turn"
        nursery.cancel_scope.cancel()


async def test_a_send_waiting_for_space_honours_its_timeout() -> None:
    limits = acp_trio.Limits(write_buffer_bytes=64 * 1024)
    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        conn = await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, FloodingAgent, limits=limits, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.initialize()
        await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        await peer.send(_prompt(2, "timeout"))
        with trio.fail_after(10):
            await conn.agent.timed_out.wait()  # the peer still reads nothing
        assert conn.agent.sent < 30
        with trio.fail_after(30):
            numbers, answer = await _read_turn(peer, 2)
        assert answer["result"]["stopReason"] == "end_turn"
        assert len(numbers) == conn.agent.sent
        nursery.cancel_scope.cancel()


async def test_cancel_reaches_a_handler_blocked_on_a_full_write_buffer() -> None:
    # Senders filled the buffer, not the runtime's own replies: reading goes
    # on, so the peer's session/cancel is read and the blocked send cancelled.
    limits = acp_trio.Limits(write_buffer_bytes=64 * 1024)
    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        conn = await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, FloodingAgent, limits=limits, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.initialize()
        await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        await peer.send(_prompt(2))
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked(0.05)
        sent = conn.agent.sent
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "session/cancel",
                "params": {"sessionId": "s1"},
            }
        )
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked(0.05)
        assert conn.agent.sent == sent  # cancelled while blocked in send
        with trio.fail_after(30):
            numbers, answer = await _read_turn(peer, 2)
        assert answer["result"]["stopReason"] == "cancelled"
        assert len(numbers) == sent
        nursery.cancel_scope.cancel()


async def test_a_backlog_is_queued_as_it_came_never_joined_into_one_buffer() -> None:
    # The writer used to re-join its whole backlog on every message while the
    # peer did not read (3,000 x 20 KB: minutes of CPU, +60 MB).
    a, b = pipe_pair()
    writer = LineWriter(a, budget=1 << 30)
    line = b"y" * 1000 + b"\n"
    for _ in range(1000):
        writer.send_nowait(line)
    queued = len(writer._queue)
    assert 900 < queued < 1000  # the pipe took the first ~64 KB, each other is its own
    assert writer.queued == sum(len(x) for x in writer._queue)
    received = 0
    reader = RawPeer(b).reader
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        while received < 1000:
            got = await reader.receive_line()
            assert got == line[:-1]
            received += 1
        writer.close()
    assert writer.queued == 0


async def test_replies_the_runtime_writes_count_against_the_budget_and_reading_stops() -> (
    None
):
    budget = 4096
    limits = acp_trio.Limits(write_buffer_bytes=budget)
    lines = 100_000  # 200 KB of bad lines: more than the pipe holds
    ours, theirs = pipe_pair()
    done = trio.Event()

    async def flood() -> None:
        await theirs.send_all(b"x\n" * lines)  # each answered -32700
        done.set()

    async with trio.open_nursery() as nursery:
        conn = await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, FloodingAgent, limits=limits, task_status=task_status
            )
        )
        nursery.start_soon(flood)
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked(0.05)
        assert not done.is_set()  # the agent stopped reading: our write blocks
        assert conn._writer.queued < 2 * budget + 200  # bounded: not 7 MB of errors
        reader = RawPeer(theirs).reader
        with trio.fail_after(60):
            for _ in range(lines):
                reply = msgspec.json.decode(await reader.receive_line())  # type: ignore[arg-type]
                assert reply["error"]["code"] == -32700
            await done.wait()
        nursery.cancel_scope.cancel()


async def test_a_full_notification_queue_stops_reading() -> None:
    limits = acp_trio.Limits(notification_queue_size=8)
    release = trio.Event()
    handled: list[int] = []

    class SlowClient:
        def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
            pass

        async def session_update(self, params: v1.SessionNotification) -> None:
            await release.wait()
            handled.append(int(params.update.content.text))  # type: ignore[union-attr]

    count = 5_000  # ~700 KB: more than the pipe holds
    ours, theirs = pipe_pair()
    done = trio.Event()

    async def stream_updates() -> None:
        await theirs.send_all(
            b"".join(
                msgspec.json.encode(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {
                            "sessionId": "s1",
                            "update": {
                                "sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": str(i)},
                            },
                        },
                    }
                )
                + b"\n"
                for i in range(count)
            )
        )
        done.set()

    async with acp_trio.connect_to_agent(ours, SlowClient, limits=limits) as conn:
        await initialize_raw(conn, RawPeer(theirs))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream_updates)
            with trio.fail_after(10):
                await trio.testing.wait_all_tasks_blocked(0.05)
            assert not done.is_set()  # reading stopped: the pipe is full
            assert len(conn.engine.queue) <= 8
            release.set()
            with trio.fail_after(30):
                await done.wait()
                while len(handled) < count:
                    await trio.testing.wait_all_tasks_blocked(0.01)
    assert handled == list(range(count))


async def test_incoming_requests_beyond_the_concurrency_limit_wait_in_order() -> None:
    limits = acp_trio.Limits(max_concurrent_requests=4)
    release = trio.Event()
    running = 0
    most = 0
    notes: list[Any] = []

    class Agent(FloodingAgent):
        async def ext_method(self, method: str, params: Any) -> Any:
            nonlocal running, most
            running += 1
            most = max(most, running)
            await release.wait()
            running -= 1
            return {"n": params["n"]}

        async def ext_notification(self, method: str, params: Any) -> None:
            notes.append(params)

    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, Agent, limits=limits, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.initialize()
        burst = [
            {"jsonrpc": "2.0", "id": 10 + n, "method": "_work", "params": {"n": n}}
            for n in range(10)
        ]
        burst.append({"jsonrpc": "2.0", "method": "_note", "params": {"after": 10}})
        await theirs.send_all(
            b"".join(msgspec.json.encode(m) + b"\n" for m in burst)
        )  # one write: one chunk
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked(0.05)
        assert (running, most) == (4, 4)
        assert notes == []  # read, and waiting behind the requests before it
        release.set()
        answers = [await peer.receive() for _ in range(10)]
        assert sorted(a["result"]["n"] for a in answers) == list(range(10))
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked(0.05)
        assert notes == [{"after": 10}] and most == 4
        nursery.cancel_scope.cancel()


async def test_a_notification_handler_waiting_on_the_peer_keeps_reading_past_a_full_queue() -> (
    None
):
    # The answer it waits for is behind updates the bound would leave unread:
    # stopping there would leave both sides waiting for ever.
    limits = acp_trio.Limits(notification_queue_size=4)
    handled: list[int] = []
    answered = trio.Event()

    class AskingClient:
        def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
            self.conn = conn

        async def session_update(self, params: v1.SessionNotification) -> None:
            n = int(params.update.content.text)  # type: ignore[union-attr]
            if n == 0:
                assert await self.conn.ext_request("_probe", {}) == {"ok": True}
            handled.append(n)
            if len(handled) == 100:
                answered.set()

    ours, theirs = pipe_pair()
    peer = RawPeer(theirs)
    async with acp_trio.connect_to_agent(ours, AskingClient, limits=limits) as conn:
        await initialize_raw(conn, peer)
        await theirs.send_all(
            b"".join(
                msgspec.json.encode(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {
                            "sessionId": "s1",
                            "update": {
                                "sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": str(i)},
                            },
                        },
                    }
                )
                + b"\n"
                for i in range(100)
            )
        )
        probe = await peer.receive()
        assert probe["method"] == "_probe"
        await peer.send({"jsonrpc": "2.0", "id": probe["id"], "result": {"ok": True}})
        with trio.fail_after(10):
            await answered.wait()
    assert handled == list(range(100))


async def test_requests_past_the_bound_are_refused_while_a_handler_waits_on_the_peer() -> (
    None
):
    limits = acp_trio.Limits(max_concurrent_requests=2)

    class AskingAgent(FloodingAgent):
        async def ext_method(self, method: str, params: Any) -> Any:
            return await self.conn.ext_request("_question", params)

    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                ours, AskingAgent, limits=limits, task_status=task_status
            )
        )
        peer = RawPeer(theirs)
        await peer.initialize()
        for n in range(2):
            await peer.send(
                {"jsonrpc": "2.0", "id": 10 + n, "method": "_ask", "params": {"n": n}}
            )
        questions = [await peer.receive() for _ in range(2)]
        assert [q["method"] for q in questions] == ["_question", "_question"]
        # both handlers wait on us: a third request is read, and refused
        await peer.send(
            {"jsonrpc": "2.0", "id": 12, "method": "_ask", "params": {"n": 2}}
        )
        refused = await peer.receive()
        assert refused["id"] == 12 and refused["error"]["code"] == -32603
        assert refused["error"]["data"] == {"maxConcurrentRequests": 2}
        for q in questions:  # the answers they wait for are read: no deadlock
            await peer.send({"jsonrpc": "2.0", "id": q["id"], "result": q["params"]})
        answers = {
            a["id"]: a["result"] for a in [await peer.receive() for _ in range(2)]
        }
        assert answers == {10: {"n": 0}, 11: {"n": 1}}
        nursery.cancel_scope.cancel()
