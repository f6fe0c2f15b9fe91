"""A message streamed in many chunks costs the transcript O(chunks), not O(chunks²).

Work is counted, not timed: every chunk's text is a ``CountingStr`` that
counts the characters of each concatenation it takes part in, and the
transcript's one join function is wrapped to count the characters it joins.
Joining each chunk into the message as it arrives copies the text so far
every time (about n²/2 characters for n chunks); joining lazily copies it
once per read.
"""

from __future__ import annotations

from typing import Any

import acp_trio
import msgspec
import pytest
from acp_core.session import _transcript
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

CHUNK = "abcdefgh"


class Copies:
    characters = 0


class CountingStr(str):
    """A str whose concatenations count the characters they produce."""

    def __add__(self, other: str) -> CountingStr:
        result = CountingStr(str.__add__(self, other))
        Copies.characters += len(result)
        return result

    def __radd__(self, other: str) -> CountingStr:
        result = CountingStr(str.__add__(other, self))
        Copies.characters += len(result)
        return result


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> type[Copies]:
    Copies.characters = 0
    join = getattr(_transcript, "_join", None)
    if join is not None:

        def counting_join(parts: list[str]) -> str:
            joined: str = join(parts)
            Copies.characters += len(joined)
            return joined

        monkeypatch.setattr(_transcript, "_join", counting_join)
    return Copies


def stream(V: Any, n: int, message_id: str = "m") -> acp_trio.SessionTranscript:
    t = acp_trio.SessionTranscript(version=V)
    for _ in range(n):
        t.apply(
            V.AgentMessageChunk(
                content=V.TextContent(text=CountingStr(CHUNK)), message_id=message_id
            )
        )
    return t


@pytest.mark.parametrize("V", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("n", [1_000, 100_000])
def test_a_message_streamed_in_n_chunks_copies_its_text_once_per_read(
    V: Any, n: int, copies: type[Copies]
) -> None:
    t = stream(V, n)
    [message] = t.messages
    assert message.text == CHUNK * n
    assert len(message.content) == 1
    # one join of the whole text, whatever n: the same work per chunk for
    # 1,000 and 100,000 chunks
    assert copies.characters == len(CHUNK) * n
    assert message.text == CHUNK * n  # read again: nothing left to join
    assert copies.characters == len(CHUNK) * n


def test_reading_the_message_between_chunks_sees_every_chunk() -> None:
    t = acp_trio.SessionTranscript(version=v1)
    seen = []
    for piece in ["Hel", "lo", ", ", "world"]:
        touched = t.apply(
            v1.AgentMessageChunk(content=v1.TextContent(text=piece), message_id="m")
        )
        assert isinstance(touched, acp_trio.TranscriptMessage)
        seen.append(touched.text)
        assert [type(b) for b in touched.content] == [v1.TextContent]
    assert seen == ["Hel", "Hello", "Hello, ", "Hello, world"]


def test_interleaved_messages_are_each_joined() -> None:
    t = acp_trio.SessionTranscript(version=v2)
    for i in range(1000):
        for message_id in ("a", "b"):
            t.apply(
                v2.AgentMessageChunk(
                    content=v2.TextContent(text=f"{message_id}{i % 10}"),
                    message_id=message_id,
                )
            )
    expected_a = "".join(f"a{i % 10}" for i in range(1000))
    expected_b = "".join(f"b{i % 10}" for i in range(1000))
    assert [(m.message_id, m.text) for m in t.messages] == [
        ("a", expected_a),
        ("b", expected_b),
    ]


def test_a_streamed_message_compares_encodes_and_prints_with_its_whole_text() -> None:
    streamed = acp_trio.SessionTranscript(version=v1)
    for piece in ["one ", "two ", "three"]:
        held = streamed.apply(
            v1.AgentMessageChunk(content=v1.TextContent(text=piece), message_id="m")
        )
    whole = acp_trio.TranscriptMessage(
        role="agent", message_id="m", content=[v1.TextContent(text="one two three")]
    )
    assert held == whole and whole == held
    assert "one two three" in repr(held)
    # msgspec reads the stored fields directly: the messages view joined them
    [encoded] = msgspec.to_builtins(list(streamed.messages))
    assert encoded["content"] == [{"type": "text", "text": "one two three"}]


def test_a_block_that_is_not_plain_text_ends_the_joined_text() -> None:
    t = acp_trio.SessionTranscript(version=v1)
    for block in [
        v1.TextContent(text="a"),
        v1.TextContent(text="b"),
        v1.ResourceLink(name="f", uri="file:///f"),
        v1.TextContent(text="c"),
        v1.TextContent(text="d"),
    ]:
        t.apply(v1.AgentMessageChunk(content=block, message_id="m"))
    content: list[Any] = list(t.messages[0].content)
    assert [b.uri if isinstance(b, v1.ResourceLink) else b.text for b in content] == [
        "ab",
        "file:///f",
        "cd",
    ]


def test_an_upsert_or_an_assignment_replaces_pending_text() -> None:
    t = acp_trio.SessionTranscript(version=v2)
    for piece in ["x", "y"]:
        held = t.apply(
            v2.AgentMessageChunk(content=v2.TextContent(text=piece), message_id="m")
        )
    t.apply(v2.AgentMessage(message_id="m", content=[v2.TextContent(text="new")]))
    assert t.messages[0].text == "new"
    t.apply(v2.AgentMessageChunk(content=v2.TextContent(text="!"), message_id="m"))
    assert isinstance(held, acp_trio.TranscriptMessage)
    held.content = [v2.TextContent(text="set")]
    assert held.text == "set"
