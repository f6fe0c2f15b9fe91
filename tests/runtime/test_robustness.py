"""Nothing one message does can stop the connection; the fast paths keep the rules.

- an exception of any kind while decoding or handling one message is
  contained: a request is answered -32603, a notification dropped, a
  response fails its caller, and the connection goes on;
- a response queued behind notifications when the peer goes away fails its
  caller instead of leaving it waiting;
- requests run on reused tasks: a handler's context variables do not reach
  the next request, and a cancelled request does not stop the next one;
- over pipes (``os.read``/``os.write`` directly): messages larger than the
  pipe buffer, a slow reader, a closed pipe.
"""

from __future__ import annotations

import contextvars
import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import acp_trio
import msgspec
import pytest
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
    raw_agent_of,
    raw_client_of,
    text_prompt,
)
from acp_schema import v1
from acp_trio._framing import LineReader, LineWriter


def _break_decode(conn: acp_trio.Connection, type_: Any, exc: BaseException) -> None:
    """Make ``conn`` fail decoding ``type_`` once with ``exc`` (as a broken generated module would)."""
    decode = conn.schema.decode
    armed = [True]

    def broken(data: Any, t: Any) -> Any:
        if t is type_ and armed[0]:
            armed[0] = False
            raise exc
        return decode(data, t)

    def broken_decoder(t: Any) -> Any:  # the strict first pass: decode answers
        def first_pass(data: Any) -> Any:
            if t is type_ and armed[0]:
                raise exc
            return decode(data, t)

        return first_pass

    # the connection's own copy: the loaded schema is shared by the process
    schema = copy.copy(conn.schema)
    schema.decode = broken
    schema.decoder = broken_decoder
    conn.engine.bind(schema)


def _update(session_id: str, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": msgspec.to_builtins(chunk(session_id, text)),
    }


async def test_non_msgspec_error_decoding_a_notification_drops_it_only() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        await initialize_raw(conn, peer)
        _break_decode(
            conn, v1.SessionNotification, NameError("name 'X' is not defined")
        )
        await peer.send(_update("s", "lost"))
        await peer.send(_update("s", "kept"))
        await peer.send({"jsonrpc": "2.0", "id": 9, "method": "no/such"})
        reply = await peer.receive()
        assert reply["error"]["code"] == -32601
        client = conn.client
        assert isinstance(client, RecordingClient)
        assert client.texts() == ["kept"]
        assert not conn.is_closed


async def test_non_msgspec_error_decoding_a_request_answers_internal_error() -> None:
    async with raw_client_of(EchoAgent) as peer:
        assert "result" in await peer.initialize()
        await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        # break the agent's decoding of the next session/prompt
        conn = _SERVED[-1]
        _break_decode(conn, v1.PromptRequest, TypeError("broken module"))
        prompt = msgspec.to_builtins(text_prompt("sess_1", "hi"))
        reply = await peer.call(2, "session/prompt", prompt)
        assert reply["id"] == 2
        assert reply["error"] == {"code": -32603, "message": "Internal error"}
        reply = await peer.call(3, "session/prompt", prompt)
        assert reply["method"] == "session/update"  # the echo, then the answer
        assert (await peer.receive())["result"]["stopReason"] == "end_turn"


async def test_failing_hooks_are_contained() -> None:
    async with raw_client_of(EchoAgent) as peer:
        assert "result" in await peer.initialize()
        conn = _SERVED[-1]
        rules = conn.rules  # the side's rules (acp_core.AgentRules): the hooks' home
        original = rules.notification_received

        def broken_hook(method: Any, params: Any) -> None:
            raise RuntimeError("hook bug")

        rules.notification_received = broken_hook  # type: ignore[method-assign]
        await peer.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}
        )
        rules.notification_received = original  # type: ignore[method-assign]

        def broken_received(running: Any) -> None:
            raise RuntimeError("hook bug")

        rules.request_received = broken_received  # type: ignore[method-assign]
        reply = await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        assert reply["error"]["code"] == -32603
        del rules.request_received
        reply = await peer.call(2, "session/new", {"cwd": "/", "mcpServers": []})
        assert reply["result"]["sessionId"]
        assert conn.running_requests() == {}


async def test_non_msgspec_error_decoding_a_result_fails_only_its_caller() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):

        async def agent() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"protocolVersion": 1},
                }
            )
            for _ in range(2):
                request = await peer.receive()
                await peer.send(
                    {
                        "jsonrpc": "2.0",
                        "id": request["id"],
                        "result": {"sessionId": "s"},
                    }
                )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent)
            await conn.agent.initialize(INIT_V1)
            _break_decode(conn, v1.NewSessionResponse, NameError("broken"))
            new = v1.NewSessionRequest(cwd="/", mcp_servers=[])
            with pytest.raises(acp_trio.RequestError) as info:
                await conn.agent.session_new(new)
            assert info.value.code == -32603
            assert (await conn.agent.session_new(new)).session_id == "s"


class SlowClient(RecordingClient):
    async def session_update(self, params: v1.SessionNotification) -> None:
        await trio.sleep(0.05)
        await super().session_update(params)


async def test_response_queued_behind_notifications_fails_when_the_peer_goes() -> None:
    async with raw_agent_of(SlowClient) as (conn, peer):

        async def agent() -> None:
            request = await peer.receive()
            await peer.send(
                b"%b\n%b"
                % (
                    msgspec.json.encode(_update("s", "one")),
                    msgspec.json.encode(
                        {
                            "jsonrpc": "2.0",
                            "id": request["id"],
                            "result": {"protocolVersion": 1},
                        }
                    ),
                )
            )
            await peer.stream.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent)
            with trio.fail_after(5):
                try:
                    await conn.agent.initialize(INIT_V1)
                except acp_trio.ConnectionClosed:
                    pass


_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("acp_test_var", default="")


class ContextAgent(EchoAgent):
    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        seen = _VAR.get()
        _VAR.set("set by an earlier request")
        return v1.NewSessionResponse(session_id=f"saw:{seen}")


async def test_context_variables_do_not_leak_between_requests() -> None:
    async with connected(ContextAgent, RecordingClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        new = v1.NewSessionRequest(cwd="/", mcp_servers=[])
        for _ in range(3):
            assert (await conn.agent.session_new(new)).session_id == "saw:"


class BlockingAgent(EchoAgent):
    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        if params.prompt and getattr(params.prompt[0], "text", "") == "block":
            await trio.sleep_forever()
        return await super().session_prompt(params)


async def test_requests_after_a_cancelled_one_still_run() -> None:
    async with connected(BlockingAgent, RecordingClient) as (conn, agent_conn):
        await conn.agent.initialize(INIT_V1)
        session = await conn.agent.session_new(
            v1.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        sid = session.session_id
        async with trio.open_nursery() as nursery:

            async def blocked() -> None:
                resp = await conn.agent.session_prompt(text_prompt(sid, "block"))
                assert resp.stop_reason == "cancelled"

            nursery.start_soon(blocked)
            await trio.testing.wait_all_tasks_blocked()
            await conn.agent.session_cancel(v1.CancelNotification(session_id=sid))
        for i in range(3):
            resp = await conn.agent.session_prompt(text_prompt(sid, f"t{i}"))
            assert resp.stop_reason == "end_turn"
        assert agent_conn.running_requests() == {}


async def test_many_concurrent_requests_each_answered() -> None:
    class SlowAgent(EchoAgent):
        async def session_new(
            self, params: v1.NewSessionRequest
        ) -> v1.NewSessionResponse:
            await trio.sleep(0.01)
            return await super().session_new(params)

    async with connected(SlowAgent, RecordingClient) as (conn, agent_conn):
        await conn.agent.initialize(INIT_V1)
        ids: list[str] = []

        async def one() -> None:
            new = v1.NewSessionRequest(cwd="/", mcp_servers=[])
            ids.append((await conn.agent.session_new(new)).session_id)

        for _ in range(3):  # rounds: workers are reused, surplus ones end
            async with trio.open_nursery() as nursery:
                for _ in range(40):
                    nursery.start_soon(one)
        assert len(set(ids)) == 120
        assert agent_conn.running_requests() == {}


# -- pipes ------------------------------------------------------------------------


async def test_pipe_writer_handles_partial_writes_and_a_slow_reader() -> None:
    a, b = pipe_pair()
    writer = LineWriter(a)
    reader = LineReader(b)
    big = b"x" * 300_000  # several pipe buffers: partial writes, then wait_writable
    lines = [b"%d:%b" % (i, big if i % 7 == 0 else b"small") for i in range(60)]
    received: list[bytes] = []

    async def send() -> None:
        for line in lines[:30]:
            writer.send_nowait(line + b"\n")  # queued behind the partial write
        for line in lines[30:]:  # these wait while the byte budget is full
            await writer.send(line + b"\n")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        nursery.start_soon(send)
        while len(received) < len(lines):
            await trio.sleep(0.001)  # a slow reader
            got = await reader.receive_line()
            assert isinstance(got, bytes)
            received.append(got)
        writer.close()
    assert received == lines
    await a.aclose()
    assert await reader.receive_line() is None
    await b.aclose()


async def test_pipe_closed_under_the_connection_ends_it() -> None:
    a, b = pipe_pair()
    async with trio.open_nursery() as nursery:
        served = await nursery.start(acp_trio.serve_agent, a, EchoAgent)
        peer_writer = LineWriter(b)
        nursery.start_soon(peer_writer.run)
        peer_writer.send_nowait(
            msgspec.json.encode(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                }
            )
            + b"\n"
        )
        reply = await LineReader(b).receive_line()
        assert isinstance(reply, bytes) and b'"protocolVersion":1' in reply
        await b.aclose()  # the client goes away
        with trio.fail_after(5):
            await served.closed.wait()
        peer_writer.close()


# The agent connections served by raw_client_of, newest last.
_SERVED: list[acp_trio.AgentSideConnection[Any]] = []


@pytest.fixture(autouse=True)
def _record_served(monkeypatch: pytest.MonkeyPatch) -> None:
    _SERVED.clear()
    original = acp_trio.AgentSideConnection.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _SERVED.append(self)

    monkeypatch.setattr(acp_trio.AgentSideConnection, "__init__", init)


# -- requests that yield, or cancel themselves, while more is read ------------------


class YieldingAgent(EchoAgent):
    """session/new yields to trio before answering."""

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        await trio.lowlevel.checkpoint()
        return await super().session_new(params)


async def test_a_handler_yielding_in_the_middle_of_a_chunk_lets_the_rest_be_read() -> (
    None
):
    async with raw_client_of(YieldingAgent) as peer:
        assert "result" in await peer.initialize()
        new = {"cwd": "/", "mcpServers": []}
        messages = [
            {"jsonrpc": "2.0", "id": i, "method": "session/new", "params": new}
            for i in range(1, 6)
        ]
        await peer.stream.send_all(
            b"".join(msgspec.json.encode(m) + b"\n" for m in messages)
        )
        replies = {(await peer.receive())["id"] for _ in messages}
        assert replies == {1, 2, 3, 4, 5}
        reply = await peer.call(6, "session/new", new)
        assert reply["result"]["sessionId"] == "sess_6"


class SelfCancellingAgent(EchoAgent):
    """session/new cancels its own request, then returns without yielding."""

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        for running in list(self.conn.running_requests().values()):
            if running.method.handler == "session_new":
                running.cancel("request")
        return await super().session_new(params)


async def test_a_handler_cancelling_itself_without_yielding_does_not_stop_reading() -> (
    None
):
    async with connected(SelfCancellingAgent, RecordingClient) as (conn, agent_conn):
        await conn.agent.initialize(INIT_V1)
        new = v1.NewSessionRequest(cwd="/", mcp_servers=[])
        for i in range(1, 4):  # answered: it returned normally
            assert (await conn.agent.session_new(new)).session_id == f"sess_{i}"
        assert agent_conn.running_requests() == {}


class _ReadRecordingStream(trio.abc.Stream):
    """A stream that notes which task made each read."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.readers: list[trio.lowlevel.Task] = []

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        self.readers.append(trio.lowlevel.current_task())
        return await self.inner.receive_some(max_bytes)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.inner.aclose()


class TaskNotingAgent(EchoAgent):
    """session/new notes the task it runs in, and answers without waiting."""

    tasks: ClassVar[list[trio.lowlevel.Task]] = []

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.tasks.append(trio.lowlevel.current_task())
        return await super().session_new(params)


async def test_a_request_that_does_not_wait_runs_in_the_task_that_read_it() -> None:
    # No task switch between reading a request and answering it.
    TaskNotingAgent.tasks = []
    ours, theirs = trio.testing.memory_stream_pair()
    stream = _ReadRecordingStream(ours)
    async with trio.open_nursery() as nursery:
        await nursery.start(acp_trio.serve_agent, stream, TaskNotingAgent)
        peer = RawPeer(theirs)
        assert "result" in await peer.initialize()
        for i in range(1, 4):
            reply = await peer.call(i, "session/new", {"cwd": "/", "mcpServers": []})
            assert reply["result"]["sessionId"] == f"sess_{i}"
        assert len(TaskNotingAgent.tasks) == 3
        assert set(TaskNotingAgent.tasks) <= set(stream.readers)
        nursery.cancel_scope.cancel()


class TaskNotingClient(RecordingClient):
    """Notes the task each update is handled in; ``wait`` waits for ``go``."""

    go = trio.Event()

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        super().__init__(conn)
        self.tasks: list[trio.lowlevel.Task] = []
        self.started: list[str] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.tasks.append(trio.lowlevel.current_task())
        text = params.update.content.text  # type: ignore[union-attr]
        self.started.append(text)
        if text == "wait":
            await self.go.wait()
        await super().session_update(params)


@asynccontextmanager
async def _noting_client() -> AsyncIterator[
    tuple[TaskNotingClient, _ReadRecordingStream, RawPeer]
]:
    TaskNotingClient.go = trio.Event()
    ours, theirs = trio.testing.memory_stream_pair()
    stream = _ReadRecordingStream(ours)
    async with acp_trio.connect_to_agent(stream, TaskNotingClient) as conn:
        peer = RawPeer(theirs)
        await initialize_raw(conn, peer)
        client = conn.client
        assert isinstance(client, TaskNotingClient)
        yield client, stream, peer


async def test_notifications_read_while_the_consumer_waits_idle_run_in_the_reading_task() -> (
    None
):
    # No task switch between reading a chunk's notifications and handling them.
    async with _noting_client() as (client, stream, peer):
        with trio.fail_after(10):
            for n in range(3):
                await peer.send(_update("s", f"u{n}"))
                await trio.testing.wait_all_tasks_blocked()
        assert client.texts() == ["u0", "u1", "u2"]
        assert set(client.tasks) <= set(stream.readers)


async def test_a_notification_handler_that_waits_holds_the_later_ones_back() -> None:
    # Taken while reading, it goes on in the reading task; reading goes on
    # in another task; the notifications after it wait for it, in order.
    async with _noting_client() as (client, _, peer):
        await peer.stream.send_all(
            b"".join(
                msgspec.json.encode(_update("s", text)) + b"\n"
                for text in ("wait", "b", "c")
            )
        )
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked()
            assert client.started == ["wait"]
            await peer.send({"jsonrpc": "2.0", "id": 7, "method": "no/such"})
            assert (await peer.receive())["error"]["code"] == -32601  # still reading
            assert client.started == ["wait"]
            TaskNotingClient.go.set()
            await trio.testing.wait_all_tasks_blocked()
        assert client.texts() == ["wait", "b", "c"]


async def test_the_end_of_input_read_with_notifications_still_ends_the_connection() -> (
    None
):
    # The last lines and the end arrive together (the engine is told both
    # before it is asked for events); the reading task handles the
    # notifications while the consuming task is idle, and one of them waits.
    async with _noting_client() as (client, _, peer):
        conn = client.conn
        receive_data = conn.engine.receive_data

        def then_the_end(data: bytes | bytearray) -> None:
            receive_data(data)
            if b"the end" in data:
                receive_data(b"")

        conn.engine.receive_data = then_the_end  # type: ignore[method-assign]
        await peer.stream.send_all(
            b"".join(
                msgspec.json.encode(_update("s", text)) + b"\n"
                for text in ("wait", "the end")
            )
        )
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked()
            assert client.started == ["wait"]
            TaskNotingClient.go.set()
            await conn.closed.wait()
        assert client.texts() == ["wait", "the end"]
