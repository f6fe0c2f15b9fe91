"""JSON-RPC hygiene: each rule of issue 3, over real bytes."""

from __future__ import annotations

from typing import Any

import acp_trio
import msgspec
import pytest
import trio
from _acp_helpers import (
    INIT_V1,
    EchoAgent,
    RecordingClient,
    raw_agent_of,
    raw_client_of,
    text_prompt,
)
from acp_schema import v1


async def test_malformed_json_answers_parse_error_with_null_id_and_continues() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(b'{"jsonrpc": "2.0", "id": 1, "method": ')
        reply = await peer.receive()
        assert reply == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
        assert (await peer.initialize())["result"]["protocolVersion"] == 1


@pytest.mark.parametrize(
    "line",
    [b"42", b'"hello"', b"null", b"true", b'{"id": 1}'],
    ids=["number", "string", "null", "bool", "neither-method-nor-result"],
)
async def test_non_message_values_answer_invalid_request(line: bytes) -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(line)
        reply = await peer.receive()
        assert reply["error"]["code"] == -32600
        assert (await peer.initialize())["id"] == 0


async def test_wrong_jsonrpc_version_answers_invalid_request_with_its_id() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send({"jsonrpc": "1.0", "id": 7, "method": "initialize"})
        reply = await peer.receive()
        assert reply["id"] == 7 and reply["error"]["code"] == -32600


@pytest.mark.parametrize("ident", [[1], {"a": 1}, True, 1.5])
async def test_id_that_is_not_string_or_number_answers_invalid_request(
    ident: Any,
) -> None:
    async with raw_client_of(EchoAgent) as peer:
        reply = await peer.call(ident, "initialize", {"protocolVersion": 1})
        assert reply["id"] is None and reply["error"]["code"] == -32600


async def test_string_ids_are_echoed_back() -> None:
    async with raw_client_of(EchoAgent) as peer:
        reply = await peer.call("abc", "initialize", {"protocolVersion": 1})
        assert reply["id"] == "abc" and "result" in reply


async def test_batch_members_are_each_answered_in_one_array() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(
            [
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                }
            ]
        )
        replies = await peer.receive()
        assert replies[0]["result"]["protocolVersion"] == 1
        await peer.send(
            [
                {
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": "x"},
                },
                {"jsonrpc": "2.0", "id": 2, "method": "no/such"},
                5,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "session/new",
                    "params": {"cwd": "/tmp", "mcpServers": []},
                },
            ]
        )
        replies = await peer.receive()
        assert isinstance(replies, list)
        by_id = {r["id"]: r for r in replies}
        assert len(replies) == 3
        assert by_id[2]["error"]["code"] == -32601
        assert by_id[None]["error"]["code"] == -32600
        assert by_id[3]["result"]["sessionId"] == "sess_1"


async def test_empty_batch_answers_invalid_request() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(b"[]")
        reply = await peer.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32600


async def test_batch_of_notifications_gets_no_answer() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(
            [
                {
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": "x"},
                }
            ]
        )
        assert (await peer.initialize())["id"] == 0


async def test_unknown_method_answers_method_not_found() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/frobnicate", {})
        assert reply["error"] == {
            "code": -32601,
            "message": "Method not found: session/frobnicate",
        }


async def test_method_the_handler_does_not_implement_answers_method_not_found() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/list", {})
        assert reply["error"]["code"] == -32601


async def test_unknown_notification_is_ignored() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send({"jsonrpc": "2.0", "method": "what/ever", "params": {}})
        await peer.send({"jsonrpc": "2.0", "method": "_acme/ping", "params": {}})
        reply = await peer.initialize()
        assert reply["id"] == 0  # the first and only answer


async def test_invalid_params_answer_with_the_failing_path() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(
            1, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]}
        )
        error = reply["error"]
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.params.prompt[0]"
        assert "text" in error["data"]["message"]


async def test_invalid_params_data_is_bounded() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        huge = "x" * 100_000
        reply = await peer.call(1, "session/prompt", {"sessionId": "s", "prompt": huge})
        assert reply["error"]["code"] == -32602
        assert len(msgspec.json.encode(reply)) < 1000


async def test_absent_params_read_as_an_empty_object() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "session/new"})
        reply = await peer.receive()
        assert reply["error"]["code"] == -32602
        assert "cwd" in reply["error"]["data"]["message"]


class FailingAgent(EchoAgent):
    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        raise RuntimeError("secret database password is hunter2")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        raise acp_trio.RequestError(-32002, "Resource not found", {"uri": "file:///x"})


async def test_handler_exception_answers_internal_error_without_its_text() -> None:
    async with raw_client_of(FailingAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
        assert reply["error"] == {"code": -32603, "message": "Internal error"}
        assert b"hunter2" not in msgspec.json.encode(reply)


async def test_raised_request_error_is_sent_as_is() -> None:
    async with raw_client_of(FailingAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/prompt", {"sessionId": "s", "prompt": []})
        assert reply["error"] == {
            "code": -32002,
            "message": "Resource not found",
            "data": {"uri": "file:///x"},
        }


async def test_peer_errors_surface_as_request_error_to_the_caller() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):

        async def answer() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "error": {"code": -32000, "message": "Auth required", "data": [1]},
                }
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            with pytest.raises(acp_trio.RequestError) as info:
                await conn.agent.initialize(INIT_V1)
        assert (info.value.code, info.value.message, info.value.data) == (
            -32000,
            "Auth required",
            [1],
        )


async def test_response_to_unknown_id_is_dropped() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send({"jsonrpc": "2.0", "id": 99, "result": {}})
        await peer.send(
            {"jsonrpc": "2.0", "id": 98, "error": {"code": 1, "message": "x"}}
        )
        assert (await peer.initialize())["id"] == 0


async def _answer_next(peer: Any, result: Any) -> Any:
    request = await peer.receive()
    await peer.send(b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (request["id"], result))
    return request


async def test_null_result_reads_as_the_empty_response() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                _answer_next,
                peer,
                b'{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}',
            )
            await conn.agent.initialize(INIT_V1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_answer_next, peer, b"null")
            result = await conn.agent.session_load(
                v1.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[])
            )
        assert result == v1.LoadSessionResponse()


async def test_result_that_does_not_decode_raises_request_error() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_answer_next, peer, b'{"protocolVersion":1}')
            await conn.agent.initialize(INIT_V1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_answer_next, peer, b'{"sessionId": 5}')
            with pytest.raises(acp_trio.RequestError) as info:
                await conn.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[])
                )
        assert info.value.data["path"] == "$.result.sessionId"


async def test_meta_passes_through_untouched_both_ways() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        meta = {"trace": {"id": [1, 2, None]}, "x": None}
        reply = await peer.call(
            1, "session/prompt", {"sessionId": "s", "prompt": [], "_meta": meta}
        )
        assert reply["result"] == {"stopReason": "end_turn", "_meta": meta}


async def test_meta_key_cannot_overwrite_a_parameter() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(
            1,
            "session/prompt",
            {"sessionId": "s", "prompt": [], "_meta": {"sessionId": "evil"}},
        )
        assert "result" in reply


async def test_extension_methods_reach_the_handler_with_raw_params() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "_acme/echo", {"a": [1, {"b": None}]})
        assert reply["result"] == {
            "method": "_acme/echo",
            "params": {"a": [1, {"b": None}]},
        }


class NoExtensionsAgent:
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        pass

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)


async def test_extension_method_without_handler_answers_method_not_found() -> None:
    async with raw_client_of(NoExtensionsAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "_acme/echo", {})
        assert reply["error"]["code"] == -32601


async def test_typed_calls_round_trip_between_two_connections() -> None:
    from _acp_helpers import connected

    async with connected(EchoAgent, RecordingClient) as (conn, _):
        init = await conn.agent.initialize(INIT_V1)
        assert init.protocol_version == 1 and conn.protocol_version == 1
        session = await conn.agent.session_new(
            v1.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        result = await conn.agent.session_prompt(
            text_prompt(session.session_id, "a", "b")
        )
        assert result.stop_reason == "end_turn"
        assert conn.client.texts() == ["a", "b"]  # type: ignore[attr-defined]
        assert await conn.agent.ext_method("_x/y", {"k": 1}) == {
            "method": "_x/y",
            "params": {"k": 1},
        }
