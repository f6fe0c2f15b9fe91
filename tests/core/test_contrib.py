"""The official SDK's agent-side chores, typed, on msgspec: ToolCallTracker
(the updates to send, folded into the current state) and PermissionBroker
(the request for a tracked tool call, the user's answer read)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import msgspec
import pytest
from acp_core import (
    Permission,
    PermissionBroker,
    SessionTranscript,
    ToolCallTracker,
    default_permission_options,
)
from acp_schema import v1


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("suspended")


def test_the_tracker_folds_tool_call_and_tool_call_update_into_the_current_state() -> (
    None
):
    tracker = ToolCallTracker()
    start = tracker.start("read", "Read config", kind="read", raw_input={"p": "/c"})
    assert isinstance(start, v1.ToolCall) and start.tool_call_id == "call_1"
    assert start.status == "in_progress"
    update = tracker.progress("read", status="completed", content=["42 lines"])
    assert isinstance(update, v1.SessionUpdateToolCallUpdate)
    assert update.title is msgspec.UNSET  # only the fields given are sent
    state = tracker.state("read")
    assert (state.title, state.kind, state.status) == (
        "Read config",
        "read",
        "completed",
    )
    assert state.raw_input == {"p": "/c"}
    assert state.content == [v1.Content(content=v1.TextContent(text="42 lines"))]
    # a client folding what was sent (SessionTranscript) sees the same state
    client = SessionTranscript(version=v1)
    client.apply(start)
    client.apply(update)
    assert client.tool_calls["call_1"] == state
    tracker.progress("read", title=None)  # null clears
    assert tracker.state("read").title is None


def test_the_tracker_streams_text_and_gives_the_tool_call_for_a_permission() -> None:
    tracker = ToolCallTracker(id_factory=lambda: "fixed")
    tracker.start("run", "Run tests", kind="execute")
    tracker.append_text("run", "collected ")
    last = tracker.append_text("run", "3 items", status="in_progress")
    assert last.content == [
        v1.Content(content=v1.TextContent(text="collected 3 items"))
    ]
    call = tracker.tool_call("run")
    assert isinstance(call, v1.ToolCallUpdate) and call.tool_call_id == "fixed"
    assert (call.title, call.kind, call.status) == (
        "Run tests",
        "execute",
        "in_progress",
    )
    assert v1.decode(v1.encode(call), v1.ToolCallUpdate) == call


def test_the_tracker_refuses_unknown_and_duplicate_keys_and_forgets() -> None:
    tracker = ToolCallTracker()
    with pytest.raises(KeyError, match="no tool call 'x'"):
        tracker.progress("x", status="completed")
    tracker.start("x", "X")
    with pytest.raises(KeyError, match="tracked already"):
        tracker.start("x", "X again")
    assert "x" in tracker and len(tracker) == 1
    tracker.forget("x")
    assert "x" not in tracker and len(tracker) == 0
    assert tracker.start("x", "X").tool_call_id == "call_2"  # ids never reused


class Client:
    """Answers each permission request with ``answer``; records the requests."""

    def __init__(self, answer: v1.SelectedPermissionOutcome | None) -> None:
        self.answer = answer
        self.requests: list[v1.RequestPermissionRequest] = []

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.requests.append(params)
        outcome = self.answer or v1.RequestPermissionOutcomeCancelled()
        return v1.RequestPermissionResponse(outcome=outcome)


def test_the_broker_asks_about_a_tracked_call_with_the_default_options() -> None:
    tracker = ToolCallTracker()
    tracker.start("write", "Write out.txt", kind="edit")
    client = Client(v1.SelectedPermissionOutcome(option_id="approve_for_session"))
    broker = PermissionBroker(client, "s1", tracker=tracker)
    permission = run(broker.request("write"))
    assert isinstance(permission, Permission)
    assert permission.allowed and permission.always and not permission.cancelled
    (request,) = client.requests
    assert request.session_id == "s1" and request.tool_call == tracker.tool_call(
        "write"
    )
    assert request.options == list(default_permission_options())
    assert [o.kind for o in request.options] == [
        "allow_once",
        "allow_always",
        "reject_once",
    ]


def test_the_broker_reads_a_rejection_and_a_cancelled_turn() -> None:
    call = v1.ToolCallUpdate(tool_call_id="t1", title="rm -rf build")
    rejected = run(
        PermissionBroker(
            Client(v1.SelectedPermissionOutcome(option_id="reject")), "s1"
        ).request(call)
    )
    assert not rejected.allowed and not rejected.cancelled
    assert rejected.option is not None and rejected.option.kind == "reject_once"
    cancelled = run(PermissionBroker(Client(None), "s1").request(call))
    assert cancelled.cancelled and not cancelled.allowed and cancelled.option is None


def test_the_broker_refuses_an_answer_it_did_not_offer_and_a_key_without_tracker() -> (
    None
):
    call = v1.ToolCallUpdate(tool_call_id="t1")
    liar = PermissionBroker(
        Client(v1.SelectedPermissionOutcome(option_id="sudo")), "s1"
    )
    with pytest.raises(ValueError, match="'sudo', which was not offered"):
        run(liar.request(call))
    with pytest.raises(ValueError, match="a key needs a tracker"):
        run(PermissionBroker(Client(None), "s1").request("write"))
    with pytest.raises(ValueError, match="at least one option"):
        PermissionBroker(Client(None), "s1", options=[])
