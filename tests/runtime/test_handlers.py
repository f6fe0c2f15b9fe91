"""Handler objects: result types checked, Protocol stubs absent, misnamed methods reported."""

from __future__ import annotations

import logging
from typing import Any

import acp_trio
import pytest
import trio
from _acp_helpers import (
    INIT_V1,
    EchoAgent,
    RecordingClient,
    chunk,
    connected,
    raw_client_of,
    text_prompt,
)
from acp_core._handlers import HandlerNames, HandlerResultError, ResultRule
from acp_core._schema import Schema
from acp_schema import v1, v1_unstable
from acp_schema import v2_alpha0 as v2

NEW = {"cwd": "/", "mcpServers": []}


class ReturningAgent(EchoAgent):
    """``session/new`` answers whatever the test puts in ``answer``."""

    answer: Any = None

    async def session_new(self, params: v1.NewSessionRequest) -> Any:
        return self.answer

    async def session_close(self, params: v1.CloseSessionRequest) -> Any:
        return None

    async def session_set_mode(self, params: v1.SetSessionModeRequest) -> Any:
        return None


def returning(answer: Any) -> type[ReturningAgent]:
    return type("Agent", (ReturningAgent,), {"answer": answer})


# -- results -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"sessionId": "sess_dict"},  # the right shape, but a dict
        None,  # NewSessionResponse has a required field
        v1.LoadSessionResponse(),  # another method's result
        v2.NewSessionResponse(session_id="sess_v2"),  # another version's
    ],
    ids=["dict", "none", "wrong-struct", "wrong-version"],
)
async def test_a_handler_result_of_the_wrong_type_is_answered_internal_error_not_sent(
    answer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async with raw_client_of(returning(answer)) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/new", NEW)
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert "result" not in reply
    assert any(
        "the handler of session/new returned" in r.getMessage()
        or "the handler of session/new returned" in str(r.exc_info)
        for r in caplog.records
        if r.levelno >= logging.ERROR
    )


async def test_none_from_a_handler_whose_result_type_has_no_required_field_is_answered_an_empty_object() -> (
    None
):
    async with raw_client_of(returning(None)) as peer:
        await peer.initialize()
        closed = await peer.call(1, "session/close", {"sessionId": "s"})
        mode = await peer.call(2, "session/set_mode", {"sessionId": "s", "modeId": "m"})
    assert closed["result"] == {} and mode["result"] == {}


async def test_the_unstable_twin_of_the_result_type_is_accepted() -> None:
    # a handler of an unstable connection built with the stable module, or the reverse
    stable = v1.NewSessionResponse(session_id="sess_stable")
    assert ResultRule(v1_unstable.NewSessionResponse).check(stable, "x") is stable
    async with raw_client_of(
        returning(v1_unstable.NewSessionResponse(session_id="sess_twin"))
    ) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/new", NEW)
    assert reply["result"] == {"sessionId": "sess_twin"}


def test_a_result_union_accepts_each_member_and_nothing_else() -> None:
    rule = ResultRule(v1.CLIENT_METHODS["elicitation/create"].result)
    cancel = v1.CreateElicitationResponseCancel()
    assert rule.check(cancel, "elicitation/create") is cancel
    with pytest.raises(HandlerResultError, match="CreateElicitationResponseAccept"):
        rule.check({"action": "cancel"}, "elicitation/create")
    with pytest.raises(HandlerResultError):
        rule.check(None, "elicitation/create")  # a union is no empty object


def test_untyped_results_are_not_checked() -> None:
    # alpha.0 mcp/message result is any JSON value; extension methods are untyped
    rule = ResultRule(v2.AGENT_METHODS_UNSTABLE["mcp/message"].result)  # 2.0.0-alpha.0
    assert rule.check({"any": "thing"}, "mcp/message") == {"any": "thing"}
    assert ResultRule(object).check([1, 2], "_ext") == [1, 2]


async def test_an_extension_method_returns_builtins_unchecked() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "_echo", {"a": [1]})
    assert reply["result"] == {"method": "_echo", "params": {"a": [1]}}


async def test_a_notification_handlers_return_value_is_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class DictClient(RecordingClient):
        async def session_update(self, params: v1.SessionNotification) -> Any:
            self.updates.append(params)
            return {"not": "a result"}

    class UpdatingAgent(EchoAgent):
        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            await self.client.session_update(chunk(params.session_id, "hi"))
            return v1.PromptResponse(stop_reason="end_turn")

    with trio.fail_after(10):
        async with connected(UpdatingAgent, DictClient) as (conn, _):
            await conn.agent.initialize(INIT_V1)
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            result = await conn.agent.session_prompt(text_prompt(s.session_id, "x"))
            assert result.stop_reason == "end_turn"
            assert conn.client.texts() == ["hi"]  # type: ignore[attr-defined]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_an_initialize_answer_of_the_wrong_type_leaves_the_connection_uninitialized() -> (
    None
):
    class FlakyInit(EchoAgent):
        calls = 0

        async def initialize(self, params: v1.InitializeRequest) -> Any:
            FlakyInit.calls += 1
            if FlakyInit.calls == 1:
                return {"protocolVersion": 1}
            return await super().initialize(params)

    async with raw_client_of(FlakyInit) as peer:
        first = await peer.initialize()
        second = await peer.initialize()
    assert first["error"]["code"] == -32603
    assert second["result"]["protocolVersion"] == 1


# -- Protocol stubs ----------------------------------------------------------------------


class ProtocolAgent(v1.Agent):
    """Subclasses the generated Protocol, overriding only some methods."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.cancelled: list[str] = []

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="sess_1")


async def test_a_protocol_subclass_answers_method_not_found_for_methods_it_did_not_override() -> (
    None
):
    async with raw_client_of(ProtocolAgent) as peer:
        await peer.initialize()
        new = await peer.call(1, "session/new", NEW)
        load = await peer.call(2, "session/load", {**NEW, "sessionId": "sess_1"})
        mode = await peer.call(3, "session/set_mode", {"sessionId": "s", "modeId": "m"})
    assert new["result"] == {"sessionId": "sess_1"}
    assert load["error"]["code"] == -32601 and "result" not in load
    assert mode["error"] == {
        "code": -32601,
        "message": "Method not found: session/set_mode",
    }


# -- bind time ---------------------------------------------------------------------------


class SdkStyleAgent:
    """Written for the official SDK, with a typo and a misplaced client method."""

    def __init__(self, conn: Any) -> None:
        pass

    async def initialize(self, params: Any) -> Any:
        return v1.InitializeResponse(protocol_version=1)

    async def new_session(self, params: Any) -> Any: ...
    async def prompt(self, params: Any) -> Any: ...
    async def sesion_load(self, params: Any) -> Any: ...
    async def session_update(self, params: Any) -> Any: ...
    async def session_frobnicate(self, params: Any) -> Any: ...
    def session_cancel(self, params: Any) -> None: ...
    def on_connect(self, conn: Any) -> None: ...

    async def send_report(self) -> None:  # a helper: not reported
        pass


async def test_misnamed_handler_methods_are_logged_at_bind_time_with_the_likely_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "acp_trio")
    for _ in range(2):  # two connections: logged once per class
        async with raw_client_of(SdkStyleAgent) as peer:
            await peer.initialize()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    text = "\n".join(warnings)
    assert "new_session matches no ACP method" in text
    assert "the official SDK's name for session_new" in text
    assert "the official SDK's name for session_prompt" in text
    assert "sesion_load matches no ACP method" in text and "session_load?" in text
    assert "session_update" in text and "other side" in text
    assert "session_frobnicate matches no ACP method" in text
    assert "session_cancel is not an async method" in text
    assert "on_connect" in text and "__init__" in text
    assert "send_report" not in text
    assert len(warnings) == 7, warnings


def test_correct_handler_classes_log_nothing_at_bind_time() -> None:
    from acp_core._handlers import unmatched_methods

    agent_names = HandlerNames(Schema.load(1, "agent"))
    client_names = HandlerNames(Schema.load(1, "client"))
    assert unmatched_methods(EchoAgent, agent_names) == []
    assert unmatched_methods(ProtocolAgent, agent_names) == []
    assert unmatched_methods(RecordingClient, client_names) == []  # texts(): a helper
