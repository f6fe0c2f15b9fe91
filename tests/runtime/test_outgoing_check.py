"""The opt-in check of outgoing messages against the schema (acp_core._outgoing):
on in the tests and under ``python -X dev``, off by default; it raises at the
sender with the field path."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Any

import acp_trio
import pytest
from _acp_helpers import INIT_V1, RecordingClient, connected, raw_client_of
from acp_core import ClientRules, Engine, OutgoingMessageError
from acp_core._outgoing import check_outgoing_default
from acp_schema import v1

BAD_ID: Any = 1  # a session id of the wrong type, as a hurried caller writes


class WrongResultAgent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=BAD_ID)


def test_the_suite_runs_with_the_outgoing_check_on() -> None:
    assert os.environ["ACP_CHECK_OUTGOING"] == "1"
    assert Engine(ClientRules([1])).check_outgoing


@pytest.mark.parametrize(
    ("env", "flags", "on"),
    [
        ({}, [], False),  # off by default
        ({}, ["-X", "dev"], True),  # on under python -X dev
        ({"ACP_CHECK_OUTGOING": "1"}, [], True),
        ({"ACP_CHECK_OUTGOING": "0"}, ["-X", "dev"], False),
    ],
)
def test_the_outgoing_check_is_off_by_default_and_on_under_dev_mode(
    env: dict[str, str], flags: list[str], on: bool
) -> None:
    base = {k: v for k, v in os.environ.items() if k != "ACP_CHECK_OUTGOING"}
    code = (
        "import acp_host\n"  # reads ACP_CHECK_OUTGOING, as every adapter imports it
        "from acp_core._outgoing import check_outgoing_default as d; print(d())"
    )
    out = subprocess.run(
        [sys.executable, *flags, "-c", code],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip() == str(on)


def test_an_int_session_id_raises_at_the_sender_with_the_field_path() -> None:
    engine = Engine(ClientRules([1]))
    method = engine.schema.outgoing["session/cancel"]
    with pytest.raises(OutgoingMessageError) as info:
        engine.notification(method, v1.CancelNotification(session_id=BAD_ID))
    assert info.value.method == "session/cancel" and info.value.part == "params"
    assert "Expected `str`, got `int` - at `$.sessionId`" in str(info.value)
    engine.check_outgoing = False  # opt-in: off, the message goes out as built
    assert b'"sessionId":1' in engine.notification(
        method, v1.CancelNotification(session_id=BAD_ID)
    )


async def test_a_typed_call_with_a_wrong_field_raises_before_anything_is_sent() -> None:
    async with connected({1: WrongResultAgent}, {1: RecordingClient}) as (client, _):
        await client.agent.initialize(INIT_V1)
        with pytest.raises(OutgoingMessageError, match=r"\$\.sessionId"):
            await client.agent.session_prompt(
                v1.PromptRequest(session_id=BAD_ID, prompt=[])
            )
        assert not client.engine.calls  # nothing registered, nothing sent


async def test_a_handler_result_with_a_wrong_field_is_answered_32603_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "acp_core")
    async with raw_client_of({1: WrongResultAgent}) as peer:
        assert "result" in await peer.initialize()
        reply = await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert "outgoing session/new result" in caplog.text and "$.sessionId" in caplog.text


def test_by_shape_unions_and_lenient_types_pass_when_valid() -> None:
    engine = Engine(ClientRules([1]))
    method = engine.schema.outgoing["session/new"]
    servers: list[Any] = [
        v1.McpServerStdio(name="s", command="/bin/s", args=[], env=[]),
        v1.McpServerHttp(name="h", url="http://127.0.0.1/", headers=[]),
    ]
    call = engine.start_call(
        method, v1.NewSessionRequest(cwd="/", mcp_servers=servers), _Waiter()
    )
    assert b'"mcpServers"' in call.line
    assert check_outgoing_default()  # the suite's setting


class _Waiter:
    def set(self) -> None:
        pass
