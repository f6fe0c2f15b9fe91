"""The cancel rules on the engine: bytes in, answers out, no event loop.

The same rules as tests/runtime/test_cancellation.py checks over trio
connections (which also checks the adapter's side: handlers stopped, tasks
gone), here where they live: ``session/cancel`` and ``session/close`` on the
agent's prompts, the client's permission requests of a cancelled session,
``$/cancel_request`` out when a caller leaves (where the version has it).
"""

from __future__ import annotations

from typing import Any

import msgspec
from acp_core import AgentRules, ClientRules, Engine, IncomingRequest, Limits, Schema
from acp_schema import v1, v2_alpha0
from test_engine_rules import (
    Agent,
    Flag,
    Scope,
    events,
    initialized_agent,
    initialized_client,
    line,
    replies,
)


def prompt(ident: int, session: str = "s1") -> bytes:
    return line(
        {
            "id": ident,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": []},
        }
    )


def cancel(session: str = "s1") -> bytes:
    return line({"method": "session/cancel", "params": {"sessionId": session}})


def running_prompt(engine: Engine, ident: int, session: str = "s1") -> IncomingRequest:
    engine.receive_data(prompt(ident, session))
    (request,) = events(engine)
    assert isinstance(request, IncomingRequest)
    request.running.handle = Scope()
    return request


def decoded(answer: bytes) -> Any:
    return msgspec.json.decode(answer)


class ClosingAgent(Agent):
    async def session_close(self, p: v1.CloseSessionRequest) -> v1.CloseSessionResponse:
        return v1.CloseSessionResponse()


def test_session_close_cancels_the_prompt_then_releases_the_session() -> None:
    engine, _ = initialized_agent()
    engine.set_handler(ClosingAgent())
    request = running_prompt(engine, 1)
    engine.receive_data(
        line({"id": 2, "method": "session/close", "params": {"sessionId": "s1"}})
    )
    (close,) = events(engine)
    assert isinstance(close, IncomingRequest)
    assert request.running.handle.cancelled  # type: ignore[union-attr]
    answer = engine.answer_cancelled(request)
    assert decoded(answer)["result"]["stopReason"] == "cancelled"
    engine.request_done(request, answer)
    engine.request_done(close, engine.answer(close, v1.CloseSessionResponse()))
    assert not engine.rules.session_cancel.running


def test_a_prompt_returning_normally_after_cancel_is_answered_cancelled() -> None:
    engine, _ = initialized_agent()
    request = running_prompt(engine, 1)
    engine.receive_data(cancel())
    assert events(engine) == []
    assert request.running.cancel_reason == "session"
    result = v1.PromptResponse(stop_reason="end_turn", meta={"kept": True})
    answer = decoded(engine.answer(request, result))
    assert answer["result"] == {"stopReason": "cancelled", "_meta": {"kept": True}}


def test_a_prompt_that_returned_before_the_cancel_keeps_its_answer() -> None:
    engine, _ = initialized_agent()
    request = running_prompt(engine, 1)
    answer = engine.answer(request, v1.PromptResponse(stop_reason="end_turn"))
    assert engine.request_done(request, answer) == answer
    engine.receive_data(cancel())
    assert events(engine) == []
    assert request.running.cancel_reason is None
    assert decoded(answer)["result"]["stopReason"] == "end_turn"


def test_a_prompt_cancelled_before_its_handler_started_is_answered_cancelled() -> None:
    engine = Engine(AgentRules([1]), Limits(max_concurrent_requests=1))
    initialize(engine)
    first = running_prompt(engine, 1)
    engine.receive_data(prompt(2, "s2"))
    assert events(engine) == []  # at the bound: it waits
    engine.receive_data(cancel("s2"))
    assert events(engine) == []
    engine.request_done(first, engine.answer_cancelled(first))
    waiting = engine.next_queued()
    assert isinstance(waiting, IncomingRequest)
    assert waiting.running.cancel_reason == "session"  # never started: answered
    answer = decoded(engine.answer_cancelled(waiting))
    assert answer["id"] == 2 and answer["result"]["stopReason"] == "cancelled"


def test_the_clients_session_cancel_answers_its_permission_requests_cancelled() -> None:
    client = initialized_client()
    flag = Flag()
    client.start_call(
        client.schema.outgoing["session/prompt"],
        v1.PromptRequest(session_id="s1", prompt=[]),
        flag,
    )
    client.notification(
        client.schema.outgoing["session/cancel"],
        v1.CancelNotification(session_id="s1"),
    )
    client.receive_data(
        line(
            {
                "id": 7,
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "toolCall": {"toolCallId": "t"},
                    "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                },
            }
        )
    )
    (request,) = events(client)
    assert isinstance(request, IncomingRequest)
    assert request.running.cancel_reason == "session"
    answer = decoded(client.answer_cancelled(request))
    assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
    assert replies(client) == []


def test_a_caller_leaving_early_sends_cancel_request_only_where_the_version_has_it() -> (
    None
):
    for version, draft, module in ((1, None, v1), (2, "v2_alpha0", v2_alpha0)):
        schema = Schema.load(version, "client", draft=draft)
        engine = Engine(ClientRules([version]), schema=schema)
        expected = draft is None  # the 2.0.0-alpha.0 draft has no $/cancel_request
        call = engine.start_call(
            engine.schema.outgoing["session/new"],
            module.NewSessionRequest(cwd="/", mcp_servers=[]),
            Flag(),
        )
        line_ = engine.call_finished(call)  # left before its answer
        if expected:
            assert line_ is not None
            assert decoded(line_)["method"] == "$/cancel_request"
            assert decoded(line_)["params"] == {"requestId": call.id}
        else:
            assert line_ is None


# -- helpers ------------------------------------------------------------------


def initialize(engine: Engine) -> None:
    engine.receive_data(
        line({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    )
    events(engine)
    engine.set_handler(Agent())
    (init,) = events(engine)
    assert isinstance(init, IncomingRequest)
    engine.request_done(
        init, engine.answer(init, v1.InitializeResponse(protocol_version=1))
    )
