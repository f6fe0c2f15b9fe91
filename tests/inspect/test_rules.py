"""The proxy's rules, each on the lines that break it and on lines that do not
(no event loop: lines in, findings out)."""

from __future__ import annotations

from _inspect_wire import Wire, line, rules
from acp_inspect import Direction, Inspector, LineSplitter, Malformed, parse_line
from acp_inspect.rules import ALL_MESSAGES, DEFAULT_RULES

PROMPT = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}


def test_a_clean_turn_breaks_no_rule() -> None:
    w = Wire()
    found = w.client(id=1, method="session/prompt", params=PROMPT)
    found += w.update()
    found += w.agent(id=1, result={"stopReason": "end_turn"})
    assert found == []
    assert w.inspector.findings == []


def test_request_before_initialize_is_reported() -> None:
    w = Wire(init=False)
    found = w.client(id=1, method="session/new", params={"cwd": "/", "mcpServers": []})
    assert rules(found) == ["before-initialize"]
    assert found[0].cite == "v1/initialization.mdx:24" and found[0].is_must


def test_line_that_is_not_json_rpc_is_reported_with_the_senders_transport_rule() -> (
    None
):
    w = Wire()
    found = w.inspector.feed("from_agent", 0.0, b"Loading model...")
    assert rules(found) == ["malformed"]
    assert found[0].cite == "v1/transports.mdx:26"
    found = w.inspector.feed("to_agent", 0.0, b'{"id":1,"method":"x"}')
    assert rules(found) == ["malformed"] and found[0].cite == "v1/transports.mdx:27"
    assert rules(w.inspector.feed("to_agent", 0.0, b"[]")) == ["malformed"]


def test_params_that_do_not_fit_the_negotiated_schema_are_reported() -> None:
    w = Wire()
    found = w.client(id=1, method="session/prompt", params={"sessionId": "s1"})
    assert rules(found) == ["schema"]
    assert "prompt" in found[0].text


def test_response_to_unknown_id_is_reported() -> None:
    w = Wire()
    assert rules(w.agent(id=77, result={})) == ["response-to-unknown-id"]
    assert w.agent(id=None, error={"code": -32700, "message": "Parse error"}) == []


def test_update_for_unknown_session_is_reported() -> None:
    w = Wire()
    found = w.update(sid="nope")
    assert rules(found) == ["unknown-session"]
    assert found[0].cite == "v1/session-setup.mdx:71"


def test_call_the_agent_did_not_advertise_is_reported() -> None:
    w = Wire(agent_result={"protocolVersion": 1, "agentCapabilities": {}})
    found = w.client(
        id=1,
        method="session/load",
        params={"sessionId": "s1", "cwd": "/", "mcpServers": []},
    )
    assert rules(found) == ["unadvertised-agent-method"]
    assert found[0].cite == "v1/session-setup.mdx:104"
    found = w.client(id=2, method="session/close", params={"sessionId": "s1"})
    assert found[0].cite == "v1/session-setup.mdx:278"


def test_call_the_client_did_not_advertise_is_reported() -> None:
    w = Wire(client_caps={"fs": {"readTextFile": True}})
    assert (
        w.agent(
            id=1, method="fs/read_text_file", params={"sessionId": "s1", "path": "/a"}
        )
        == []
    )
    found = w.agent(
        id=2,
        method="fs/write_text_file",
        params={"sessionId": "s1", "path": "/a", "content": ""},
    )
    assert rules(found) == ["unadvertised-client-method"]
    assert found[0].cite == "v1/file-system.mdx:28"
    found = w.agent(
        id=3, method="terminal/create", params={"sessionId": "s1", "command": "ls"}
    )
    assert found[0].cite == "v1/terminals.mdx:25"


def test_session_feature_the_agent_did_not_advertise_is_reported() -> None:
    w = Wire()
    found = w.client(
        id=1,
        method="session/new",
        params={"cwd": "/", "mcpServers": [], "additionalDirectories": ["/b"]},
    )
    assert rules(found) == ["unadvertised-session-feature"]
    http = {"type": "http", "name": "m", "url": "http://x", "headers": []}
    found = w.client(
        id=2, method="session/new", params={"cwd": "/", "mcpServers": [http]}
    )
    assert found[0].cite == "v1/session-setup.mdx:522"
    image = {"type": "image", "data": "", "mimeType": "image/png"}
    found = w.client(
        id=3, method="session/prompt", params={"sessionId": "s1", "prompt": [image]}
    )
    assert found[0].cite == "v1/prompt-turn.mdx:92"


def test_terminal_login_offered_to_a_client_without_auth_terminal_is_reported() -> None:
    w = Wire(init=False)
    w.client(id=1, method="initialize", params={"protocolVersion": 1})
    method = {"id": "t", "name": "Log in", "type": "terminal"}
    found = w.agent(id=1, result={"protocolVersion": 1, "authMethods": [method]})
    assert rules(found) == ["terminal-auth-not-advertised"]
    # "may advertise ... only when": no keyword on the line, not a MUST
    assert found[0].level == "SHOULD" and not found[0].is_must
    ok = Wire(init=False)
    ok.client(
        id=1,
        method="initialize",
        params={
            "protocolVersion": 1,
            "clientCapabilities": {"auth": {"terminal": True}},
        },
    )
    assert ok.agent(id=1, result={"protocolVersion": 1, "authMethods": [method]}) == []


def test_relative_path_is_reported() -> None:
    w = Wire()
    found = w.client(
        id=1, method="session/new", params={"cwd": "work", "mcpServers": []}
    )
    assert rules(found) == ["relative-path"] and found[0].cite == "v1/overview.mdx:214"
    assert (
        w.client(id=2, method="session/new", params={"cwd": "C:\\w", "mcpServers": []})
        == []
    )
    w2 = Wire(client_caps={"fs": {"readTextFile": True}})
    found = w2.agent(
        id=1, method="fs/read_text_file", params={"sessionId": "s1", "path": "a.txt"}
    )
    assert rules(found) == ["relative-path"]


def test_prompt_not_answered_cancelled_after_session_cancel_is_reported() -> None:
    w = Wire()
    w.client(id=1, method="session/prompt", params=PROMPT)
    w.client(method="session/cancel", params={"sessionId": "s1"})
    found = w.agent(id=1, result={"stopReason": "end_turn"})
    assert rules(found) == ["cancelled-stop-reason"]
    assert found[0].cite == "v1/prompt-turn.mdx:332"
    w.client(id=2, method="session/prompt", params=PROMPT)
    w.client(method="session/cancel", params={"sessionId": "s1"})
    found = w.agent(id=2, error={"code": -32800, "message": "cancelled"})
    assert rules(found) == ["cancelled-stop-reason"]
    w.client(id=3, method="session/prompt", params=PROMPT)
    w.client(method="session/cancel", params={"sessionId": "s1"})
    assert w.agent(id=3, result={"stopReason": "cancelled"}) == []


def test_cancelled_prompt_never_answered_is_reported_at_the_end() -> None:
    w = Wire()
    w.client(id=1, method="session/prompt", params=PROMPT)
    w.client(method="session/cancel", params={"sessionId": "s1"})
    found = w.inspector.finish(1.0)
    assert rules(found) == ["unanswered"]
    assert found[0].cite == "v1/prompt-turn.mdx:332"


def test_updates_after_the_turns_response_are_reported() -> None:
    w = Wire()
    w.client(id=1, method="session/prompt", params=PROMPT)
    w.client(method="session/cancel", params={"sessionId": "s1"})
    w.agent(id=1, result={"stopReason": "cancelled"})
    found = w.update()
    assert rules(found) == ["update-after-turn"]
    assert found[0].cite == "v1/prompt-turn.mdx:343" and found[0].is_must
    w.client(id=2, method="session/prompt", params=PROMPT)
    w.agent(id=2, result={"stopReason": "end_turn"})
    found = w.update("tool_call_update")
    # :217 says the turn ends with the response, not that nothing follows: SHOULD
    assert (found[0].cite, found[0].level) == ("v1/prompt-turn.mdx:217", "SHOULD")
    assert w.update("session_info_update") == []  # metadata may come any time


def test_permission_answered_after_cancel_without_cancelled_outcome_is_reported() -> (
    None
):
    w = Wire()
    w.client(id=1, method="session/prompt", params=PROMPT)
    ask = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "c"},
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
    }
    w.agent(id=5, method="session/request_permission", params=ask)
    w.client(method="session/cancel", params={"sessionId": "s1"})
    found = w.client(id=5, result={"outcome": {"outcome": "selected", "optionId": "y"}})
    assert rules(found) == ["permission-not-cancelled"]
    assert found[0].cite == "v1/prompt-turn.mdx:328"


def test_tools_run_after_session_cancel_are_reported() -> None:
    # prompt-turn.mdx:330: the agent SHOULD stop all tool call invocations
    w = Wire()
    w.client(id=1, method="session/prompt", params=PROMPT)
    started = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit"}
    update = {"sessionId": "s1", "update": started}
    assert w.agent(method="session/update", params=update) == []  # before the cancel
    w.client(method="session/cancel", params={"sessionId": "s1"})
    ask = {"sessionId": "s1", "toolCall": {"toolCallId": "c2"}, "options": []}
    found = w.agent(id=5, method="session/request_permission", params=ask)
    assert rules(found) == ["tool-after-cancel"]
    assert (found[0].cite, found[0].level) == ("v1/prompt-turn.mdx:330", "SHOULD")
    found = w.agent(method="session/update", params=update)
    assert rules(found) == ["tool-after-cancel"]
    running = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "in_progress",
    }
    found = w.agent(
        method="session/update", params={"sessionId": "s1", "update": running}
    )
    assert rules(found) == ["tool-after-cancel"]
    ended = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "failed",
    }
    assert (
        w.agent(method="session/update", params={"sessionId": "s1", "update": ended})
        == []
    )


def test_replay_on_resume_is_reported() -> None:
    w = Wire()
    w.client(id=1, method="session/resume", params={"sessionId": "s1", "cwd": "/"})
    assert rules(w.update("agent_message_chunk")) == ["replay-on-resume"]


def test_load_replay_is_not_an_update_after_the_turn() -> None:
    w = Wire()
    w.client(id=1, method="session/prompt", params=PROMPT)
    w.agent(id=1, result={"stopReason": "end_turn"})
    w.client(
        id=2,
        method="session/load",
        params={"sessionId": "s1", "cwd": "/", "mcpServers": []},
    )
    assert w.update("user_message_chunk") == []
    assert w.agent(id=2, result=None) == []


def test_v2_is_checked_with_v2_capabilities_and_lines() -> None:
    w = Wire(init=False)
    w.client(
        id=1, method="initialize", params={"protocolVersion": 2, "capabilities": {}}
    )
    w.agent(id=1, result={"protocolVersion": 2, "capabilities": {"session": {}}})
    assert w.inspector.state.version == 2
    found = w.client(
        id=2,
        method="session/load",
        params={"sessionId": "s", "cwd": "/", "mcpServers": []},
    )
    assert [f.cite for f in found] == ["v2/session-setup.mdx:107"]


def test_line_splitter_drops_oversized_lines_without_buffering_them() -> None:
    s = LineSplitter(max_line=10)
    assert s.feed(b"abc\nde") == [b"abc"]
    assert s.feed(b"f" * 100) == []
    assert s._buffer.buffered == 0  # not held while it streams
    assert s.feed(b"g\nok\n") == [b"ok"]
    assert s.skipped == 1
    assert s.feed(b"tail") == [] and s.rest() == [b"tail"]


def test_batch_members_are_checked_one_by_one() -> None:
    w = Wire()
    batch = (
        b"["
        + line(id=1, method="session/new", params={"cwd": "x", "mcpServers": []})
        + b",1]"
    )
    found = w.inspector.feed("to_agent", 0.0, batch)
    assert sorted(rules(found)) == ["malformed", "relative-path"]


def test_inspector_has_no_event_loop_dependency() -> None:
    assert Inspector().feed("to_agent", 0.0, b"") == []


def _scope_corpus() -> list[tuple[Direction, bytes]]:
    """Lines that trip every rule (and some that trip none), each with the
    way it crosses, in an order that builds the state each rule needs."""
    c: Direction = "to_agent"
    a: Direction = "from_agent"
    new = {"cwd": "rel", "mcpServers": [], "additionalDirectories": ["/x"]}
    late = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "x"},
    }
    init = {"protocolVersion": 1, "clientCapabilities": {}}
    caps = {
        "protocolVersion": 1,
        "agentCapabilities": {"sessionCapabilities": {"resume": {}}},
        "authMethods": [{"id": "t", "name": "t", "type": "terminal"}],
    }
    ask = {"sessionId": "s1", "options": [], "toolCall": {}}
    started = {"sessionUpdate": "tool_call", "toolCallId": "t9", "title": "x"}
    return [
        (c, line(id=1, method="session/new", params=new)),  # before initialize
        (c, line(id=2, method="initialize", params=init)),
        (a, line(id=2, result=caps)),
        (c, line(id=3, method="session/new", params=new)),
        (a, line(id=3, result={"sessionId": "s1"})),
        (c, line(id=4, method="session/list", params={})),
        (c, line(id=5, method="session/prompt", params=PROMPT)),
        (a, line(id=6, method="fs/read_text_file", params={"sessionId": "s1", "path": "/r"})),
        (a, line(id=7, method="session/request_permission", params=ask)),
        (c, line(method="session/cancel", params={"sessionId": "s1"})),
        (a, line(method="session/update", params={"sessionId": "s1", "update": started})),
        (c, line(id=7, result={"outcome": {"outcome": "selected", "optionId": "o"}})),
        (a, line(id=5, result={"stopReason": "end_turn"})),
        (a, line(method="session/update", params={"sessionId": "s1", "update": late})),
        (a, line(method="session/update", params={"sessionId": "nope", "update": late})),
        (c, line(id=8, method="session/resume", params={"sessionId": "s1", "cwd": "/"})),
        (a, line(method="session/update", params={"sessionId": "s1", "update": late})),
        (a, line(id=99, result={})),
    ]  # fmt: skip


def test_rules_skip_only_messages_their_check_would_pass() -> None:
    """The inspector runs a rule only on the (direction, kind) pairs of its
    ``applies_to``: every other message, in any state, the rule passes."""
    tripped: set[str] = set()
    inspector = Inspector()
    for direction, raw in _scope_corpus():
        other: Direction = "from_agent" if direction == "to_agent" else "to_agent"
        for way in (direction, other):  # each line as sent, and mirrored
            for msg in parse_line(way, 0, 0.0, raw):
                assert not isinstance(msg, Malformed), msg
                for rule in DEFAULT_RULES:
                    assert rule.applies_to <= ALL_MESSAGES
                    breach = rule.check(inspector.state, msg)
                    if (msg.direction, msg.kind) not in rule.applies_to:
                        assert breach is None, (rule.key, msg)
        tripped |= {f.rule for f in inspector.feed(direction, 0.0, raw)}
    # the corpus reaches every rule, so the skips above were put to the test
    assert {r.key for r in DEFAULT_RULES} <= tripped


def _url_elicitation(id_: int) -> dict[str, object]:
    return {
        "id": id_,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "sign in",
            "elicitationId": "e1",
            "url": "https://example.com/login",
            "sessionId": "s1",
        },
    }


def test_elicitation_in_a_mode_the_client_did_not_advertise_is_reported() -> None:
    w = Wire(client_caps={"elicitation": {"form": {}}})
    found = w.agent(**_url_elicitation(5))
    assert rules(found) == ["unadvertised-client-method"]
    assert found[0].cite == "v1/elicitation.mdx:54" and "url" in found[0].text
    w = Wire(client_caps={"elicitation": {"form": {}, "url": {}}})
    assert w.agent(**_url_elicitation(5)) == []


def test_elicitation_complete_without_url_elicitation_is_reported() -> None:
    w = Wire(client_caps={"elicitation": {"form": {}}})
    found = w.agent(method="elicitation/complete", params={"elicitationId": "e1"})
    assert rules(found) == ["unadvertised-client-method"]
    assert found[0].cite == "v1/elicitation.mdx:54"


def test_fork_without_its_capability_cites_the_rule_for_all_capabilities() -> None:
    w = Wire()
    found = w.client(
        id=9,
        method="session/fork",
        params={"sessionId": "s1", "cwd": "/w", "mcpServers": []},
    )
    assert rules(found) == ["unadvertised-agent-method"]
    assert found[0].cite == "v1/initialization.mdx:106"


def test_a_version_we_have_no_schema_for_holds_no_capability_against_the_client() -> (
    None
):
    # an agent answering a later protocol version: acp_core cannot read its
    # capabilities, so nothing is refused (as the runtimes refuse nothing)
    w = Wire(agent_result={"protocolVersion": 3, "agentCapabilities": {}})
    assert w.inspector.state.version == 3 and not w.inspector.state.agent.known
    found = w.client(
        id=9,
        method="session/load",
        params={"sessionId": "s1", "cwd": "/w", "mcpServers": []},
    )
    assert found == []


def test_before_initialize_binds_the_client_only_not_an_agent_it_provoked() -> None:
    w = Wire(init=False)
    found = w.client(id=1, method="session/new", params={"cwd": "/", "mcpServers": []})
    found += w.agent(id=1, result={"sessionId": "s1"})  # served: provoked
    found += w.update()  # the agent streams for the session it was asked for
    assert [(f.rule, f.direction) for f in found] == [("before-initialize", "to_agent")]
