"""Issue 8, items 1 and 2: wire order after a response; every send is a checkpoint.

Over real pipes (``pipe_pair``: ``FdStream``s, as stdio and ``spawn_agent``
use), with the peer written as raw bytes where the order on the wire matters.
"""

from __future__ import annotations

import time
from typing import Any

import acp_trio
import acp_trio._schedule
import msgspec
import trio
import trio.testing
from _acp_helpers import (
    INIT_V1,
    EchoAgent,
    RawPeer,
    RecordingClient,
    chunk,
    connected,
    initialize_raw,
    pipe_pair,
)
from acp_schema import v1
from acp_trio._framing import LineWriter
from acp_trio._schedule import SchedulePoint

UPDATES = 100_000


async def test_caller_resumes_before_the_notification_written_after_its_response() -> (
    None
):
    # claude-code-acp answers session/new, then sends available_commands_update
    # for that session: a client recording the session when session_new returns
    # must know it when the update is handled.  20 runs: the order used to
    # depend on trio's random choice between two runnable tasks (~13 of 20 wrong).
    for run in range(20):
        assert await _session_known_when_its_first_update_is_handled(f"sess_{run}"), run


async def _session_known_when_its_first_update_is_handled(sid: str) -> bool:
    known: set[str] = set()
    seen: list[bool] = []
    handled = trio.Event()

    class Client:
        def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
            pass

        async def session_update(self, params: v1.SessionNotification) -> None:
            seen.append(params.session_id in known)
            handled.set()

    ours, theirs = pipe_pair()
    peer = RawPeer(theirs)

    async def agent() -> None:
        request = await peer.receive()
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"sessionId": sid}}
        update = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": sid,
                "update": {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [],
                },
            },
        }
        # both lines in one write: they arrive in one chunk
        await theirs.send_all(
            msgspec.json.encode(answer) + b"\n" + msgspec.json.encode(update) + b"\n"
        )

    async with acp_trio.connect_to_agent(ours, Client) as conn:
        await initialize_raw(conn, peer)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent)
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            known.add(session.session_id)
        with trio.fail_after(5):
            await handled.wait()
    return seen == [True]


async def test_request_made_by_the_notification_handler_is_not_held_behind_it() -> None:
    # The ordering rule must not deadlock a notification handler that calls
    # the peer: it is the caller, and it resumes when the queue does.
    ours, theirs = pipe_pair()
    answers: list[Any] = []
    both = trio.Event()

    class Client:
        def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
            self.conn = conn

        async def session_update(self, params: v1.SessionNotification) -> None:
            answers.append(await self.conn.ext_request("_probe", {}))
            if len(answers) == 2:
                both.set()

    async with acp_trio.connect_to_agent(ours, Client) as conn:
        peer = RawPeer(theirs)
        await initialize_raw(conn, peer)
        update = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [],
                },
            },
        }
        await peer.send(update)
        await peer.send(update)
        for _ in range(2):
            probe = await peer.receive()
            assert probe["method"] == "_probe"
            await peer.send({"jsonrpc": "2.0", "id": probe["id"], "result": {"ok": 1}})
        with trio.fail_after(5):
            await both.wait()
    assert answers == [{"ok": 1}, {"ok": 1}]


class StreamingAgent:
    """Streams UPDATES updates per prompt without any await but the sends."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client
        self.sent = 0

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        update = v1.SessionNotification(
            session_id=params.session_id,
            update=v1.AgentMessageChunk(content=v1.TextContent(text="x" * 40)),
        )
        for _ in range(UPDATES):
            await self.client.session_update(update)
            self.sent += 1
        return v1.PromptResponse(stop_reason="end_turn")


async def test_cancel_sent_after_the_first_of_100000_updates_is_answered_cancelled_promptly() -> (
    None
):
    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        conn = await nursery.start(acp_trio.serve_agent, ours, StreamingAgent)
        peer = RawPeer(theirs)
        await peer.initialize()
        await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {
                    "sessionId": "s1",
                    "prompt": [{"type": "text", "text": "go"}],
                },
            }
        )
        first = await peer.receive()
        assert first["method"] == "session/update"
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "session/cancel",
                "params": {"sessionId": "s1"},
            }
        )
        updates = 1
        started = trio.current_time()
        with trio.fail_after(20):  # used to take ~30 s, ending end_turn
            while True:
                message = await peer.receive()
                if message.get("id") == 2:
                    break
                updates += 1
        elapsed = trio.current_time() - started
        assert message["result"]["stopReason"] == "cancelled", (message, elapsed)
        assert updates < UPDATES
        assert conn.agent.sent < UPDATES
        nursery.cancel_scope.cancel()


async def test_a_send_is_a_schedule_point_for_other_tasks() -> None:
    # A handler sending in a loop lets every other runnable task run between
    # two sends, as any trio await does.
    ours, theirs = pipe_pair()
    ticks = 0
    seen: list[int] = []

    class Agent(StreamingAgent):
        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            for _ in range(50):
                seen.append(ticks)
                await self.client.session_update(
                    v1.SessionNotification(
                        session_id=params.session_id,
                        update=v1.AgentMessageChunk(content=v1.TextContent(text="y")),
                    )
                )
            return v1.PromptResponse(stop_reason="end_turn")

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        await nursery.start(acp_trio.serve_agent, ours, Agent)
        peer = RawPeer(theirs)
        await peer.initialize()
        nursery.start_soon(ticker)
        reply = await peer.call(
            2,
            "session/prompt",
            {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}]},
        )
        while "id" not in reply:
            reply = await peer.receive()
        nursery.cancel_scope.cancel()
    # One tick per batch of the scheduler, one send per batch of the handler
    # (trio picks the order within a batch: a difference of 0, 1 or 2).
    assert len(seen) == 50
    assert seen[-1] - seen[0] >= 48, seen


async def test_a_send_raises_cancelled_and_sends_nothing_in_a_cancelled_scope() -> None:
    a, b = pipe_pair()
    writer = LineWriter(a)
    with trio.CancelScope() as scope:
        scope.cancel()
        await writer.send(b"never\n")
    assert scope.cancelled_caught
    assert writer.queued == 0
    writer.send_nowait(b"after\n")
    writer.flush()  # (no writer task here)
    line = await RawPeer(b).reader.receive_line()
    assert line == b"after"


async def test_a_timeout_around_a_send_loop_fires() -> None:
    # A deadline is noticed at the next send, though no other task runs.
    a, _b = pipe_pair()  # _b: its end kept open
    point = SchedulePoint()
    writer = LineWriter(a, budget=1 << 30, schedule_point=point)
    sent = 0
    with trio.move_on_after(0.05) as scope:
        while True:
            await writer.send(b"x\n")
            sent += 1
    assert scope.cancelled_caught and sent > 0 and point.watch is not None


async def test_schedule_point_skips_the_scheduler_pass_only_when_nothing_can_run(
    monkeypatch: Any,
) -> None:
    passes = 0
    real = trio.lowlevel.cancel_shielded_checkpoint

    async def counted() -> None:
        nonlocal passes
        passes += 1
        await real()

    monkeypatch.setattr(trio.lowlevel, "cancel_shielded_checkpoint", counted)
    # no time bound in this test: only "can another task run?" decides
    monkeypatch.setattr(acp_trio._schedule, "IO_POLL_INTERVAL", 3600.0)
    point = SchedulePoint()
    await point()
    assert point.watch is not None
    passes = 0
    for _ in range(100):
        await point()
    assert passes <= 2  # a task of the test harness may wake once

    async def other() -> None:
        await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)  # runnable: the next point must yield
        passes = 0
        await point()
        assert passes == 1

    # IO_POLL_INTERVAL of wall time and of CPU time without a pass: yield
    monkeypatch.undo()
    monkeypatch.setattr(trio.lowlevel, "cancel_shielded_checkpoint", counted)
    point.watch.until = 0.0
    point.watch.cpu = time.thread_time() - acp_trio._schedule.IO_POLL_INTERVAL
    passes = 0
    await point()
    assert passes == 1


async def test_schedule_points_make_a_real_pass_at_least_every_io_poll_interval(
    monkeypatch: Any,
) -> None:
    # Ready I/O (a peer's session/cancel) is noticed only in a pass of
    # trio's loop: a send loop alone in its batch still makes one, at least
    # every two IO_POLL_INTERVAL of its CPU time.
    passes = 0
    real = trio.lowlevel.cancel_shielded_checkpoint

    async def counted() -> None:
        nonlocal passes
        passes += 1
        await real()

    monkeypatch.setattr(trio.lowlevel, "cancel_shielded_checkpoint", counted)
    point = SchedulePoint()
    await point()
    passes = 0
    start = time.thread_time()
    while time.thread_time() - start < 20 * acp_trio._schedule.IO_POLL_INTERVAL:
        await point()
    assert passes >= 5


async def test_typed_initialize_still_round_trips_over_pipes() -> None:
    ours, theirs = pipe_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(acp_trio.serve_agent, ours, StreamingAgent)
        async with acp_trio.connect_to_agent(theirs, _Quiet) as conn:
            init = await conn.agent.initialize(INIT_V1)
            assert init.protocol_version == 1
        nursery.cancel_scope.cancel()


class _Quiet:
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        pass

    async def session_update(self, params: v1.SessionNotification) -> None:
        pass


async def test_a_notification_in_a_cancelled_scope_raises_sends_nothing_and_counts_a_checkpoint() -> (
    None
):
    # notify() decides as trio does, and counts the checkpoint.
    async with connected(EchoAgent, RecordingClient) as (conn, agent_conn):
        await conn.agent.initialize(INIT_V1)
        client: RecordingClient = conn.client  # type: ignore[assignment]

        async def send() -> None:  # in a task of its own: not the main task
            with trio.CancelScope() as scope:
                scope.cancel()
                await agent_conn.client.session_update(chunk("s1", "never"))
            assert scope.cancelled_caught
            with trio.testing.assert_checkpoints():
                await agent_conn.client.session_update(chunk("s1", "after"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send)
        with trio.fail_after(5):
            await trio.testing.wait_all_tasks_blocked(0.01)  # the client handled it
        assert client.texts() == ["after"]
