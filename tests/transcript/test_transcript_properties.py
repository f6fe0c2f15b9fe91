"""Properties: streamed and whole messages agree; a replay rebuilds the live turn.

Every update is JSON, encoded and decoded with the version's codec, as a
client receives it.
"""

from __future__ import annotations

import itertools
from typing import Any

from _transcript_wire import chunk, feed, link, state, text
from acp_schema import v1
from acp_schema import v2_alpha0 as v2
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(deadline=None, max_examples=150)

MESSAGE_KINDS = ["user_message", "agent_message", "agent_thought"]

# A content block as the agent holds it: text (streamed in pieces), a link, an image.
pieces = st.lists(st.text(max_size=6), min_size=1, max_size=4)
block_specs = st.lists(
    st.one_of(
        st.tuples(st.just("text"), pieces),
        st.tuples(st.just("link"), st.sampled_from(["main.py", "README.md"])),
        st.tuples(st.just("image"), st.sampled_from(["aGk=", "AAE="])),
    ),
    min_size=1,
    max_size=5,
)


def whole(spec: tuple[str, Any]) -> dict[str, Any]:
    kind, value = spec
    if kind == "text":
        return text("".join(value))
    if kind == "link":
        return link(value)
    return {"type": "image", "data": value, "mimeType": "image/png"}


def streamed(spec: tuple[str, Any]) -> list[dict[str, Any]]:
    """The blocks an agent streams for one block: text piece by piece."""
    kind, value = spec
    return [text(p) for p in value] if kind == "text" else [whole(spec)]


def chunks(kind: str, specs: list[Any], message_id: str | None) -> list[dict[str, Any]]:
    return [chunk(kind, b, message_id) for spec in specs for b in streamed(spec)]


def upsert(
    kind: str, message_id: str, specs: list[Any], **extra: Any
) -> dict[str, Any]:
    return {
        "sessionUpdate": kind,
        "messageId": message_id,
        "content": [whole(s) for s in specs],
        **extra,
    }


# --- (a) one whole update == the same message in chunks -------------------------


@SETTINGS
@given(
    kind=st.sampled_from(MESSAGE_KINDS),
    specs=block_specs,
    how=st.sampled_from(["chunks", "upsert_then_chunks", "chunks_then_upsert"]),
    data=st.data(),
)
def test_v2_message_sent_whole_or_as_chunks_gives_the_same_transcript(
    kind, specs, how, data
):
    sent_whole = feed(v2, upsert(kind, "m1", specs))
    split = data.draw(st.integers(0, len(specs)), label="split")
    if how == "chunks":
        updates = chunks(kind, specs, "m1")
    elif how == "upsert_then_chunks":
        updates = [
            upsert(kind, "m1", specs[:split]),
            *chunks(kind, specs[split:], "m1"),
        ]
    else:  # whatever was streamed first, the whole content replaces it
        updates = [*chunks(kind, specs[:split], "m1"), upsert(kind, "m1", specs)]
    assert state(feed(v2, *updates)) == state(sent_whole)


@SETTINGS
@given(
    kind=st.sampled_from(MESSAGE_KINDS),
    specs=block_specs,
    message_id=st.sampled_from([None, "m1"]),
)
def test_v1_message_sent_in_whole_blocks_or_in_pieces_gives_the_same_transcript(
    kind, specs, message_id
):
    one_chunk_per_block = [chunk(kind, whole(s), message_id) for s in specs]
    assert state(feed(v1, *chunks(kind, specs, message_id))) == state(
        feed(v1, *one_chunk_per_block)
    )


# --- (b) a session/load replay == the live turns ----------------------------------

message_items = st.tuples(
    st.just("message"),
    st.sampled_from(["agent_message", "agent_thought"]),
    block_specs,
    st.sampled_from(["chunks", "chunks_then_upsert", "upsert"]),
    st.one_of(
        st.none(), st.dictionaries(st.sampled_from("ab"), st.integers(), max_size=2)
    ),
)
tool_items = st.tuples(
    st.just("tool"),
    st.sampled_from(["read", "edit", "execute"]),
    st.lists(st.text(max_size=5), max_size=3),  # output streamed while running
    st.one_of(st.none(), st.lists(st.text(max_size=5), max_size=2)),  # final content
    st.sampled_from(["completed", "failed"]),
)
plan_items = st.tuples(
    st.just("plan"),
    st.lists(st.sampled_from(["Read", "Fix", "Test"]), min_size=1, max_size=3),
)
usage_items = st.tuples(st.just("usage"), st.integers(0, 10**6))
turns = st.lists(
    st.tuples(
        block_specs,  # the user's prompt
        st.lists(
            st.one_of(message_items, tool_items, plan_items, usage_items), max_size=6
        ),
    ),
    min_size=1,
    max_size=3,
)


def _content(values: list[str]) -> list[dict[str, Any]]:
    return [{"type": "content", "content": text(v)} for v in values]


def _entries(names: list[str], status: str) -> list[dict[str, Any]]:
    return [{"content": n, "priority": "medium", "status": status} for n in names]


def v2_streams(conversation: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(live updates, session/load replay) of a v2 conversation."""
    live: list[dict[str, Any]] = []
    replay: list[dict[str, Any]] = []
    ids = itertools.count()
    for prompt, items in conversation:
        user_id = f"msg_user_{next(ids)}"
        live += chunks("user_message", prompt, user_id)
        replay.append(upsert("user_message", user_id, prompt))
        for item in items:
            if item[0] == "message":
                _, kind, specs, how, meta = item
                message_id = f"msg_{next(ids)}"
                extra = {} if meta is None else {"_meta": meta}
                if how == "upsert":
                    live.append(upsert(kind, message_id, specs, **extra))
                else:
                    live += chunks(kind, specs, message_id)
                    if how == "chunks_then_upsert":  # the agent finalizes the message
                        live.append(upsert(kind, message_id, specs))
                    if meta is not None:  # then updates only its _meta
                        live.append(
                            {"sessionUpdate": kind, "messageId": message_id, **extra}
                        )
                replay.append(upsert(kind, message_id, specs, **extra))
            elif item[0] == "tool":
                _, tool_kind, output, final, status = item
                call_id = f"call_{next(ids)}"
                update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
                fields = {
                    "title": f"Run {call_id}",
                    "kind": tool_kind,
                    "rawInput": {"n": 1},
                }
                live.append({**update, **fields, "status": "pending"})
                live.append({**update, "status": "in_progress"})
                for piece in output:
                    live.append(
                        {
                            "sessionUpdate": "tool_call_content_chunk",
                            "toolCallId": call_id,
                            "content": _content([piece])[0],
                        }
                    )
                final_fields: dict[str, Any] = {"status": status}
                if final is not None:
                    final_fields["content"] = _content(final)
                live.append({**update, **final_fields})
                content = _content(output if final is None else final)
                replay.append(
                    {**update, **fields, "status": status, "content": content}
                )
            elif item[0] == "plan":
                names = item[1]
                for status in ("pending", "completed"):
                    plan = {
                        "type": "items",
                        "id": "plan-1",
                        "entries": _entries(names, status),
                    }
                    live.append({"sessionUpdate": "plan_update", "plan": plan})
                replay.append(live[-1])
            else:
                usage = {
                    "sessionUpdate": "usage_update",
                    "used": item[1],
                    "size": 10**6,
                }
                live.append(usage)
                replay.append(usage)
    return live, replay


def v1_streams(
    conversation: Any, with_ids: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(live updates, session/load replay) of a v1 conversation: chunks only."""
    live: list[dict[str, Any]] = []
    replay: list[dict[str, Any]] = []
    ids = itertools.count()

    def new_id() -> str | None:
        return f"msg_{next(ids)}" if with_ids else None

    for prompt, items in conversation:
        user_id = new_id()
        live += chunks("user_message", prompt, user_id)
        replay += [chunk("user_message", whole(s), user_id) for s in prompt]
        for item in items:
            if item[0] == "message":
                _, kind, specs, _how, _meta = item
                message_id = new_id()
                live += chunks(kind, specs, message_id)
                replay += [chunk(kind, whole(s), message_id) for s in specs]
            elif item[0] == "tool":
                _, tool_kind, output, final, status = item
                call_id = f"call_{next(ids)}"
                update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
                fields = {
                    "title": f"Run {call_id}",
                    "kind": tool_kind,
                    "rawInput": {"n": 1},
                }
                live.append(
                    {"sessionUpdate": "tool_call", "toolCallId": call_id, **fields}
                )
                live.append({**update, "status": "in_progress"})
                for n in range(len(output)):  # v1 resends the whole content so far
                    live.append({**update, "content": _content(output[: n + 1])})
                final_fields: dict[str, Any] = {"status": status}
                if final is not None:
                    final_fields["content"] = _content(final)
                live.append({**update, **final_fields})
                content = _content(output if final is None else final)
                replay.append(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": call_id,
                        **fields,
                        "status": status,
                        "content": content,
                    }
                )
            elif item[0] == "plan":
                for status in ("pending", "completed"):
                    live.append(
                        {"sessionUpdate": "plan", "entries": _entries(item[1], status)}
                    )
                replay.append(live[-1])
            else:
                usage = {
                    "sessionUpdate": "usage_update",
                    "used": item[1],
                    "size": 10**6,
                }
                live.append(usage)
                replay.append(usage)
    return live, replay


@SETTINGS
@given(conversation=turns)
def test_v2_session_load_replay_rebuilds_the_live_transcript(conversation):
    live, replay = v2_streams(conversation)
    live_state = state(feed(v2, *live))
    assert state(feed(v2, *replay)) == live_state
    assert len(live_state["messages"]) == len(conversation) + sum(
        item[0] == "message" for _, items in conversation for item in items
    )


@SETTINGS
@given(conversation=turns, with_ids=st.booleans())
def test_v1_session_load_replay_rebuilds_the_live_transcript(conversation, with_ids):
    live, replay = v1_streams(conversation, with_ids)
    assert state(feed(v1, *replay)) == state(feed(v1, *live))
