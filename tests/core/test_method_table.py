"""The rules table: one record per incoming method, read without a connection,
and applied by the engine at receipt (bytes in, answers out, no event loop)."""

from __future__ import annotations

import msgspec
import pytest
from acp_core import AgentRules, ClientRules, Engine, IncomingRequest, Running
from acp_core._capabilities import (  # pyright: ignore[reportPrivateUsage]
    _CLIENT_NEEDS,  # pyright: ignore[reportPrivateUsage]
    INCOMING_CHECKED,
)
from acp_core._schema import protocol_module, supported_versions
from acp_core._support import Support
from acp_core._table import (
    AGENT_SENT,
    AGENT_TABLE,
    CLIENT_SENT,
    CLIENT_TABLE,
    DEFAULT_RULE,
    CancelledAnswer,
    MethodRule,
    SentRule,
    rule_of,
)
from acp_schema import v1
from test_engine_rules import (
    INIT,
    Agent,
    Client,
    Flag,
    Scope,
    events,
    initialized_agent,
    initialized_client,
    line,
    replies,
)


def _incoming(side: str) -> set[str]:
    """The handler names ``side`` receives in some version."""
    table = "AGENT_METHODS" if side == "agent" else "CLIENT_METHODS"
    found: set[str] = set()
    for version in supported_versions():
        module = protocol_module(version)
        for name in (table, f"{table}_UNSTABLE"):  # the unstable surface too
            found |= {m.handler for m in getattr(module, name, {}).values()}
    return found


@pytest.mark.parametrize("side", ["agent", "client"])
def test_every_row_of_the_table_names_a_method_its_side_receives(side: str) -> None:
    table = AGENT_TABLE if side == "agent" else CLIENT_TABLE
    assert set(table) <= _incoming(side)
    assert all(isinstance(rule, MethodRule) for rule in table.values())


@pytest.mark.parametrize("side", ["agent", "client"])
def test_a_method_the_table_does_not_list_is_gated_by_initialize_only(
    side: str,
) -> None:
    assert rule_of(side, "no_such_method") == DEFAULT_RULE
    assert DEFAULT_RULE == MethodRule(gate="initialized")
    assert not DEFAULT_RULE.check and not DEFAULT_RULE.watched


def test_the_receiver_check_rows_are_the_methods_the_capability_rules_look_at() -> None:
    for side, extra in (("agent", set[str]()), ("client", {"elicitation_create"})):
        incoming = _incoming(side)
        checked = {h for h in incoming if rule_of(side, h).check}
        assert checked == (INCOMING_CHECKED | extra) & incoming, side


def test_the_advertised_gate_rows_are_the_capabilities_the_client_refuses() -> None:
    advertised = {h for h, r in CLIENT_TABLE.items() if r.gate == "advertised"}
    assert advertised == set(_CLIENT_NEEDS) - {"elicitation_create"}


def test_only_initialize_opens_the_gate() -> None:
    assert {h for h, r in AGENT_TABLE.items() if r.gate == "opens"} == {"initialize"}
    assert all(r.gate != "opens" for r in CLIENT_TABLE.values())


def test_prompts_and_permission_requests_are_cancelled_with_their_session() -> None:
    assert {h for h, r in AGENT_TABLE.items() if r.cancel == "session"} == {
        "session_prompt"
    }
    assert {h for h, r in AGENT_TABLE.items() if r.cancels} == {
        "session_cancel",
        "session_close",
    }
    assert AgentRules([1]).watched_notifications == {"session_cancel"}
    assert {h for h, r in CLIENT_TABLE.items() if r.cancel == "session"} == {
        "session_request_permission"
    }


def test_every_cancel_session_row_says_what_its_cancelled_request_answers() -> None:
    for table in (AGENT_TABLE, CLIENT_TABLE):
        for handler, rule in table.items():
            if rule.cancel == "session":
                assert rule.cancelled is not None, handler
                assert hasattr(Support, rule.cancelled.support), handler
    assert CLIENT_SENT["session_cancel"].cancels
    assert CLIENT_SENT["session_prompt"].turn
    assert AGENT_SENT == {}


# -- a table built here changes what the engine does ----------------------------

SET_MODE = {
    "id": 5,
    "method": "session/set_mode",
    "params": {"sessionId": "s1", "modeId": "fast"},
}


class ModeAgent(Agent):
    async def session_set_mode(
        self, p: v1.SetSessionModeRequest
    ) -> v1.SetSessionModeResponse:
        return v1.SetSessionModeResponse()


def _initialized(rules: AgentRules) -> Engine:
    engine = Engine(rules)
    engine.receive_data(line(INIT))
    events(engine)  # VersionChosen
    engine.set_handler(ModeAgent())
    (init,) = events(engine)
    engine.request_done(
        init, engine.answer(init, v1.InitializeResponse(protocol_version=1))
    )
    return engine


def test_a_cancel_session_row_added_to_a_table_is_cancelled_with_its_session() -> None:
    table = {**AGENT_TABLE, "session_set_mode": MethodRule(cancel="session")}
    engine = _initialized(AgentRules([1], table=table))
    engine.receive_data(line(SET_MODE))
    (request,) = events(engine)
    assert isinstance(request, IncomingRequest)
    request.running.handle = scope = Scope()
    engine.receive_data(
        line({"method": "session/cancel", "params": {"sessionId": "s1"}})
    )
    events(engine)
    assert scope.cancelled and request.running.cancel_reason == "session"
    # no ``cancelled`` answer in its row: answered as any cancelled request
    answer = msgspec.json.decode(engine.answer_cancelled(request))
    assert answer["error"]["code"] == -32800


def test_without_its_row_the_same_request_is_not_cancelled_with_its_session() -> None:
    engine = _initialized(AgentRules([1]))
    engine.receive_data(line(SET_MODE))
    (request,) = events(engine)
    request.running.handle = scope = Scope()
    engine.receive_data(
        line({"method": "session/cancel", "params": {"sessionId": "s1"}})
    )
    events(engine)
    assert not scope.cancelled


def test_what_a_cancelled_request_answers_is_read_from_its_row() -> None:
    refused = CancelledAnswer(
        b'{"stopReason":"refusal"}', field=None, support="prompt_stop_reason", why=""
    )
    table = {
        **AGENT_TABLE,
        "session_prompt": MethodRule(cancel="session", cancelled=refused),
    }
    engine = _initialized(AgentRules([1], table=table))
    engine.receive_data(
        line(
            {
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": []},
            }
        )
    )
    (prompt,) = events(engine)
    prompt.running.handle = Scope()
    engine.receive_data(
        line({"method": "session/cancel", "params": {"sessionId": "s1"}})
    )
    events(engine)
    answer = msgspec.json.decode(engine.answer_cancelled(prompt))
    assert answer["result"] == {"stopReason": "refusal"}


def test_which_sends_cancel_the_client_s_requests_is_read_from_its_sent_table() -> None:
    # here sending session/set_mode (not session/cancel) cancels the session
    sent = {"session_set_mode": SentRule(cancels=True)}
    client = Engine(ClientRules([1], sent=sent))
    client.set_handler(Client())
    waiter = Flag()
    call = client.start_call(
        client.schema.outgoing["initialize"],
        v1.InitializeRequest(protocol_version=1),
        waiter,
    )
    client.receive_data(line({"id": call.id, "result": {"protocolVersion": 1}}))
    events(client)
    client.call_finished(call)
    ask = {
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t"},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    }
    client.receive_data(line({"id": 7, **ask}))
    (first,) = events(client)
    first.running.handle = scope = Scope()
    client.notification(
        client.schema.outgoing["session/cancel"], v1.CancelNotification(session_id="s1")
    )
    assert not scope.cancelled  # session/cancel is no longer a cancelling send
    client.start_call(
        client.schema.outgoing["session/set_mode"],
        v1.SetSessionModeRequest(session_id="s1", mode_id="fast"),
        Flag(),
    )
    assert scope.cancelled and first.running.cancel_reason == "session"


# -- the engine applies the table's rows ----------------------------------------

NEW_RELATIVE = {
    "id": 1,
    "method": "session/new",
    "params": {"cwd": "relative/dir", "mcpServers": []},
}


def test_the_receiver_check_runs_where_the_table_says_check() -> None:
    engine, _ = initialized_agent()
    engine.receive_data(line(NEW_RELATIVE))
    assert events(engine) == []
    (error,) = replies(engine)
    assert error["error"]["code"] == -32602


def test_a_row_without_check_takes_the_params_unchecked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(AGENT_TABLE, "session_new", MethodRule())  # type: ignore[arg-type]
    engine, _ = initialized_agent()
    engine.receive_data(line(NEW_RELATIVE))
    (request,) = events(engine)
    assert isinstance(request, IncomingRequest)
    assert request.params.cwd == "relative/dir"


def test_a_watched_row_acts_at_receipt_before_the_queue() -> None:
    engine, _ = initialized_agent()
    engine.receive_data(
        line(
            {
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": []},
            }
        )
    )
    (prompt,) = events(engine)
    assert isinstance(prompt, IncomingRequest)
    prompt.running.handle = scope = Scope()
    engine.receive_data(
        line({"method": "session/cancel", "params": {"sessionId": "s1"}})
    )
    assert events(engine) == []
    assert scope.cancelled and prompt.running.cancel_reason == "session"
    assert len(engine.queue) == 1  # its handler still runs, in order


def test_an_advertised_row_refuses_what_the_client_did_not_advertise() -> None:
    caps = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))
    client = initialized_client(caps)
    assert "fs/read_text_file" not in client.rules.refusals
    assert "fs/write_text_file" in client.rules.refusals
    assert "terminal/create" in client.rules.refusals
    client.receive_data(
        line(
            {
                "id": 3,
                "method": "terminal/create",
                "params": {"sessionId": "s", "command": "ls"},
            }
        )
    )
    assert events(client) == []
    (error,) = replies(client)
    assert error["error"]["code"] == -32601


def test_the_initialize_row_holds_requests_pipelined_behind_it() -> None:
    engine = Engine(AgentRules([1]))
    engine.receive_data(
        line(INIT)
        + line(
            {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        )
    )
    (_chosen,) = events(engine)
    engine.set_handler(Agent())
    (init,) = events(engine)
    assert isinstance(init, IncomingRequest)
    assert init.running.method.name == "initialize"
    assert engine.queue_blocked  # session/new waits for initialize's answer
    answer = engine.answer(init, v1.InitializeResponse(protocol_version=1))
    engine.request_done(init, answer)
    new = engine.next_queued()
    assert isinstance(new, IncomingRequest) and isinstance(new.running, Running)
    assert msgspec.structs.asdict(new.params)["cwd"] == "/"
