# pyright: strict
"""Type-checked, never run: the helpers are typed by their version.

tests/core/test_v2_helpers.py runs ``mypy --strict`` and pyright (strict) on
this file: every line must pass, and an ``assert_type`` fails when a type is
wrong.
"""

from __future__ import annotations

from acp_core import (
    Permission,
    PermissionBroker,
    SessionTranscript,
    ToolCallState,
    ToolCallTracker,
    default_permission_options,
)
from acp_schema import v1, v2
from typing_extensions import assert_type


async def v1_agent(client: v1.Client) -> None:
    tracker = ToolCallTracker()
    assert_type(tracker.start("k", "Read"), v1.ToolCall)
    assert_type(
        tracker.progress("k", status="completed"), v1.SessionUpdateToolCallUpdate
    )
    assert_type(tracker.append_text("k", "x"), v1.SessionUpdateToolCallUpdate)
    assert_type(tracker.tool_call("k"), v1.ToolCallUpdate)
    broker = PermissionBroker(client, "s1", tracker=tracker)
    permission = await broker.request("k")
    assert_type(
        permission, Permission[v1.PermissionOption, v1.RequestPermissionResponse]
    )
    assert_type(permission.option, "v1.PermissionOption | None")
    assert_type(default_permission_options(), "tuple[v1.PermissionOption, ...]")


async def v2_agent(client: v2.Client) -> None:
    tracker = ToolCallTracker(version=v2)
    assert_type(tracker.start("k", "Run", name="bash"), v2.SessionUpdateToolCallUpdate)
    assert_type(tracker.progress("k", status="paused"), v2.SessionUpdateToolCallUpdate)
    assert_type(tracker.tool_call("k"), v2.ToolCallUpdate)
    broker = PermissionBroker(client, "s1", tracker=tracker, version=v2)
    permission = await broker.request("k", title="Run the tests?")
    assert_type(
        permission, Permission[v2.PermissionOption, v2.RequestPermissionResponse]
    )
    assert_type(permission.response, v2.RequestPermissionResponse)
    options = default_permission_options(version=v2)
    assert_type(options, "tuple[v2.PermissionOption, ...]")
    await broker.request(v2.ToolCallUpdate(tool_call_id="t1"), options=options)


def v2_client(request: v2.RequestPermissionRequest) -> None:
    transcript = SessionTranscript(version=v2)
    assert_type(transcript.apply_permission_request(request), ToolCallState | None)
    state = transcript.tool_calls["t1"]
    assert_type(state.name, "str | None")
    assert_type(state.capabilities, "v2.ToolCallCapabilities | None")
