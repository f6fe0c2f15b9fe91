"""The schema's forward-compatibility and leniency rules, one test per rule."""

from __future__ import annotations

import json

import msgspec
import pytest
from acp_schema import v1

# v2 here is the 2.0.0-alpha.0 draft (acp_schema.v2_alpha0): these cases name its types.
from acp_schema import v2_alpha0 as v2


def _round_trip(module: object, data: dict[str, object], target: object) -> object:
    decoded = module.decode(json.dumps(data).encode(), target)  # type: ignore[attr-defined]
    assert json.loads(module.encode(decoded)) == data  # type: ignore[attr-defined]
    return decoded


def test_unknown_session_update_is_kept_raw_and_reencoded_unchanged() -> None:
    data = {
        "sessionId": "s",
        "update": {"sessionUpdate": "future_thing", "x": [1, {"y": None}]},
    }
    note = _round_trip(v2, data, v2.SessionNotification)
    assert isinstance(note.update, v2.SessionUpdateOther)
    assert note.update.tag == "future_thing"


def test_custom_underscore_mcp_transport_round_trips() -> None:
    data = {
        "cwd": "/w",
        "mcpServers": [
            {"type": "_acme_ws", "name": "ws", "url": "wss://x", "extra": {"a": 1}},
            {
                "type": "stdio",
                "name": "fs",
                "command": "/bin/fs",
                "args": [],
                "env": [],
            },
        ],
    }
    req = _round_trip(v2, data, v2.NewSessionRequest)
    assert isinstance(req.mcp_servers[0], v2.McpServerOther)
    assert isinstance(req.mcp_servers[1], v2.McpServerStdio)


def test_users_build_custom_variants() -> None:
    server = v2.McpServerOther({"type": "_acme_ws", "name": "ws", "url": "wss://x"})
    req = v2.NewSessionRequest(cwd="/w", mcp_servers=[server])
    assert json.loads(v2.encode(req))["mcpServers"][0]["type"] == "_acme_ws"
    update = v2.SessionUpdateOther({"sessionUpdate": "_acme_progress", "pct": 5})
    assert b'"_acme_progress"' in v2.encode(
        v2.SessionNotification(session_id="s", update=update)
    )


def test_other_variant_refuses_a_defined_tag() -> None:
    with pytest.raises(ValueError):
        v2.McpServerOther({"type": "http", "name": "x", "url": "u", "headers": []})


def test_unknown_stop_reason_and_enum_values_round_trip() -> None:
    resp = _round_trip(v2, {"stopReason": "_acme_budget"}, v2.PromptResponse)
    assert resp.stop_reason == "_acme_budget"
    _round_trip(v2, {"stopReason": "end_turn"}, v2.PromptResponse)


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_known_tag_with_malformed_body_is_an_error(module: object) -> None:
    data = {
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": 5},
    }
    with pytest.raises(msgspec.ValidationError, match=r"\$\.update\.content"):
        module.decode(json.dumps(data).encode(), module.SessionNotification)  # type: ignore[attr-defined]


def test_closed_union_in_v1_rejects_unknown_tag() -> None:
    data = {"sessionId": "s", "update": {"sessionUpdate": "future_thing"}}
    with pytest.raises(msgspec.ValidationError):
        v1.decode(json.dumps(data).encode(), v1.SessionNotification)


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_default_on_error_falls_back_to_schema_default(module: object) -> None:
    data = {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": "yes please",
            "promptCapabilities": {"image": 3},
        },
    }
    if module is v2:
        data = {"protocolVersion": 2, "authMethods": "not a list"}
    resp = module.decode(json.dumps(data).encode(), module.InitializeResponse)  # type: ignore[attr-defined]
    if module is v1:
        assert resp.agent_capabilities.load_session is False
        assert resp.agent_capabilities.prompt_capabilities.image is False
    else:
        assert resp.auth_methods == []


def test_default_on_error_without_default_means_absent() -> None:
    data = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "status": 42,
            "title": "ok",
        },
    }
    note = v1.decode(json.dumps(data).encode(), v1.SessionNotification)
    assert isinstance(note.update, v1.ToolCallUpdate)
    assert note.update.status is msgspec.UNSET
    assert note.update.title == "ok"


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
def test_skip_invalid_items_drops_bad_items_keeps_the_rest(module: object) -> None:
    update = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "web", "description": "Search"},
            {"name": 7},
            {"name": "test", "description": "Run tests"},
        ],
    }
    data = {"sessionId": "s", "update": update}
    note = module.decode(json.dumps(data).encode(), module.SessionNotification)  # type: ignore[attr-defined]
    assert [c.name for c in note.update.available_commands] == ["web", "test"]


def test_absent_and_null_are_different() -> None:
    absent = v1.decode(b'{"toolCallId": "t"}', v1.ToolCallUpdate)
    null = v1.decode(b'{"toolCallId": "t", "title": null}', v1.ToolCallUpdate)
    assert absent.title is msgspec.UNSET and null.title is None
    assert v1.encode(absent) == b'{"toolCallId":"t"}'
    assert v1.encode(null) == b'{"toolCallId":"t","title":null}'


def test_no_defaults_added_on_encode() -> None:
    assert v1.encode(v1.decode(b'{"protocolVersion": 1}', v1.InitializeRequest)) == (
        b'{"protocolVersion":1}'
    )
    explicit = b'{"protocolVersion":1,"clientCapabilities":{"terminal":false}}'
    assert v1.encode(v1.decode(explicit, v1.InitializeRequest)) == explicit


def test_tool_call_update_outside_the_union_carries_no_tag() -> None:
    update = v1.ToolCallUpdate(tool_call_id="t")
    assert v1.encode(update) == b'{"toolCallId":"t"}'
    variant = v1.SessionUpdateToolCallUpdate(tool_call_id="t")
    assert isinstance(variant, v1.ToolCallUpdate)
    assert json.loads(v1.encode(variant))["sessionUpdate"] == "tool_call_update"


def test_untagged_union_decodes_by_shape() -> None:
    text = {"type": "resource", "resource": {"uri": "file:///a", "text": "hi"}}
    blob = {"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk="}}
    assert isinstance(
        v1.convert(text, v1.ContentBlock).resource, v1.TextResourceContents
    )
    assert isinstance(
        v1.convert(blob, v1.ContentBlock).resource, v1.BlobResourceContents
    )
    v1_stdio = {"name": "fs", "command": "/bin/fs", "args": [], "env": []}
    req = v1.convert({"cwd": "/", "mcpServers": [v1_stdio]}, v1.NewSessionRequest)
    assert isinstance(req.mcp_servers[0], v1.McpServerStdio)
    assert json.loads(v1.encode(req))["mcpServers"][0] == v1_stdio


def test_untagged_union_items_decode_by_shape_from_bytes() -> None:
    data = (
        b'{"cwd":"/","mcpServers":[{"name":"fs","command":"/bin/fs","args":[],"env":[]},'
        b'{"type":"http","name":"gh","url":"https://x","headers":[]}]}'
    )
    req = v1.decode(data, v1.NewSessionRequest)
    assert [type(s) for s in req.mcp_servers] == [v1.McpServerStdio, v1.McpServerHttp]
    assert (
        v1.decode(b'{"cwd":"/","mcpServers":[]}', v1.NewSessionRequest).mcp_servers
        == []
    )
    init = v1.decode(
        b'{"protocolVersion":1,"authMethods":[{"id":"a","name":"Agent login"}]}',
        v1.InitializeResponse,
    )
    assert [type(m) for m in init.auth_methods] == [v1.AuthMethodAgent]
    built = v1.NewSessionRequest(
        cwd="/",
        mcp_servers=[{"name": "fs", "command": "/bin/fs", "args": [], "env": []}],
    )
    assert isinstance(built.mcp_servers[0], v1.McpServerStdio)


def test_by_shape_decoding_takes_the_first_variant_that_fits() -> None:
    # msgspec ignores unknown keys, so a `type` that is no tag (not a string)
    # leaves only the untagged variant, here stdio (as the schema's anyOf does).
    for tag in (["http"], {"t": 1}, 3, None):
        server = {
            "type": tag,
            "name": "fs",
            "command": "/bin/fs",
            "args": [],
            "env": [],
        }
        data = json.dumps({"cwd": "/", "mcpServers": [server]}).encode()
        (decoded,) = v1.decode(data, v1.NewSessionRequest).mcp_servers
        assert type(decoded) is v1.McpServerStdio, tag
    blob = b'{"uri":"file:///a.png","blob":"aGk="}'
    both = b'{"uri":"file:///a","text":"t","blob":"aGk="}'
    assert type(v1.decode(blob, v1.EmbeddedResourceResource)) is v1.BlobResourceContents
    assert type(v1.decode(both, v1.EmbeddedResourceResource)) is v1.TextResourceContents
    bad_http = {"type": "http", "name": "gh", "url": 3, "headers": []}
    with pytest.raises(msgspec.ValidationError, match="McpServer"):
        v1.convert(bad_http, v1.McpServer)


def test_by_shape_failure_names_the_path() -> None:
    bad = {"type": "resource", "resource": {"uri": "file:///a"}}
    with pytest.raises(msgspec.ValidationError, match="EmbeddedResourceResource"):
        v1.convert(bad, v1.ContentBlock)


def test_match_on_variants() -> None:
    data = b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}'
    note = v1.decode(data, v1.SessionNotification)
    match note.update:
        case v1.AgentMessageChunk(content=v1.TextContent(text=text)):
            assert text == "hi"
        case _:
            pytest.fail("no match")


def test_method_tables() -> None:
    assert v1.AGENT_METHODS["session/new"].params is v1.NewSessionRequest
    assert v1.AGENT_METHODS["session/new"].result is v1.NewSessionResponse
    assert v1.AGENT_METHODS["session/new"].handler == "session_new"
    assert v1.CLIENT_METHODS["session/update"].result is None
    assert "$/cancel_request" in v1.PROTOCOL_METHODS
    assert v2.PROTOCOL_METHODS == {}
    assert v1.PROTOCOL_VERSION == 1 and v2.PROTOCOL_VERSION == 2


def test_v1_unknown_elicitation_action_is_kept_raw() -> None:
    data = {"action": "_acme_snooze", "until": "tomorrow", "_meta": {"k": 1}}
    resp = _round_trip(v1, data, v1.CreateElicitationResponse)
    assert isinstance(resp, v1.CreateElicitationResponseOther)
    assert resp.tag == "_acme_snooze"


def test_v1_custom_property_schema_in_an_elicitation_form_round_trips() -> None:
    schema = {
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "color": {"type": "_acme_color", "palette": ["red", "blue"]},
        },
        "required": ["name"],
    }
    data = {
        "message": "Who?",
        "mode": "form",
        "sessionId": "s",
        "requestedSchema": schema,
    }
    req = _round_trip(v1, data, v1.CreateElicitationRequest)
    assert isinstance(req, v1.CreateElicitationRequestForm)
    properties = req.requested_schema.properties
    assert isinstance(properties["name"], v1.StringPropertySchema)
    assert isinstance(properties["color"], v1.ElicitationPropertySchemaOther)


def test_v1_open_enum_keeps_a_custom_category() -> None:
    option = {
        "id": "style",
        "name": "Style",
        "category": "_acme_style",
        "type": "select",
        "currentValue": "terse",
        "options": [{"value": "terse", "name": "Terse"}],
    }
    decoded = _round_trip(v1, option, v1.SessionConfigOption)
    assert decoded.category == "_acme_style"


def test_v1_known_elicitation_mode_with_malformed_body_is_an_error() -> None:
    data = {"message": "Who?", "mode": "url", "url": 5, "elicitationId": "e"}
    with pytest.raises(msgspec.ValidationError):
        v1.decode(json.dumps(data).encode(), v1.CreateElicitationRequest)


def test_a_plan_variant_in_preview_decodes_on_every_surface() -> None:
    # "markdown" is reserved by the stable v2 draft and defined by its
    # unstable schema: one class per concept, so `v2` reads it typed (the
    # rule for a reserved tag without a variant: tests/codegen).
    data = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "id": "p1", "content": "# Plan"},
        },
    }
    note = v2.decode(json.dumps(data).encode(), v2.SessionNotification)
    assert isinstance(note.update.plan, v2.PlanMarkdown)
    assert json.loads(v2.encode(note)) == data


def test_decoder_is_decodes_strict_first_pass_and_decode_has_the_last_word() -> None:
    known = b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}'
    assert v1.decoder(v1.SessionNotification)(known) == v1.decode(
        known, v1.SessionNotification
    )
    strict = v2.decoder(v2.SessionNotification)
    assert strict is v2.decoder(v2.SessionNotification)  # built once
    future = b'{"sessionId":"s","update":{"sessionUpdate":"future_thing","x":1}}'
    with pytest.raises(msgspec.ValidationError):
        strict(future)  # the lenient rules are decode's, not the first pass's
    assert isinstance(
        v2.decode(future, v2.SessionNotification).update, v2.SessionUpdateOther
    )
