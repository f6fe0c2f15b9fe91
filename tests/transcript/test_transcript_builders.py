"""Builders: each gives the wire JSON of the protocol docs' examples."""

from __future__ import annotations

import json

import acp_trio
import pytest
from _transcript_wire import both_versions
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


def wire(vn, obj):
    """What goes on the wire, and a check that it decodes back to ``obj``."""
    data = vn.encode(obj)
    assert vn.decode(data, type(obj)) == obj
    return json.loads(data)


def test_agent_text_is_the_prompt_turn_example():
    chunk = acp_trio.agent_text(
        "I'll analyze your code for potential issues. Let me examine it...",
        message_id="msg_agent_c42b9",
    )
    assert isinstance(chunk, v1.AgentMessageChunk)
    assert wire(v1, chunk) == {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "msg_agent_c42b9",
        "content": {
            "type": "text",
            "text": "I'll analyze your code for potential issues. Let me examine it...",
        },
    }


def test_v1_chunk_without_message_id_leaves_it_out():
    assert wire(v1, acp_trio.thought_text("hmm")) == {
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": "hmm"},
    }


@pytest.mark.parametrize(
    ("builder", "tag"),
    [
        (acp_trio.agent_text, "agent_message_chunk"),
        (acp_trio.user_text, "user_message_chunk"),
        (acp_trio.thought_text, "agent_thought_chunk"),
    ],
)
def test_v2_chunks_carry_their_message_id(builder, tag):
    chunk = builder("x", message_id="m1", version=v2)
    assert type(chunk).__module__ == v2.__name__  # the module asked for
    assert wire(v2, chunk) == {
        "sessionUpdate": tag,
        "messageId": "m1",
        "content": {"type": "text", "text": "x"},
    }
    with pytest.raises(ValueError, match="message_id"):
        builder("x", version=v2)  # type: ignore[call-overload]


def test_v2_message_upserts():
    assert wire(
        v2, acp_trio.user_message("msg_user_8f7a1", "What's the capital of France?")
    ) == {
        "sessionUpdate": "user_message",
        "messageId": "msg_user_8f7a1",
        "content": [{"type": "text", "text": "What's the capital of France?"}],
    }
    link = acp_trio.resource_link("file:///a.md", version=v2)
    assert wire(v2, acp_trio.agent_message("m", [link])) == {
        "sessionUpdate": "agent_message",
        "messageId": "m",
        "content": [{"type": "resource_link", "uri": "file:///a.md", "name": "a.md"}],
    }
    assert wire(v2, acp_trio.agent_thought("t", meta={"k": 1})) == {
        "sessionUpdate": "agent_thought",
        "messageId": "t",
        "_meta": {"k": 1},
    }
    assert wire(v2, acp_trio.agent_message("m", None)) == {
        "sessionUpdate": "agent_message",
        "messageId": "m",
        "content": None,
    }


@both_versions
def test_resource_link_is_the_content_example(vn):
    link = acp_trio.resource_link(
        "file:///home/user/document.pdf",
        mime_type="application/pdf",
        size=1024000,
        version=vn,
    )
    assert wire(vn, link) == {
        "type": "resource_link",
        "uri": "file:///home/user/document.pdf",
        "name": "document.pdf",
        "mimeType": "application/pdf",
        "size": 1024000,
    }


@both_versions
def test_embedded_text_resource_is_the_content_example(vn):
    resource = acp_trio.embedded_text_resource(
        "file:///home/user/script.py",
        "def hello():\n    print('Hello, world!')",
        mime_type="text/x-python",
        version=vn,
    )
    assert wire(vn, resource) == {
        "type": "resource",
        "resource": {
            "uri": "file:///home/user/script.py",
            "mimeType": "text/x-python",
            "text": "def hello():\n    print('Hello, world!')",
        },
    }


@both_versions
def test_embedded_blob_resource_is_base64(vn):
    resource = acp_trio.embedded_blob_resource(
        "file:///logo.png", b"\x89PNG", mime_type="image/png", version=vn
    )
    assert wire(vn, resource) == {
        "type": "resource",
        "resource": {
            "uri": "file:///logo.png",
            "mimeType": "image/png",
            "blob": "iVBORw==",
        },
    }


def test_tool_call_is_the_v1_tool_calls_example():
    call = acp_trio.tool_call("call_001", "Reading configuration file", kind="read")
    assert wire(v1, call) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_001",
        "title": "Reading configuration file",
        "kind": "read",
        "status": "pending",
    }


def test_v2_tool_call_is_a_first_tool_call_update():
    call = acp_trio.tool_call(
        "call_001",
        "Reading configuration file",
        kind="read",
        locations=["/home/user/project/config.json"],
        raw_input={"path": "config.json"},
        version=v2,
    )
    assert wire(v2, call) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "title": "Reading configuration file",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": "/home/user/project/config.json"}],
        "rawInput": {"path": "config.json"},
    }


@both_versions
def test_tool_call_update_is_the_prompt_turn_example(vn):
    update = acp_trio.tool_call_update(
        "call_001",
        status="completed",
        content=[acp_trio.tool_content("Analysis complete", version=vn)],
        version=vn,
    )
    assert wire(vn, update) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "completed",
        "content": [
            {
                "type": "content",
                "content": {"type": "text", "text": "Analysis complete"},
            }
        ],
    }


@both_versions
def test_tool_call_update_none_is_null(vn):
    update = acp_trio.tool_call_update("c", content=None, raw_output=None, version=vn)
    assert wire(vn, update) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "content": None,
        "rawOutput": None,
    }


@both_versions
def test_diff_is_the_tool_calls_example(vn):
    content = acp_trio.diff(
        "/home/user/project/src/config.json",
        '{\n  "debug": false\n}',
        '{\n  "debug": true\n}',
        version=vn,
    )
    assert wire(vn, content) == {
        "type": "diff",
        "path": "/home/user/project/src/config.json",
        "oldText": '{\n  "debug": false\n}',
        "newText": '{\n  "debug": true\n}',
    }
    assert (
        wire(vn, acp_trio.diff("/new.txt", None, "hi", version=vn))["oldText"] is None
    )


def test_terminal_is_the_terminals_example():
    assert wire(v1, acp_trio.terminal("term_xyz789")) == {
        "type": "terminal",
        "terminalId": "term_xyz789",
    }


def test_tool_content_wraps_a_block():
    link = acp_trio.resource_link("file:///a.md")
    assert wire(v1, acp_trio.tool_content(link)) == {
        "type": "content",
        "content": {"type": "resource_link", "uri": "file:///a.md", "name": "a.md"},
    }


def test_plan_is_the_v1_agent_plan_example():
    update = acp_trio.plan(
        [
            acp_trio.plan_entry("Check for syntax errors", priority="high"),
            "Identify potential type issues",
        ]
    )
    assert wire(v1, update) == {
        "sessionUpdate": "plan",
        "entries": [
            {
                "content": "Check for syntax errors",
                "priority": "high",
                "status": "pending",
            },
            {
                "content": "Identify potential type issues",
                "priority": "medium",
                "status": "pending",
            },
        ],
    }


def test_v2_plan_is_a_plan_update_with_its_id():
    update = acp_trio.plan(
        [acp_trio.plan_entry("Analyze", status="in_progress", version=v2)],
        plan_id="plan-1",
        version=v2,
    )
    assert wire(v2, update) == {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "id": "plan-1",
            "entries": [
                {"content": "Analyze", "priority": "medium", "status": "in_progress"}
            ],
        },
    }
    with pytest.raises(ValueError, match="plan_id"):
        acp_trio.plan(["x"], version=v2)  # type: ignore[call-overload]


@both_versions
def test_usage_update_is_the_prompt_turn_example(vn):
    assert wire(vn, acp_trio.usage_update(53000, 200000, cost=0.045, version=vn)) == {
        "sessionUpdate": "usage_update",
        "used": 53000,
        "size": 200000,
        "cost": {"amount": 0.045, "currency": "USD"},
    }
    assert "cost" not in wire(vn, acp_trio.usage_update(1, 2, version=vn))


@both_versions
def test_notification_wraps_an_update_in_its_version(vn):
    update = acp_trio.agent_text("hi", message_id="m", version=vn)
    note = acp_trio.notification("sess_1", update)
    assert isinstance(note, vn.SessionNotification)
    assert wire(vn, note) == {"sessionId": "sess_1", "update": wire(vn, update)}


def test_version_must_be_a_protocol_module():
    with pytest.raises(ValueError, match="version"):
        acp_trio.agent_text("x", version=json)  # type: ignore[call-overload]
