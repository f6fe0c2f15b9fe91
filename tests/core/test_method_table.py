"""The rules table: one record per incoming method, read without a connection,
and applied by the engine at receipt (bytes in, answers out, no event loop)."""

from __future__ import annotations

import msgspec
import pytest
from acp_core import AgentRules, Engine, IncomingRequest, Running
from acp_core._capabilities import (  # pyright: ignore[reportPrivateUsage]
    _CLIENT_NEEDS,  # pyright: ignore[reportPrivateUsage]
    INCOMING_CHECKED,
)
from acp_core._schema import protocol_module, supported_versions
from acp_core._table import (
    AGENT_TABLE,
    CLIENT_TABLE,
    DEFAULT_RULE,
    MethodRule,
    rule_of,
)
from acp_schema import v1
from test_engine_rules import (
    INIT,
    Agent,
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
    assert AgentRules.watched_notifications == {"session_cancel"}
    assert {h for h, r in CLIENT_TABLE.items() if r.cancel == "session"} == {
        "session_request_permission"
    }


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
