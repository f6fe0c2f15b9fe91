"""acp_mcp.McpProvider's binding rules: an MCP server of the ``mcp`` package
served one ``mcp/message`` at a time, its failures outer ACP errors with the
TypeScript SDK's codes, its MCP errors inner, its requests in flight bounded."""

from __future__ import annotations

import pytest
import trio
from acp_core import RequestError
from acp_mcp import McpProvider
from acp_schema import v1
from mcp.server.mcpserver import MCPServer

ENVELOPE = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}


def _request(
    server_id: str, request_id: str, method: str, **params: object
) -> v1.MessageMcpRequest:
    return v1.MessageMcpRequest(
        server_id=server_id,
        request_id=request_id,
        method=method,
        params={**params, **ENVELOPE},
    )


def _blocking_server(release: trio.Event, both_in: trio.Event) -> MCPServer:
    server = MCPServer("slow")
    entered: list[str] = []

    @server.tool()
    async def wait(text: str) -> str:
        """Wait for the test."""
        entered.append(text)
        if len(entered) == 2:
            both_in.set()
        await release.wait()
        return text

    return server


async def test_a_server_id_nobody_offered_is_answered_33001() -> None:
    provider = McpProvider()
    with pytest.raises(RequestError) as caught:
        await provider.answer(_request("nobody", "1", "tools/list"))
    assert caught.value.code == -33001


async def test_an_mcp_error_is_the_answers_error_and_not_an_acp_error() -> None:
    provider = McpProvider()
    offered = provider.offer(MCPServer("empty"))
    answer = await provider.answer(_request(offered.server_id, "1", "no/such"))
    assert isinstance(answer, v1.MessageMcpResponseError)
    assert answer.error["code"] == -32601


async def test_a_request_without_the_mcp_envelope_is_an_invalid_params_mcp_error() -> (
    None
):
    provider = McpProvider()
    offered = provider.offer(MCPServer("empty"))
    answer = await provider.answer(
        v1.MessageMcpRequest(
            server_id=offered.server_id, request_id="1", method="tools/list"
        )
    )
    assert isinstance(answer, v1.MessageMcpResponseError)
    assert answer.error["code"] == -32602


async def test_a_request_id_already_in_flight_and_requests_past_max_active_are_refused() -> (
    None
):
    release, both_in = trio.Event(), trio.Event()
    provider = McpProvider(max_active=2)
    offered = provider.offer(_blocking_server(release, both_in))
    sid = offered.server_id
    answers: list[v1.MessageMcpResponse] = []

    async def call(request_id: str) -> None:
        call = _request(
            sid, request_id, "tools/call", name="wait", arguments={"text": request_id}
        )
        answers.append(await provider.answer(call))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "a")
            nursery.start_soon(call, "b")
            await both_in.wait()
            with pytest.raises(RequestError) as duplicate:
                await provider.answer(_request(sid, "a", "tools/list"))
            assert duplicate.value.code == -32602
            with pytest.raises(RequestError) as over:
                await provider.answer(_request(sid, "c", "tools/list"))
            assert over.value.code == -33000
            release.set()
    assert all(isinstance(a, v1.MessageMcpResponseResult) for a in answers)
    # answered: their ids are free again
    listed = await provider.answer(_request(sid, "a", "tools/list"))
    assert isinstance(listed, v1.MessageMcpResponseResult)
