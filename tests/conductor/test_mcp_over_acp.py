"""MCP over ACP in a chain: a proxy (examples/proxy_mcp_tool.py) or the client
offers an MCP server with ``"type": "acp"``; an agent (mcp_agent.py, the ``mcp``
package's client) lists and calls its tool, natively over ``mcp/message`` or,
when it does not advertise ``mcpCapabilities.acp``, through the conductor's
stdio bridge; the tool is answered by whoever offered it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import trio
from acp_conductor import CommandComponent, run_chain
from acp_mcp import McpProvider
from acp_schema import v1
from acp_trio import memory_stream_pair
from chain_support import HERE, INITIALIZE, PY, LineClient, chain
from mcp.server.mcpserver import MCPServer

EXAMPLE = f"{PY} {Path(HERE).parents[1] / 'examples' / 'proxy_mcp_tool.py'}"


def _agent(mode: str) -> list[str]:
    return [PY, str(HERE / "mcp_agent.py"), mode]


def _turn(client: LineClient, text: str) -> list[str]:
    """Initialize, a session, one prompt of ``text`` (permission requests
    allowed); the agent's text of the turn. The chain then ends cleanly."""
    try:
        client.send(INITIALIZE)
        client.answer_to(1, timeout=20)
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []},
            }
        )
        sid = client.answer_to(2, timeout=20)["result"]["sessionId"]  # type: ignore[index]
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {
                    "sessionId": sid,
                    "prompt": [{"type": "text", "text": text}],
                },
            }
        )
        said: list[str] = []
        while True:
            message = client.read(timeout=30)
            assert message is not None, "the chain ended before the turn did"
            if "method" in message and "id" in message:  # a permission request: allow
                options = message["params"]["options"]  # type: ignore[index]
                outcome = {"outcome": "selected", "optionId": options[0]["optionId"]}  # type: ignore[index]
                client.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"outcome": outcome},
                    }
                )
            elif message.get("id") == 3:
                assert message["result"]["stopReason"] == "end_turn"  # type: ignore[index]
                return said
            elif message.get("method") == "session/update":
                update = message["params"]["update"]  # type: ignore[index]
                if update["sessionUpdate"] == "agent_message_chunk":  # type: ignore[index]
                    said.append(update["content"]["text"])  # type: ignore[index]
    finally:
        assert client.close() == 0


def _turn_through_the_example_proxy(mode: str) -> list[str]:
    """One prompt through ``conductor --proxy EXAMPLE -- mcp_agent MODE``."""
    return _turn(
        LineClient(chain(EXAMPLE, agent=_agent(mode))), "count these four words"
    )


def test_an_agent_speaking_mcp_over_acp_calls_the_tool_a_proxy_offers() -> None:
    assert _turn_through_the_example_proxy("acp") == [
        "project-tools/word_count: 4 words\n"
    ]


def test_an_agent_without_mcp_over_acp_calls_it_through_the_conductors_stdio_bridge() -> (
    None
):
    assert _turn_through_the_example_proxy("stdio") == [
        "project-tools/word_count: 4 words\n"
    ]


def test_the_stdio_bridge_binds_its_socket_when_tmpdir_is_too_long_for_one(
    tmp_path: Path,
) -> None:
    # 150 bytes of TMPDIR: a socket path under it exceeds the kernel's limit
    deep = tmp_path / ("d" * (150 - len(str(tmp_path)) - 1))
    deep.mkdir()
    env = {**os.environ, "TMPDIR": str(deep)}
    client = LineClient(chain(EXAMPLE, agent=_agent("stdio")), env=env)
    assert _turn(client, "count these four words") == [
        "project-tools/word_count: 4 words\n"
    ]


def test_the_bridge_serves_an_mcp_client_that_opens_with_the_initialize_handshake() -> (
    None
):
    assert _turn_through_the_example_proxy("stdio-legacy") == [
        "project-tools/word_count: 4 words\n"
    ]


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize("mode", ["acp", "stdio"])
async def test_a_client_offers_an_mcp_server_over_acp_and_answers_the_agents_calls(
    mode: str,
) -> None:
    server = MCPServer("client-tools")

    @server.tool()
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    provider = McpProvider()
    offered = provider.offer(server)
    ours, theirs = memory_stream_pair()
    said: list[str] = []

    async def client() -> None:
        lines = b""

        async def read() -> dict[str, object]:
            nonlocal lines
            while b"\n" not in lines:
                chunk = await ours.receive_some(65536)
                assert chunk, "the chain ended"
                lines += chunk
            line, _, lines = lines.partition(b"\n")
            return json.loads(line)

        await ours.send_all(_line(INITIALIZE))
        assert (await read())["id"] == 1
        declared = json.loads(v1.encode(offered))
        await ours.send_all(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/new",
                    "params": {"cwd": "/tmp", "mcpServers": [declared]},
                }
            )
        )
        sid = (await read())["result"]["sessionId"]  # type: ignore[index]
        await ours.send_all(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": sid,
                        "prompt": [{"type": "text", "text": "hi"}],
                    },
                }
            )
        )
        while True:
            message = await read()
            if message.get("method") == "mcp/message" and "id" in message:
                params = v1.decode(
                    json.dumps(message["params"]).encode(), v1.MessageMcpRequest
                )
                answer = await provider.answer(params)
                await ours.send_all(
                    b'{"jsonrpc":"2.0","id":%b,"result":%b}\n'
                    % (json.dumps(message["id"]).encode(), v1.encode(answer))
                )
            elif message.get("method") == "session/update":
                said.append(message["params"]["update"]["content"]["text"])  # type: ignore[index]
            elif message.get("id") == 3:
                break
        await ours.aclose()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client)
            ended = await run_chain(theirs, [CommandComponent(_agent(mode))])
    assert ended.failure is None
    assert said == ["client-tools/shout: HI\n"]


def test_the_example_proxy_leaves_an_agent_that_calls_no_tool_its_turn() -> None:
    # acp_echo advertises no mcpCapabilities.acp: it is given the stdio bridge
    # for the proxy's server (and says so), never runs it, and echoes as alone
    said = "".join(_turn(LineClient(chain(EXAMPLE)), "hi"))
    assert said.startswith("You said: hi\n")
    assert "MCP server project-tools (stdio): " in said and "_mcp_shim.py" in said


@pytest.mark.parametrize("mode", ["acp", "stdio"])
def test_a_proxy_on_asyncio_offers_its_tool_the_same_way(mode: str) -> None:
    proxy = f"{PY} {HERE / 'asyncio_mcp_proxy.py'}"
    said = _turn(LineClient(chain(proxy, agent=_agent(mode))), "two words")
    assert said == ["asyncio-tools/word_count: 2 words\n"]
