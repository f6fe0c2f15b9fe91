"""`decode()` raises msgspec's `DecodeError`/`ValidationError` and nothing else,
and its lenient path does bounded work per message."""

from __future__ import annotations

import json
from collections.abc import Iterator

import msgspec
import pytest
from acp_schema import LENIENT_LIMITS, LenientLimitError, v1, v2

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
    # outputByteLimit is default-on-error, like a uint32 `line`.
    params = {"sessionId": "s", "command": "ls", "outputByteLimit": 2**64}
    request = v1.convert(params, v1.CreateTerminalRequest)
    assert request.output_byte_limit is msgspec.UNSET


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
