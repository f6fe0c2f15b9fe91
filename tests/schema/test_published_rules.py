"""Rules the published schemas (npm ``@agentclientprotocol/sdk`` 2.4.0) exercise,
one test each: the disagreements with the schema the differential test found
after the bump, written out (`acp_schema.v1` and the 2.4.0 `acp_schema.v2`).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from _upstream import needs
from acp_schema import v1, v2


def _decode(module: Any, data: Any, type_: Any) -> Any:
    return module.decode(json.dumps(data).encode(), type_)


def _round_trip(module: Any, data: Any, type_: Any) -> Any:
    decoded = _decode(module, data, type_)
    assert json.loads(module.encode(decoded)) == data
    return decoded


# -- length constraints (minItems) ---------------------------------------------


@needs("v2", field="PromptRequest.prompt", keyword="minItems")
def test_an_open_union_in_a_list_with_min_items_keeps_unknown_tags() -> None:
    # v2 `prompt` is a list of at least one ContentBlock (an open union): an
    # unknown block type is kept raw there as anywhere else.
    prompt = [{"type": "", "x": 1}, {"type": "text", "text": "t"}]
    request = _round_trip(v2, {"sessionId": "s", "prompt": prompt}, v2.PromptRequest)
    assert type(request.prompt[0]) is v2.ContentBlockOther
    with pytest.raises(msgspec.ValidationError, match=r"length >= 1 - at `\$.prompt`"):
        _decode(v2, {"sessionId": "s", "prompt": []}, v2.PromptRequest)


@needs("v2", field="SessionConfigSelectGroup.options", keyword="minItems")
def test_min_items_holds_after_invalid_items_are_skipped() -> None:
    # `options` skips invalid items, and then must still hold one: with none
    # left it is invalid, and its default-on-error has no default to give a
    # required field.
    group = {"groupId": "g", "name": "n", "options": [None]}
    with pytest.raises(msgspec.ValidationError, match=r"length >= 1 - at `\$.options`"):
        _decode(v2, group, v2.SessionConfigSelectGroup)
    group["options"] = [None, {"value": "v", "name": "V"}]
    decoded = _decode(v2, group, v2.SessionConfigSelectGroup)
    assert [o.value for o in decoded.options] == ["v"]


# -- x-deserialize-default-on-null ---------------------------------------------


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_default_on_null_reads_null_as_the_empty_value(module: Any) -> None:
    # a null list of servers is no servers, as in the upstream SDKs; the
    # key stays on re-encoding, with the empty list
    server = {"name": "fs", "command": "/bin/fs", "args": None, "env": None}
    if module is v2:
        server["type"] = "stdio"  # v2's stdio servers carry their tag
    data = {"cwd": "/", "mcpServers": [server], "additionalDirectories": None}
    request = _decode(module, data, module.NewSessionRequest)
    assert request.mcp_servers[0].args == request.mcp_servers[0].env == []
    assert request.additional_directories == []
    assert json.loads(module.encode(request)) == {
        "cwd": "/",
        "mcpServers": [{**server, "args": [], "env": []}],
        "additionalDirectories": [],
    }


def test_default_on_null_of_a_map_is_the_empty_map() -> None:
    method = {"type": "terminal", "id": "t", "name": "T", "args": None, "env": None}
    decoded = _decode(v1, method, v1.AuthMethod)
    assert (decoded.args, decoded.env) == ([], {})


def test_default_on_null_leaves_absent_absent_and_required_required() -> None:
    with pytest.raises(msgspec.ValidationError, match="missing required field"):
        _decode(v1, {"cwd": "/"}, v1.NewSessionRequest)  # v1: mcpServers required
    request = _decode(v2, {"cwd": "/"}, v2.NewSessionRequest)
    assert json.loads(v2.encode(request)) == {"cwd": "/"}


# -- a known variant kept raw (its payload is a union) -------------------------


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_a_known_variant_kept_raw_is_checked_and_repaired_as_its_payload(
    module: Any,
) -> None:
    # `idle` is an IdleStateUpdate (a union narrowed by `stopReason`): kept
    # raw, but the lenient rules of that union hold in the raw payload, so a
    # bad `stopReason` or `usage` is not re-encoded as if it were valid.
    bad = {"state": "idle", "stopReason": 3, "usage": 5, "x": 1}
    decoded = _decode(module, bad, module.StateUpdate)
    assert type(decoded) is module.StateUpdateIdle
    assert json.loads(module.encode(decoded)) == {"state": "idle", "x": 1}
    _round_trip(module, {"state": "idle", "stopReason": "end_turn"}, module.StateUpdate)
    with pytest.raises(msgspec.ValidationError, match="Expected `object`"):
        _decode(module, ["idle"], module.StateUpdate)


# -- declared properties and additionalProperties: true ------------------------


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_an_mcp_error_keeps_its_undeclared_fields(module: Any) -> None:
    # McpError: "Inner result and error fields are preserved" (declared
    # properties plus `additionalProperties: true`): kept raw, checked
    error = {"code": -1, "message": "m", "data": None, "retryAfter": 3, "": None}
    response = _round_trip(module, {"error": error}, module.MessageMcpResponse)
    assert type(response.error) is module.McpError
    assert response.error["retryAfter"] == 3
    with pytest.raises(msgspec.ValidationError):
        _decode(module, {"error": {"code": "x", "message": "m"}}, module.McpError)


# -- an untagged union reads each variant whole, in turn ------------------------


@needs("v2", type="SessionNotFoundErrorData")
def test_an_earlier_variant_repaired_wins_over_a_later_strict_match() -> None:
    # v2 ErrorData: SessionNotFound, ..., then any JSON value. A bad `_meta`
    # (default-on-error: absent) still makes it SessionNotFound, as serde and
    # zod read an untagged union; not the raw value with `_meta: true` kept.
    error = {"code": -32002, "message": "m", "data": {"sessionId": "s", "_meta": True}}
    decoded = _decode(v2, error, v2.Error)
    assert type(decoded.data) is v2.SessionNotFoundErrorData
    assert json.loads(v2.encode(decoded))["data"] == {"sessionId": "s"}


@pytest.mark.parametrize("data", [[1], "x", 3, {"other": 1}])
def test_the_any_value_variant_takes_what_no_other_does(data: Any) -> None:
    error = {"code": -32002, "message": "m", "data": data}
    assert _round_trip(v2, error, v2.Error).data == data
