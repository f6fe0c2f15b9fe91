"""Control messages never starve (issue 18, item 5): engine rules, no event loop.

At ``max_concurrent_requests`` the requests past the bound wait in the
ordered queue (counted in its bounds) and reading goes on: a
``session/cancel`` or ``$/cancel_request`` read then acts at once, and
responses are read.  Requests a client pipelines behind ``initialize`` wait
for its answer instead of being refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
from acp_core import (
    NEED_DATA,
    PAUSED,
    AgentRules,
    Engine,
    IncomingRequest,
    Limits,
    VersionChosen,
)
from acp_schema import v1
from test_engine_rules import INIT, Agent, Flag, Scope, events, line, replies


def prompt(ident: int, session: str) -> dict[str, Any]:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    return {"id": ident, "method": "session/prompt", "params": params}


def bounded_agent(max_requests: int, **bounds: int) -> Engine:
    limits = dataclasses.replace(
        Limits(), max_concurrent_requests=max_requests, **bounds
    )
    engine = Engine(AgentRules([1]), limits)
    engine.receive_data(line(INIT))
    (chosen,) = events(engine)
    assert isinstance(chosen, VersionChosen)
    engine.set_handler(Agent())
    (init,) = events(engine)
    answer = engine.answer(init, v1.InitializeResponse(protocol_version=1))
    engine.request_done(init, answer)
    return engine


def run(request: IncomingRequest) -> Scope:
    scope = Scope()
    request.running.handle = scope
    return scope


def finish(engine: Engine, request: IncomingRequest) -> bytes | None:
    request.running.handle = None
    return engine.request_done(request, engine.answer_cancelled(request))


def test_a_request_past_the_bound_waits_in_the_queue_and_reading_goes_on() -> None:
    engine = bounded_agent(1)
    engine.receive_data(line(prompt(1, "a")) + line(prompt(2, "b")))
    (first,) = events(engine)  # the second waits: no PAUSED, no event
    assert isinstance(first, IncomingRequest) and first.id == 1
    assert engine.queue.waiting == 1 and engine.queue_blocked and not engine.queue_ready
    assert engine.next_queued() is None
    finish(engine, first)
    second = engine.next_queued()
    assert isinstance(second, IncomingRequest) and second.id == 2
    assert engine.queue.waiting == 0 and len(engine.running_requests()) == 1


def test_at_the_request_bound_session_cancel_is_read_and_acts_at_once() -> None:
    engine = bounded_agent(1)
    engine.receive_data(line(prompt(1, "a")) + line(prompt(2, "b")))
    (first,) = events(engine)
    scope = run(first)
    cancels = [{"method": "session/cancel", "params": {"sessionId": s}} for s in "ab"]
    engine.receive_data(b"".join(line(c) for c in cancels))
    assert engine.next_event() is NEED_DATA
    assert scope.cancelled  # the running prompt: its handler is cancelled
    finish(engine, first)
    second = engine.next_queued()  # the waiting one: cancelled before it started
    assert isinstance(second, IncomingRequest)
    assert second.running.cancel_reason == "session"
    answer = msgspec.json.decode(engine.answer_cancelled(second))
    assert answer["result"] == {"stopReason": "cancelled"}


def test_at_the_request_bound_cancel_request_is_read_and_acts_at_once() -> None:
    engine = bounded_agent(1)
    engine.receive_data(line(prompt(1, "a")) + line(prompt(2, "b")))
    (first,) = events(engine)
    scope = run(first)
    engine.receive_data(
        line({"method": "$/cancel_request", "params": {"requestId": 1}})
    )
    assert engine.next_event() is NEED_DATA
    assert scope.cancelled and first.running.cancel_reason == "request"


def test_requests_waiting_for_a_slot_count_in_the_queue_bounds() -> None:
    engine = bounded_agent(1, notification_queue_size=2)
    engine.receive_data(b"".join(line(prompt(i, str(i))) for i in range(1, 5)))
    (first, paused) = events(engine)
    assert first.id == 1 and paused is PAUSED
    assert engine.queue.waiting == 2 and engine.pause_reason == "notifications"


def test_a_request_waiting_while_a_running_handler_waits_on_the_peer_is_refused() -> (
    None
):
    engine = bounded_agent(1)
    engine.receive_data(line(prompt(1, "a")) + line(prompt(2, "b")))
    (running,) = events(engine)
    assert isinstance(running, IncomingRequest)
    call = engine.start_call(  # the running handler asks the client
        engine.schema.outgoing["session/request_permission"],
        v1.RequestPermissionRequest(
            session_id="a",
            tool_call=v1.ToolCallUpdate(tool_call_id="c"),
            options=[],
        ),
        Flag(),
        1,  # ORIGIN_REQUEST
    )
    assert engine.queue_ready  # the answer it waits for may be behind: no waiting
    assert engine.next_queued() is None
    (refused,) = replies(engine)
    assert refused["id"] == 2 and refused["error"]["code"] == -32603
    assert refused["error"]["data"] == {"maxConcurrentRequests": 1}
    engine.call_finished(call)


def test_requests_pipelined_behind_initialize_wait_for_its_answer() -> None:
    engine = Engine(AgentRules([1]))
    new = {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    engine.receive_data(line(INIT) + line(new))
    assert isinstance(engine.next_event(), VersionChosen)
    engine.set_handler(Agent())  # as an adapter does, before the next event
    (init,) = events(engine)  # session/new read, accepted, waiting
    assert engine.queue.waiting == 1 and engine.take_outbox() == []
    assert engine.next_queued() is None
    answer = engine.answer(init, v1.InitializeResponse(protocol_version=1))
    engine.request_done(init, answer)
    request = engine.next_queued()
    assert isinstance(request, IncomingRequest) and request.id == 1


def test_requests_pipelined_behind_a_failed_initialize_are_refused_not_initialized() -> (
    None
):
    engine = Engine(AgentRules([1]))
    new = {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    engine.receive_data(line(INIT) + line(new))
    assert isinstance(engine.next_event(), VersionChosen)
    engine.set_handler(Agent())
    (init,) = events(engine)
    engine.request_done(init, engine.answer_exception(init, RuntimeError("no")))
    assert engine.next_queued() is None
    (refused,) = replies(engine)
    assert refused["id"] == 1 and refused["error"]["code"] == -32600
    assert "not initialized" in refused["error"]["message"]
