"""The engine's rules, driven with plain calls: no event loop, no I/O.

Two engines (an agent's and a client's) are wired back to back: the bytes
one builds are what the other receives.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from acp_core import (
    END_OF_INPUT,
    NEED_DATA,
    ORIGIN_REQUEST,
    PAUSED,
    AgentRules,
    ClientRules,
    CloseConnection,
    ConnectionClosed,
    Engine,
    IncomingRequest,
    ProtocolVersionError,
    QueuedNotification,
    VersionChosen,
)
from acp_schema import v1


class Flag:
    """A waiter: what the engine sets when a call's answer is there."""

    def __init__(self) -> None:
        self.is_set = False

    def set(self) -> None:
        self.is_set = True


class Scope:
    """A running handler's handle: what the engine cancels."""

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Agent:
    async def initialize(self, p: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_prompt(self, p: v1.PromptRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")

    async def session_new(self, p: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_cancel(self, p: v1.CancelNotification) -> None:
        pass


class Client:
    async def session_update(self, p: v1.SessionNotification) -> None:
        pass

    async def session_request_permission(
        self, p: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("not called in these tests")


def line(obj: Any) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", **obj}) + b"\n"


def events(engine: Engine) -> list[Any]:
    out = []
    while (event := engine.next_event()) is not NEED_DATA:
        out.append(event)
        if event is END_OF_INPUT or event is PAUSED:
            break
    return out


def replies(engine: Engine) -> list[Any]:
    return [msgspec.json.decode(b) for b in engine.take_outbox()]


INIT = {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
UPDATE = {
    "method": "session/update",
    "params": {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        },
    },
}


def initialized_agent() -> tuple[Engine, IncomingRequest]:
    engine = Engine(AgentRules([1]))
    engine.receive_data(line(INIT))
    (chosen,) = events(engine)
    assert isinstance(chosen, VersionChosen) and chosen.version == 1
    engine.set_handler(Agent())
    (init,) = events(engine)
    assert isinstance(init, IncomingRequest)
    answer = engine.answer(init, v1.InitializeResponse(protocol_version=1))
    assert engine.request_done(init, answer) == answer
    return engine, init


def test_initialize_is_an_explicit_step_that_picks_the_version_before_its_handler() -> (
    None
):
    engine = Engine(AgentRules([1, 2]))
    engine.receive_data(line(INIT))
    (chosen,) = events(engine)  # no handler object yet: the adapter builds it now
    assert isinstance(chosen, VersionChosen) and chosen.version == 1
    assert engine.schema.version == 1
    engine.set_handler(Agent())
    (init,) = events(engine)
    assert isinstance(init, IncomingRequest)
    assert isinstance(init.params, v1.InitializeRequest)


def test_an_unoffered_requested_version_gets_the_agents_latest() -> None:
    engine = Engine(AgentRules([1]))
    engine.receive_data(line({**INIT, "params": {"protocolVersion": 99}}))
    (chosen,) = events(engine)
    assert isinstance(chosen, VersionChosen) and chosen.version == 1


def test_requests_before_initialize_are_refused_invalid_request() -> None:
    engine = Engine(AgentRules([1]))
    engine.receive_data(line({"id": 5, "method": "session/new", "params": {}}))
    assert events(engine) == []
    (error,) = replies(engine)
    assert error["id"] == 5 and error["error"]["code"] == -32600
    assert error["error"]["data"] == {"method": "session/new"}


def test_the_initialize_answer_carries_the_negotiated_version_and_ends_the_gate() -> (
    None
):
    engine, _ = initialized_agent()
    assert engine.rules.init_state == "done"  # type: ignore[union-attr]
    engine.receive_data(line({**INIT, "id": 1}))
    assert events(engine) == []
    (again,) = replies(engine)
    assert again["error"]["message"] == "Invalid request: already initialized"


def test_a_request_waits_behind_the_notifications_received_before_it() -> None:
    engine, _ = initialized_agent()
    cancel = {"method": "session/cancel", "params": {"sessionId": "s9"}}
    new = {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    engine.receive_data(line(cancel) + line(new))
    assert events(engine) == []  # the request is held in the queue
    first = engine.next_queued()
    assert isinstance(first, QueuedNotification) and first.name == "session/cancel"
    assert (
        engine.queue.backlog == 2
    )  # one consumer: the next item once this one's handler returned
    engine.notification_done(first)
    request = engine.next_queued()
    assert isinstance(request, IncomingRequest) and request.id == 1


def test_session_cancel_cancels_the_running_prompt_answered_cancelled() -> None:
    engine, _ = initialized_agent()
    prompt = {
        "id": 3,
        "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": []},
    }
    engine.receive_data(line(prompt))
    (request,) = events(engine)
    request.running.handle = scope = Scope()
    engine.receive_data(
        line({"method": "session/cancel", "params": {"sessionId": "s1"}})
    )
    events(engine)
    assert scope.cancelled and request.running.cancel_reason == "session"
    answer = engine.answer_cancelled(request)
    assert msgspec.json.decode(answer)["result"] == {"stopReason": "cancelled"}


def test_cancel_request_cancels_that_request_answered_32800() -> None:
    engine, _ = initialized_agent()
    new = {"id": 4, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    engine.receive_data(line(new))
    (request,) = events(engine)
    request.running.handle = scope = Scope()
    engine.receive_data(
        line({"method": "$/cancel_request", "params": {"requestId": 4}})
    )
    events(engine)
    assert scope.cancelled
    assert (
        msgspec.json.decode(engine.answer_cancelled(request))["error"]["code"] == -32800
    )


def test_a_batch_is_answered_as_one_array_once_every_member_is() -> None:
    engine, _ = initialized_agent()
    new = {"id": 7, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    engine.receive_data(
        b"[" + line(new).strip() + b', {"jsonrpc":"2.0","id":8,"method":"nope"}]\n'
    )
    (request,) = events(engine)
    assert engine.take_outbox() == []  # held until the whole batch is answered
    out = engine.request_done(
        request, engine.answer(request, v1.NewSessionResponse(session_id="s"))
    )
    assert out is not None
    ids = sorted(m["id"] for m in msgspec.json.decode(out))
    assert ids == [7, 8]


def test_a_handler_result_of_the_wrong_type_is_answered_internal_error() -> None:
    engine, _ = initialized_agent()
    new = {"id": 9, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    engine.receive_data(line(new))
    (request,) = events(engine)
    answer = msgspec.json.decode(engine.answer(request, {"sessionId": "s"}))
    assert answer["error"]["code"] == -32603


def client_pair() -> tuple[Engine, Engine]:
    client = Engine(ClientRules([1]))
    client.set_handler(Client())
    return client, Engine(AgentRules([1]))


def test_the_client_fails_initialize_answered_in_a_version_it_does_not_offer() -> None:
    client = Engine(ClientRules([1]))
    waiter = Flag()
    call = client.start_call(
        client.schema.outgoing["initialize"],
        v1.InitializeRequest(protocol_version=1),
        waiter,
    )
    client.receive_data(line({"id": call.id, "result": {"protocolVersion": 7}}))
    (close,) = events(client)
    assert isinstance(close, CloseConnection)
    assert waiter.is_set
    with pytest.raises(ProtocolVersionError):
        call.result()


def test_the_client_serves_nothing_before_the_initialize_answer() -> None:
    client, _ = client_pair()
    client.receive_data(
        line(
            {
                "id": 1,
                "method": "fs/read_text_file",
                "params": {"sessionId": "s", "path": "/x"},
            }
        )
    )
    assert events(client) == []
    (error,) = replies(client)
    assert error["error"]["code"] == -32600


def initialized_client(caps: v1.ClientCapabilities | None = None) -> Engine:
    client, _ = client_pair()
    waiter = Flag()
    request = v1.InitializeRequest(
        protocol_version=1, client_capabilities=caps or v1.ClientCapabilities()
    )
    call = client.start_call(client.schema.outgoing["initialize"], request, waiter)
    client.receive_data(line({"id": call.id, "result": {"protocolVersion": 1}}))
    assert events(client) == []
    assert waiter.is_set and isinstance(call.result(), v1.InitializeResponse)
    client.call_finished(call)
    return client


def test_the_client_refuses_fs_requests_it_did_not_advertise() -> None:
    client = initialized_client()
    client.receive_data(
        line(
            {
                "id": 2,
                "method": "fs/read_text_file",
                "params": {"sessionId": "s", "path": "/x"},
            }
        )
    )
    assert events(client) == []
    (error,) = replies(client)
    assert error["error"]["code"] == -32601


def test_the_client_refuses_a_relative_path_with_invalid_params() -> None:
    caps = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))
    client = initialized_client(caps)
    client.receive_data(
        line(
            {
                "id": 2,
                "method": "fs/read_text_file",
                "params": {"sessionId": "s", "path": "../etc/passwd"},
            }
        )
    )
    assert events(client) == []
    (error,) = replies(client)
    assert error["error"]["code"] == -32602


def test_a_response_waits_behind_earlier_notifications_and_holds_later_ones() -> None:
    client = initialized_client()
    waiter = Flag()
    new = client.start_call(
        client.schema.outgoing["session/new"],
        v1.NewSessionRequest(cwd="/", mcp_servers=[]),
        waiter,
    )
    client.receive_data(
        line(UPDATE)
        + line({"id": new.id, "result": {"sessionId": "s1"}})
        + line(UPDATE)
    )
    assert events(client) == []
    first = client.next_queued()
    assert isinstance(first, QueuedNotification)
    assert not waiter.is_set  # the response waits for the update before it
    client.notification_done(first)
    assert client.next_queued() is None  # released; the caller goes first
    assert waiter.is_set and client.queue_blocked
    client.call_finished(new)
    assert isinstance(client.next_queued(), QueuedNotification)


def test_a_caller_that_left_before_its_answer_sends_cancel_request() -> None:
    client = initialized_client()
    call = client.start_call(
        client.schema.outgoing["session/new"],
        v1.NewSessionRequest(cwd="/", mcp_servers=[]),
        Flag(),
        ORIGIN_REQUEST,
    )
    assert client.calls.in_requests == 1
    cancel = client.call_finished(call)
    assert cancel is not None
    assert msgspec.json.decode(cancel)["params"] == {"requestId": call.id}
    assert client.calls.in_requests == 0


def test_end_of_input_fails_every_pending_call() -> None:
    client = initialized_client()
    waiter = Flag()
    call = client.start_call(
        client.schema.outgoing["session/new"],
        v1.NewSessionRequest(cwd="/", mcp_servers=[]),
        waiter,
    )
    client.receive_eof()
    assert events(client) == [END_OF_INPUT]
    assert waiter.is_set
    with pytest.raises(ConnectionClosed):
        call.result()
    with pytest.raises(ConnectionClosed):
        client.start_call(
            client.schema.outgoing["session/new"],
            v1.NewSessionRequest(cwd="/", mcp_servers=[]),
            Flag(),
        )
