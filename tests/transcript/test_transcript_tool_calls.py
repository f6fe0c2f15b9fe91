"""Tool calls: created, patched (omitted unchanged, null clears), cancelled."""

from __future__ import annotations

import acp_trio
from _transcript_wire import both_versions, feed, text
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


def _create(vn, tool_call_id="call_001", **fields):
    """How each version reports a new tool call."""
    tag = "tool_call" if vn.PROTOCOL_VERSION == 1 else "tool_call_update"
    return {"sessionUpdate": tag, "toolCallId": tool_call_id, **fields}


def _update(tool_call_id="call_001", **fields):
    return {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}


def _content(value):
    return {"type": "content", "content": text(value)}


@both_versions
def test_tool_call_creates_a_tool_call(vn):
    t = feed(
        vn,
        _create(
            vn,
            title="Reading configuration file",
            kind="read",
            status="pending",
            locations=[{"path": "/home/user/project/config.json", "line": 3}],
            rawInput={"path": "config.json"},
        ),
    )
    call = t.tool_calls["call_001"]
    assert (call.title, call.kind, call.status) == (
        "Reading configuration file",
        "read",
        "pending",
    )
    assert call.locations[0].path == "/home/user/project/config.json"
    assert call.raw_input == {"path": "config.json"}
    assert (call.content, call.raw_output, call.meta) == ([], None, None)


@both_versions
def test_tool_call_defaults_are_pending_and_other(vn):
    t = feed(vn, _create(vn, title="Think"))
    call = t.tool_calls["call_001"]
    assert (call.status, call.kind) == ("pending", "other")


@both_versions
def test_tool_call_update_patches_and_omitted_fields_are_unchanged(vn):
    t = feed(
        vn,
        _create(vn, title="Analyzing Python code", kind="other", status="pending"),
        _update(status="in_progress"),
        _update(status="completed", content=[_content("Analysis complete")]),
    )
    call = t.tool_calls["call_001"]
    assert (call.title, call.kind, call.status) == (
        "Analyzing Python code",
        "other",
        "completed",
    )
    assert [c.content.text for c in call.content] == ["Analysis complete"]


@both_versions
def test_tool_call_update_null_clears(vn):
    t = feed(
        vn,
        _create(
            vn,
            title="Edit",
            kind="edit",
            content=[_content("x")],
            locations=[{"path": "/a"}],
            rawInput={"a": 1},
            rawOutput={"ok": True},
            _meta={"k": 1},
        ),
        _update(
            title=None,
            kind=None,
            content=None,
            locations=None,
            rawInput=None,
            rawOutput=None,
            _meta=None,
        ),
    )
    call = t.tool_calls["call_001"]
    assert call == acp_trio.ToolCallState(tool_call_id="call_001")


@both_versions
def test_tool_call_update_values_replace_whole_arrays(vn):
    t = feed(
        vn,
        _create(vn, title="Search", content=[_content("a"), _content("b")]),
        _update(content=[_content("c")], locations=[{"path": "/x"}]),
    )
    call = t.tool_calls["call_001"]
    assert [c.content.text for c in call.content] == ["c"]
    assert [loc.path for loc in call.locations] == ["/x"]


@both_versions
def test_tool_call_update_for_an_unknown_id_creates_it(vn):
    t = feed(vn, _update("call_new", status="in_progress"))
    call = t.tool_calls["call_new"]
    assert (call.title, call.status) == (None, "in_progress")


def test_v1_tool_call_again_replaces_the_tool_call():
    t = feed(
        v1,
        _create(v1, "c1", title="First", kind="read", rawInput={"a": 1}),
        _create(v1, "c2", title="Other"),
        _create(v1, "c1", title="Again"),
    )
    assert list(t.tool_calls) == ["c1", "c2"]
    call = t.tool_calls["c1"]
    assert (call.title, call.kind, call.raw_input) == ("Again", "other", None)


def test_v2_tool_call_content_chunk_appends_and_an_update_with_content_replaces():
    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call_001"}
    t = feed(
        v2,
        _create(v2, title="Run tests", kind="execute"),
        {**chunk, "content": _content("Checked syntax...")},
        {**chunk, "content": _content(" types...")},
    )
    assert [c.content.text for c in t.tool_calls["call_001"].content] == [
        "Checked syntax...",
        " types...",
    ]
    feed(
        v2,
        _update(status="completed", content=[_content("All good")]),
        {**chunk, "content": {"type": "diff", "path": "/a.py", "newText": "x"}},
        transcript=t,
    )
    content = t.tool_calls["call_001"].content
    assert [type(c).__name__ for c in content] == ["Content", "Diff"]


def test_v2_unknown_tool_call_content_is_kept():
    t = feed(v2, _create(v2, title="Draw", content=[{"type": "_acme_plot", "x": 1}]))
    [item] = t.tool_calls["call_001"].content
    assert item == {"type": "_acme_plot", "x": 1}


@both_versions
def test_tool_calls_are_kept_in_order_of_first_appearance(vn):
    t = feed(
        vn,
        _create(vn, "b", title="B"),
        _create(vn, "a", title="A"),
        _update("b", status="completed"),
    )
    assert list(t.tool_calls) == ["b", "a"]


@both_versions
def test_cancel_marks_every_tool_call_not_completed_or_failed_as_cancelled(vn):
    t = feed(
        vn,
        _create(vn, "pending", title="P", status="pending"),
        _create(vn, "running", title="R", status="in_progress"),
        _create(vn, "done", title="D", status="completed"),
        _create(vn, "broken", title="F", status="failed"),
    )
    assert t.mark_cancelled() == ["pending", "running"]
    assert {k: c.status for k, c in t.tool_calls.items()} == {
        "pending": "cancelled",
        "running": "cancelled",
        "done": "completed",
        "broken": "failed",
    }
    assert t.mark_cancelled() == []


@both_versions
def test_tool_call_updates_after_cancel_still_apply(vn):
    t = feed(vn, _create(vn, title="Write file", status="in_progress"))
    t.mark_cancelled()
    feed(vn, _update(status="completed", rawOutput={"bytes": 12}), transcript=t)
    call = t.tool_calls["call_001"]
    assert (call.status, call.raw_output) == ("completed", {"bytes": 12})


def test_apply_returns_the_tool_call_it_touched():
    t = acp_trio.SessionTranscript()
    touched = t.apply(acp_trio.tool_call("c1", "Read"))
    assert touched is t.tool_calls["c1"]
