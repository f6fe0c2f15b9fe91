"""Plan, usage, mode, config options, commands, session info, other updates."""

from __future__ import annotations

import json

import acp_trio
import pytest
from _transcript_wire import SESSION, both_versions, chunk, feed, notification, text
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


def _entry(content, status="pending", priority="medium"):
    return {"content": content, "priority": priority, "status": status}


def test_plan_is_replaced_whole():
    t = feed(
        v1,
        {
            "sessionUpdate": "plan",
            "entries": [
                _entry("Check for syntax errors", priority="high"),
                _entry("Identify potential type issues"),
                _entry("Suggest improvements", priority="low"),
            ],
        },
        {
            "sessionUpdate": "plan",
            "entries": [
                _entry("Check for syntax errors", "completed", "high"),
                _entry("Review error handling patterns", "in_progress"),
            ],
        },
    )
    assert [(e.content, e.status) for e in t.plan] == [
        ("Check for syntax errors", "completed"),
        ("Review error handling patterns", "in_progress"),
    ]
    assert list(t.plans) == [None]


@pytest.mark.parametrize("vn", [v2, v1], ids=["v2", "v1"])
def test_plan_update_replaces_the_plan_with_its_id(vn):
    key = _plan_id_key(vn)

    def plan_update(plan_id, *entries):
        return {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", key: plan_id, "entries": list(entries)},
        }

    t = feed(
        vn,
        plan_update("plan-1", _entry("Analyze"), _entry("Refactor")),
        plan_update("plan-2", _entry("Side quest")),
        plan_update("plan-1", _entry("Analyze", "completed")),
    )
    assert {k: [e.content for e in p.entries] for k, p in t.plans.items()} == {
        "plan-1": ["Analyze"],
        "plan-2": ["Side quest"],
    }
    # `plan` is the plan updated last
    assert [(e.content, e.status) for e in t.plan] == [("Analyze", "completed")]


def _plan_id_key(vn):
    return "planId" if vn is v1 else "id"  # v1's plan_update (in preview) says planId


@pytest.mark.parametrize("vn", [v1, v2], ids=["v1", "v2"])
def test_unstable_plan_removed_drops_that_plan(vn):
    key = _plan_id_key(vn)
    items = {"type": "items", "entries": [_entry("Analyze")]}
    t = feed(
        vn,
        {"sessionUpdate": "plan_update", "plan": {**items, key: "plan-1"}},
        {"sessionUpdate": "plan_update", "plan": {**items, key: "plan-2"}},
        {"sessionUpdate": "plan_removed", key: "plan-2"},
    )
    assert list(t.plans) == ["plan-1"]
    assert t.plan == []  # the plan updated last is gone
    feed(vn, {"sessionUpdate": "plan_removed", key: "plan-1"}, transcript=t)
    assert t.plans == {}


def test_v2_plan_of_an_unknown_type_is_kept_raw():
    raw = {"type": "_acme_outline", "id": "plan-o", "outline": "- [ ] step"}
    t = feed(v2, {"sessionUpdate": "plan_update", "plan": raw})
    assert t.plans["plan-o"].raw == raw
    assert t.plan == []


def test_no_plan_yet_is_an_empty_plan():
    assert acp_trio.SessionTranscript().plan == []


@both_versions
def test_usage_update_keeps_used_size_and_cost(vn):
    t = feed(
        vn,
        {
            "sessionUpdate": "usage_update",
            "used": 53000,
            "size": 200000,
            "cost": {"amount": 0.045, "currency": "USD"},
        },
    )
    assert (t.usage.used, t.usage.size) == (53000, 200000)
    assert (t.usage.cost.amount, t.usage.cost.currency) == (0.045, "USD")
    feed(
        vn,
        {"sessionUpdate": "usage_update", "used": 60000, "size": 200000},
        transcript=t,
    )
    assert t.usage.used == 60000
    assert t.usage.cost is v1.UNSET  # each usage_update is the whole state


def test_current_mode_update_sets_the_current_mode():
    t = feed(
        v1,
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    )
    assert t.current_mode_id == "code"


@both_versions
def test_config_option_update_replaces_the_options(vn):
    def option(value):
        return {
            "id": "model",
            "name": "Model",
            "type": "select",
            "currentValue": value,
            "options": [
                {"value": "model-1", "name": "Model 1"},
                {"value": "model-2", "name": "Model 2"},
            ],
        }

    t = feed(
        vn,
        {"sessionUpdate": "config_option_update", "configOptions": [option("model-1")]},
        {"sessionUpdate": "config_option_update", "configOptions": [option("model-2")]},
    )
    [model] = t.config_options
    assert model.current_value == "model-2"


@both_versions
def test_available_commands_update_replaces_the_commands(vn):
    t = feed(
        vn,
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {
                    "name": "web",
                    "description": "Search the web",
                    "input": {"hint": "query"},
                },
                {"name": "test", "description": "Run tests"},
            ],
        },
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"name": "plan", "description": "Make a plan"}],
        },
    )
    assert [c.name for c in t.available_commands] == ["plan"]


@both_versions
def test_session_info_update_patches_title_updated_at_and_meta(vn):
    t = feed(
        vn,
        {
            "sessionUpdate": "session_info_update",
            "title": "Implement user authentication",
            "updatedAt": "2025-01-01T00:00:00Z",
            "_meta": {"tags": ["feature", "auth"]},
        },
        {"sessionUpdate": "session_info_update", "updatedAt": "2025-01-02T00:00:00Z"},
    )
    info = t.session_info
    assert (info.title, info.updated_at, info.meta) == (
        "Implement user authentication",
        "2025-01-02T00:00:00Z",
        {"tags": ["feature", "auth"]},
    )
    feed(vn, {"sessionUpdate": "session_info_update", "title": None}, transcript=t)
    assert (info.title, info.updated_at) == (None, "2025-01-02T00:00:00Z")


def test_unknown_and_custom_updates_are_kept_in_order():
    custom = {"sessionUpdate": "_acme_progress", "percent": 40}
    future = {"sessionUpdate": "tool_call_diagnostics", "toolCallId": "c", "level": 2}
    t = feed(
        v2,
        custom,
        chunk("agent_message", text("hi"), "m"),
        future,
        {**custom, "percent": 80},
    )
    assert [dict(u) for u in t.other_updates] == [
        custom,
        future,
        {**custom, "percent": 80},
    ]
    assert all(isinstance(u, v2.SessionUpdateOther) for u in t.other_updates)
    # and in the log of every update, where they arrived
    assert [getattr(u, "tag", None) for u in t.events] == [
        "_acme_progress",
        None,
        "tool_call_diagnostics",
        "_acme_progress",
    ]
    assert (
        v2.encode(t.other_updates[1])
        == json.dumps(future, separators=(",", ":")).encode()
    )


def test_v1_unknown_update_given_raw_is_kept_in_order():
    # v1's SessionUpdate is closed: a client that cannot decode an update
    # passes its raw JSON object; a known one given raw is decoded.
    custom = {"sessionUpdate": "_acme_progress", "percent": 40}
    t = acp_trio.SessionTranscript(version=v1)
    t.apply(custom)
    t.apply({"sessionUpdate": "agent_message_chunk", "content": text("hi")})
    t.apply({**custom, "percent": 80})
    assert t.other_updates == [custom, {**custom, "percent": 80}]
    assert t.messages[0].text == "hi"
    assert isinstance(t.events[1], v1.AgentMessageChunk)


def test_raw_update_before_the_version_is_known_is_refused():
    with pytest.raises(ValueError, match="version"):
        acp_trio.SessionTranscript().apply({"sessionUpdate": "_x"})


@both_versions
def test_apply_takes_the_notification_or_its_update(vn):
    n = notification(vn, chunk("agent_message", text("hi"), "m"))
    a, b = acp_trio.SessionTranscript(), acp_trio.SessionTranscript()
    a.apply(n)
    b.apply(n.update)
    assert a.messages == b.messages
    assert (a.version, b.version) == (vn, vn)
    assert (a.session_id, b.session_id) == (SESSION, None)


def test_a_notification_for_another_session_is_refused():
    t = acp_trio.SessionTranscript("sess_1")
    with pytest.raises(ValueError, match="session"):
        t.apply(
            notification(v1, chunk("agent_message", text("x"), "m"), session="sess_2")
        )


def test_updates_of_another_protocol_version_are_refused():
    t = feed(v1, chunk("agent_message", text("x")))
    with pytest.raises(ValueError, match="v2"):
        t.apply(acp_trio.agent_text("y", message_id="m", version=v2))


def test_a_non_update_is_refused():
    with pytest.raises(TypeError):
        acp_trio.SessionTranscript().apply(v1.TextContent(text="x"))  # type: ignore[arg-type]
