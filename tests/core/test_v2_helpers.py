"""The agent-side helpers and the transcript on the v2 draft's types.

``ToolCallTracker(version=v2)`` gives v2's ``tool_call_update`` upserts,
``PermissionBroker(..., version=v2)`` asks with the tool call as the request's
subject, and ``SessionTranscript`` folds v2's tool-call fields, its metadata
patches and a permission request's tool call.  Both helpers are typed by
their version (mypy --strict and pyright strict on ``helpers_typing_cases.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import msgspec
import pytest
from acp_core import (
    PermissionBroker,
    SessionTranscript,
    ToolCallTracker,
    default_permission_options,
    notification,
)
from acp_schema import v1, v2

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASES = HERE / "helpers_typing_cases.py"
TIMEOUT = 300


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("suspended")


class V2Client:
    """Answers each permission request with ``outcome``; records the requests."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.requests: list[v2.RequestPermissionRequest] = []

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        self.requests.append(params)
        return v2.RequestPermissionResponse(outcome=self.outcome)


def test_the_tracker_speaks_the_v2_draft_given_version_v2() -> None:
    tracker = ToolCallTracker(version=v2)
    start = tracker.start("run", "Run tests", kind="execute", name="bash")
    assert type(start) is v2.SessionUpdateToolCallUpdate  # v2 has no tool_call
    assert (start.name, start.status, start.title) == (
        "bash",
        "in_progress",
        "Run tests",
    )
    cancel = v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities())
    update = tracker.progress("run", status="paused", capabilities=cancel)
    assert type(update) is v2.SessionUpdateToolCallUpdate
    last = tracker.append_text("run", "3 passed", status="completed")
    assert last.content == [v2.Content(content=v2.TextContent(text="3 passed"))]
    # a v2 client folding what was sent sees the tracker's state
    client = SessionTranscript(version=v2)
    for sent in (start, update, last):
        client.apply(notification("s1", sent))
    state = tracker.state("run")
    assert client.tool_calls[tracker.tool_call_id("run")] == state
    assert (state.name, state.capabilities, state.status) == (
        "bash",
        cancel,
        "completed",
    )
    call = tracker.tool_call("run")
    assert type(call) is v2.ToolCallUpdate
    assert (call.name, call.capabilities, call.kind) == ("bash", cancel, "execute")
    assert v2.decode(v2.encode(call), v2.ToolCallUpdate) == call
    v1_tracker = ToolCallTracker()
    assert v1_tracker.start("x", "X", name="bash").name == "bash"  # v1 has it too
    with pytest.raises(
        ValueError, match=r"capabilities: no such field in acp_schema\.v1"
    ):
        v1_tracker.progress("x", capabilities=cancel)


def test_the_broker_asks_a_v2_client_about_the_tool_call_as_its_subject() -> None:
    tracker = ToolCallTracker(version=v2)
    tracker.start("write", "Write out.txt", kind="edit")
    client = V2Client(v2.SelectedPermissionOutcome(option_id="approve"))
    broker = PermissionBroker(client, "s1", tracker=tracker, version=v2)
    permission = run(broker.request("write", description="overwrites out.txt"))
    assert permission.allowed and not permission.always and not permission.cancelled
    assert permission.option == default_permission_options(version=v2)[0]
    (request,) = client.requests
    assert type(request) is v2.RequestPermissionRequest
    assert request.title == "Write out.txt"  # the tool call's title by default
    assert request.description == "overwrites out.txt"
    assert request.subject == v2.ToolCallPermissionSubject(
        tool_call=tracker.tool_call("write")
    )
    assert all(type(o) is v2.PermissionOption for o in request.options)
    # what goes on the wire is a valid v2 request
    wire = v2.encode(request)
    assert v2.decode(wire, v2.RequestPermissionRequest) == request
    untitled = v2.ToolCallUpdate(tool_call_id="t9")
    run(broker.request(untitled))
    assert client.requests[-1].title == "t9"  # no title: the tool call's id
    cancelled = PermissionBroker(
        V2Client(v2.CancelledPermissionOutcome()), "s1", version=v2
    )
    answer = run(cancelled.request(untitled))
    assert answer.cancelled and not answer.allowed and answer.option is None


def test_an_unknown_v2_permission_outcome_is_neither_approval_nor_cancellation() -> (
    None
):
    newer = v2.decode(
        b'{"outcome": {"outcome": "_deferred", "optionId": "approve"}}',
        v2.RequestPermissionResponse,
    ).outcome
    broker = PermissionBroker(V2Client(newer), "s1", version=v2)
    permission = run(broker.request(v2.ToolCallUpdate(tool_call_id="t1")))
    assert permission.option is None
    assert not permission.allowed and not permission.cancelled


def test_a_broker_and_its_tracker_speak_one_version() -> None:
    with pytest.raises(ValueError, match="pass the same version= to both"):
        PermissionBroker(V2Client(None), "s1", tracker=ToolCallTracker(), version=v2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="title and description are v2's"):
        run(
            PermissionBroker(V2Client(None), "s1").request(  # type: ignore[arg-type]
                v1.ToolCallUpdate(tool_call_id="t1"), title="Write?"
            )
        )


def test_v2_tool_calls_keep_their_name_and_capabilities() -> None:
    transcript = SessionTranscript(version=v2)
    cancel = v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities())
    transcript.apply(
        v2.SessionUpdateToolCallUpdate(
            tool_call_id="c1", name="grep", capabilities=cancel
        )
    )
    transcript.apply(
        v2.SessionUpdateToolCallUpdate(tool_call_id="c1", status="completed")
    )
    state = transcript.tool_calls["c1"]
    assert (state.name, state.capabilities) == ("grep", cancel)  # omitted: kept
    transcript.apply(
        v2.SessionUpdateToolCallUpdate(tool_call_id="c1", name=None, capabilities=None)
    )
    assert (state.name, state.capabilities) == (None, None)  # null: cleared


def test_v2_meta_is_patched_by_top_level_key() -> None:
    transcript = SessionTranscript(version=v2)
    first = {"a": 1, "b": {"x": 1}}
    second = {"a": None, "b": {"y": 2}, "c": 3}
    patched = {"b": {"y": 2}, "c": 3}  # a removed, b replaced (not merged), c added
    for meta in (first, second):
        transcript.apply(v2.SessionUpdateToolCallUpdate(tool_call_id="c1", meta=meta))
        transcript.apply(v2.AgentMessage(message_id="m1", meta=meta))
        transcript.apply(v2.SessionInfoUpdate(meta=meta))
    assert transcript.tool_calls["c1"].meta == patched
    assert transcript.messages[0].meta == patched
    assert transcript.session_info.meta == patched
    transcript.apply(v2.SessionInfoUpdate(meta=None))
    assert transcript.session_info.meta is None  # null: cleared
    v1_transcript = SessionTranscript(version=v1)
    for meta in (first, second):
        v1_transcript.apply(
            v1.SessionUpdateToolCallUpdate(tool_call_id="c1", meta=meta)
        )
    assert v1_transcript.tool_calls["c1"].meta == second  # v1: replaced whole


def test_a_permission_requests_tool_call_is_folded_into_the_transcript() -> None:
    transcript = SessionTranscript("s1", version=v2)
    request = v2.RequestPermissionRequest(
        session_id="s1",
        title="Run?",
        subject=v2.ToolCallPermissionSubject(
            tool_call=v2.ToolCallUpdate(tool_call_id="new", title="rm -rf build")
        ),
        options=list(default_permission_options(version=v2)),
    )
    state = transcript.apply_permission_request(request)
    assert state is transcript.tool_calls["new"]  # a first-seen id creates the call
    assert (state.title, state.status) == ("rm -rf build", "pending")
    command = msgspec.structs.replace(
        request, subject=v2.CommandPermissionSubject(command="make", cwd="/w")
    )
    assert transcript.apply_permission_request(command) is None
    with pytest.raises(ValueError, match="transcript is 's1'"):
        transcript.apply_permission_request(
            msgspec.structs.replace(request, session_id="s2")
        )


def test_the_helpers_are_typed_by_their_version() -> None:
    env = {**os.environ, "MYPYPATH": f"{ROOT / 'generated'}:{ROOT / 'runtime'}"}
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(CASES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout
    pyright = Path(sys.executable).with_name("pyright")
    if not pyright.exists():
        pytest.skip("pyright is not installed beside this python")
    checked = subprocess.run(
        [str(pyright), "--pythonpath", sys.executable, str(CASES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout
