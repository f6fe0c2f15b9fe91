"""`decode()` raises msgspec's `DecodeError`/`ValidationError` and nothing else,
and its lenient path does bounded work per message."""

from __future__ import annotations

import json
from collections.abc import Iterator

import msgspec
import pytest
from acp_schema import LENIENT_LIMITS, LenientLimitError, v1

# v2 here is the 2.0.0-alpha.0 draft (acp_schema.v2_alpha0): these cases name its types.
from acp_schema import v2_alpha0 as v2

DEEP = b"[" * 1200 + b"]" * 1200


@pytest.fixture
def max_repairs() -> Iterator[None]:
    saved = LENIENT_LIMITS.max_repairs
    yield
    LENIENT_LIMITS.max_repairs = saved


def _commands(items: list[object]) -> bytes:
    update = {"sessionUpdate": "available_commands_update", "availableCommands": items}
    return json.dumps({"sessionId": "s", "update": update}).encode()


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize(
    "type_name", ["NewSessionRequest", "SessionNotification", "PromptResponse"]
)
def test_deeply_nested_message_is_a_decode_error(
    module: object, type_name: str
) -> None:
    with pytest.raises(msgspec.DecodeError, match="nested too deeply"):
        module.decode(DEEP, getattr(module, type_name))  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", ["_meta", "prompt"])
def test_deep_value_inside_params_is_a_decode_error(where: str) -> None:
    # In an untyped `_meta` (the strict pass recurses) and in a typed field
    # (the strict pass fails at once, the lenient pass reads the whole value).
    params = b'{"sessionId":"s","prompt":[],"%s":%s}' % (where.encode(), DEEP)
    with pytest.raises(msgspec.DecodeError, match="nested too deeply"):
        v1.decode(params, v1.PromptRequest)


def test_deep_value_on_convert_is_a_validation_error() -> None:
    deep: list[object] = []
    for _ in range(1200):
        deep = [deep]
    params = {"sessionId": "s", "prompt": [], "_meta": 5, "x": 1}
    # Deep where the schema has no type (kept as is) or a wrong one.
    assert v1.convert({**params, "_meta": {"d": deep}}, v1.PromptRequest)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.prompt\[0\]"):
        v1.convert({**params, "prompt": deep}, v1.PromptRequest)


def test_post_init_failure_on_the_lenient_path_is_a_validation_error() -> None:
    # The strict pass fails on `cost` (a default-on-error field); the lenient
    # pass rebuilds the Struct, and `size` is out of range.
    update = {"sessionUpdate": "usage_update", "used": 1, "size": 2**64, "cost": 5}
    data = json.dumps({"sessionId": "s", "update": update}).encode()
    with pytest.raises(msgspec.ValidationError, match="size"):
        v1.decode(data, v1.SessionNotification)


def test_out_of_range_uint64_falls_back_by_the_lenient_rule() -> None:
    # Usage.thoughtTokens is a default-on-error uint64, like a uint32 `line`.
    params = {"totalTokens": 5, "inputTokens": 3, "outputTokens": 2}
    request = v1.convert({**params, "thoughtTokens": 2**64}, v1.Usage)
    assert request.thought_tokens is msgspec.UNSET and request.total_tokens == 5


def test_integral_float_is_an_integer_as_in_json_schema() -> None:
    request = v1.decode(b'{"protocolVersion": 1.0}', v1.InitializeRequest)
    assert request.protocol_version == 1 and type(request.protocol_version) is int
    with pytest.raises(msgspec.ValidationError):
        v1.decode(b'{"protocolVersion": 1.5}', v1.InitializeRequest)


def test_skip_invalid_items_within_the_repair_limit(max_repairs: None) -> None:
    LENIENT_LIMITS.max_repairs = 3
    good = {"name": "web", "description": "Search"}
    note = v1.decode(_commands([7, good, 7, 7]), v1.SessionNotification)
    assert [c.name for c in note.update.available_commands] == ["web"]
    with pytest.raises(LenientLimitError, match=r"max_repairs.*availableCommands\[4\]"):
        v1.decode(_commands([7, good, 7, 7, 7]), v1.SessionNotification)


def test_a_million_invalid_items_are_rejected_by_the_repair_limit() -> None:
    # 2 MB of `7,`: without a bound the lenient path would try every item.
    assert LENIENT_LIMITS.max_repairs == 1000
    data = _commands([7] * 1_000_000)
    with pytest.raises(LenientLimitError, match=r"availableCommands\[1000\]"):
        v1.decode(data, v1.SessionNotification)


def test_repair_limit_is_not_absorbed_by_default_on_error(max_repairs: None) -> None:
    # `content` of a tool call update is both skip-invalid-items and
    # default-on-error: running out of repairs rejects the message rather
    # than falling back to the default.
    LENIENT_LIMITS.max_repairs = 2
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "content": [5, 5, 5],
    }
    data = json.dumps({"sessionId": "s", "update": update}).encode()
    with pytest.raises(LenientLimitError):
        v1.decode(data, v1.SessionNotification)
    LENIENT_LIMITS.max_repairs = 3
    note = v1.decode(data, v1.SessionNotification)
    assert note.update.content == []


BIG = 1_000_000  # items / characters: a few MB on the wire


@pytest.mark.parametrize(
    "tag",
    [list(range(BIG)), {str(i): i for i in range(BIG // 10)}, "x" * BIG, 7**4000],
    ids=["array", "object", "string", "integer"],
)
def test_error_texts_are_bounded_at_the_source_whatever_the_value(tag: object) -> None:
    """A tag that is a huge value: the text quotes a bounded part of it."""
    data = msgspec.json.encode({"type": tag, "text": "hi"})
    limit = LENIENT_LIMITS.max_error_text + 100  # the text's own words
    for decode in (
        lambda: v1.decode(data, v1.TextContent),  # a lone tagged class
        lambda: v1.decode(data, v1.ContentBlock),  # a tagged union
        lambda: v1.convert(msgspec.json.decode(data), v1.TextContent),
    ):
        with pytest.raises(msgspec.ValidationError) as caught:
            decode()
        assert len(str(caught.value)) < limit
