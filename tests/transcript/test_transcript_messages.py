"""Messages: chunks append by messageId; v2 message updates are upserts."""

from __future__ import annotations

import acp_trio
from _transcript_wire import both_versions, chunk, feed, link, text
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


def _texts(transcript: acp_trio.SessionTranscript) -> list[tuple[str, str | None, str]]:
    return [(m.role, m.message_id, m.text) for m in transcript.messages]


# --- chunks ------------------------------------------------------------------


@both_versions
def test_chunks_append_to_the_message_with_their_message_id(vn):
    t = feed(
        vn,
        chunk("agent_message", text("I'll analyze "), "msg_a"),
        chunk("agent_message", text("Other"), "msg_b"),
        chunk("agent_message", text("your code."), "msg_a"),
    )
    assert _texts(t) == [
        ("agent", "msg_a", "I'll analyze your code."),
        ("agent", "msg_b", "Other"),
    ]


@both_versions
def test_user_agent_and_thought_chunks_make_messages_of_their_role(vn):
    t = feed(
        vn,
        chunk("user_message", text("What's the capital of France?"), "u1"),
        chunk("agent_thought", text("Easy one."), "t1"),
        chunk("agent_message", text("Paris."), "a1"),
    )
    assert _texts(t) == [
        ("user", "u1", "What's the capital of France?"),
        ("thought", "t1", "Easy one."),
        ("agent", "a1", "Paris."),
    ]


@both_versions
def test_the_same_message_id_in_two_roles_is_two_messages(vn):
    # Resolved ambiguity: messages are keyed by (role, messageId), so an agent
    # that reuses a model response id for its thought and its text keeps both.
    t = feed(
        vn,
        chunk("agent_thought", text("thinking"), "resp_1"),
        chunk("agent_message", text("answer"), "resp_1"),
    )
    assert _texts(t) == [
        ("thought", "resp_1", "thinking"),
        ("agent", "resp_1", "answer"),
    ]


def test_chunks_without_message_id_append_while_the_kind_of_message_is_the_same():
    t = feed(
        v1,
        chunk("agent_message", text("Hello")),
        chunk("agent_message", text(", world")),
    )
    assert _texts(t) == [("agent", None, "Hello, world")]


def test_chunks_without_message_id_start_a_new_message_when_the_kind_changes():
    t = feed(
        v1,
        chunk("user_message", text("Hi")),
        chunk("agent_thought", text("greeting")),
        chunk("agent_message", text("Hello")),
        chunk("agent_message", text("!")),
        chunk("user_message", text("Bye")),
        chunk("agent_message", text("Bye!")),
    )
    assert _texts(t) == [
        ("user", None, "Hi"),
        ("thought", None, "greeting"),
        ("agent", None, "Hello!"),
        ("user", None, "Bye"),
        ("agent", None, "Bye!"),
    ]


def test_chunk_without_message_id_continues_the_last_message_even_if_it_had_one():
    t = feed(
        v1,
        chunk("agent_message", text("Hel"), "m1"),
        chunk("agent_message", text("lo")),
    )
    assert _texts(t) == [("agent", "m1", "Hello")]


def test_v1_null_message_id_is_no_message_id():
    t = feed(
        v1,
        {
            "sessionUpdate": "agent_message_chunk",
            "content": text("a"),
            "messageId": None,
        },
        {
            "sessionUpdate": "agent_message_chunk",
            "content": text("b"),
            "messageId": None,
        },
    )
    assert _texts(t) == [("agent", None, "ab")]


def test_tool_calls_between_chunks_without_message_id_do_not_split_the_message():
    t = feed(
        v1,
        chunk("agent_message", text("Checking. ")),
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read"},
        chunk("agent_message", text("Done.")),
    )
    assert _texts(t) == [("agent", None, "Checking. Done.")]
    assert [type(e).__name__ for e in t.events] == [
        "AgentMessageChunk",
        "ToolCall",
        "AgentMessageChunk",
    ]


@both_versions
def test_adjacent_text_chunks_are_joined_and_other_blocks_kept(vn):
    t = feed(
        vn,
        chunk("agent_message", text("See "), "m"),
        chunk("agent_message", link("main.py"), "m"),
        chunk("agent_message", text(" and "), "m"),
        chunk("agent_message", text("more"), "m"),
    )
    [message] = t.messages
    assert [type(b).__name__ for b in message.content] == [
        "TextContent",
        "ResourceLink",
        "TextContent",
    ]
    assert message.content[2].text == " and more"
    assert message.text == "See  and more"


@both_versions
def test_coalesce_text_false_keeps_every_chunk_block(vn):
    t = acp_trio.SessionTranscript(version=vn, coalesce_text=False)
    feed(vn, chunk("agent_message", text("a"), "m"), transcript=t)
    feed(vn, chunk("agent_message", text("b"), "m"), transcript=t)
    assert [b.text for b in t.messages[0].content] == ["a", "b"]


@both_versions
def test_annotated_text_is_not_joined(vn):
    annotated = {**text("b"), "annotations": {"priority": 1.0}}
    t = feed(
        vn,
        chunk("agent_message", text("a"), "m"),
        chunk("agent_message", annotated, "m"),
    )
    assert [b.text for b in t.messages[0].content] == ["a", "b"]


def test_v2_unknown_content_block_is_kept_in_the_message():
    t = feed(v2, chunk("agent_message", {"type": "_acme_chart", "points": [1, 2]}, "m"))
    [block] = t.messages[0].content
    assert isinstance(block, v2.ContentBlockOther)
    assert block == {"type": "_acme_chart", "points": [1, 2]}


# --- v2 upserts ----------------------------------------------------------------


def test_upsert_creates_a_message_keyed_by_message_id():
    t = feed(
        v2,
        {
            "sessionUpdate": "user_message",
            "messageId": "msg_user_8f7a1",
            "content": [text("What's the capital of France?")],
        },
        {
            "sessionUpdate": "agent_message",
            "messageId": "msg_agent_c42b9",
            "content": [text("The capital of France is Paris.")],
        },
        {
            "sessionUpdate": "agent_thought",
            "messageId": "msg_thought_a12",
            "content": [text("Need to inspect the loop body.")],
        },
    )
    assert _texts(t) == [
        ("user", "msg_user_8f7a1", "What's the capital of France?"),
        ("agent", "msg_agent_c42b9", "The capital of France is Paris."),
        ("thought", "msg_thought_a12", "Need to inspect the loop body."),
    ]


def test_upsert_omitted_fields_are_unchanged():
    t = feed(
        v2,
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [text("kept")],
            "_meta": {"model": "x"},
        },
        {"sessionUpdate": "agent_message", "messageId": "m"},
    )
    [message] = t.messages
    assert message.text == "kept"
    assert message.meta == {"model": "x"}


def test_upsert_null_clears():
    t = feed(
        v2,
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [text("gone")],
            "_meta": {"model": "x"},
        },
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": None,
            "_meta": None,
        },
    )
    [message] = t.messages
    assert message.content == []
    assert message.meta is None


def test_upsert_empty_content_clears():
    t = feed(
        v2,
        chunk("agent_message", text("gone"), "m"),
        {"sessionUpdate": "agent_message", "messageId": "m", "content": []},
    )
    assert t.messages[0].content == []


def test_upsert_values_replace():
    t = feed(
        v2,
        {
            "sessionUpdate": "user_message",
            "messageId": "u",
            "content": [text("old")],
            "_meta": {"a": 1},
        },
        {
            "sessionUpdate": "user_message",
            "messageId": "u",
            "content": [text("new"), link("spec.md")],
            "_meta": {"b": 2},
        },
    )
    [message] = t.messages
    assert message.text == "new"
    assert [type(b).__name__ for b in message.content] == [
        "TextContent",
        "ResourceLink",
    ]
    assert message.meta == {"b": 2}


def test_upsert_content_replaces_chunks_and_later_chunks_append():
    # The example of v2 prompt-turn "Message IDs": [A], +B -> [A, B]; [C] -> [C];
    # later chunks append to [C].
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    t = feed(
        v2,
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [text("A")]},
        chunk("agent_message", image, "m"),
    )
    assert [type(b).__name__ for b in t.messages[0].content] == [
        "TextContent",
        "ImageContent",
    ]
    feed(
        v2,
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [text("C")]},
        chunk("agent_message", text("D"), "m"),
        transcript=t,
    )
    [message] = t.messages
    assert message.text == "CD"


def test_upsert_without_content_changes_only_meta():
    t = feed(
        v2,
        chunk("agent_thought", text("step 1"), "t"),
        chunk("agent_thought", text(", step 2"), "t"),
        {"sessionUpdate": "agent_thought", "messageId": "t", "_meta": {"tokens": 12}},
    )
    [message] = t.messages
    assert (message.role, message.text, message.meta) == (
        "thought",
        "step 1, step 2",
        {"tokens": 12},
    )


def test_upsert_of_an_earlier_message_keeps_its_place():
    t = feed(
        v2,
        chunk("user_message", text("q"), "u"),
        chunk("agent_message", text("a"), "a"),
        {"sessionUpdate": "user_message", "messageId": "u", "content": [text("q!")]},
    )
    assert _texts(t) == [("user", "u", "q!"), ("agent", "a", "a")]


def test_apply_returns_the_message_it_touched():
    t = acp_trio.SessionTranscript()
    touched = t.apply(acp_trio.agent_text("hi", message_id="m"))
    assert touched is t.messages[0]
