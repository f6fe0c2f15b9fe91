"""The conductor's MCP-over-ACP rules, without an event loop (acp_conductor.Router),
and its bridge's answer to what is not MCP."""

from __future__ import annotations

import json
import socket
import sys

import acp_core
import trio
from acp_conductor import CLIENT, Router
from acp_conductor._mcp_bridge import McpBridge
from acp_core import FROM_SUCCESSOR, Handle, Limits, ProxyCore, Write
from acp_trio import memory_stream_pair

INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
ACP_SERVER = {"type": "acp", "name": "tools", "serverId": "tools-1"}


def _json(data: bytes) -> dict[str, object]:
    return json.loads(data)


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _session_new(ident: int, servers: list[dict[str, object]]) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": servers},
        }
    )


def _mcp_message(ident: int, server_id: str = "tools-1") -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "mcp/message",
            "params": {
                "serverId": server_id,
                "requestId": "r1",
                "method": "tools/list",
            },
        }
    )


def _bridging_chain(agent_caps: dict[str, object]) -> Router:
    """A proxy and an agent, the agent initialized with ``agent_caps``."""
    chain = Router(["p", "agent"], bridge_command=lambda sid: ["shim", "--", sid])
    chain.receive(CLIENT, INIT)
    chain.receive(
        0,
        b'{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}',
    )
    (chain.answer,) = chain.receive(  # type: ignore[attr-defined]
        1,
        _line(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "result": {"protocolVersion": 1, "agentCapabilities": agent_caps},
            }
        ),
    )
    return chain


def test_the_conductor_advertises_mcp_over_acp_to_a_proxy_for_an_agent_without_it() -> (
    None
):
    chain = _bridging_chain({"mcpCapabilities": {"http": True}})
    answer = chain.answer  # type: ignore[attr-defined]
    assert answer.hop == 0
    assert _json(answer.data)["result"]["agentCapabilities"]["mcpCapabilities"] == {  # type: ignore[index]
        "http": True,
        "acp": True,
    }


def test_an_agent_that_speaks_mcp_over_acp_is_given_the_acp_server_unchanged() -> None:
    chain = _bridging_chain({"mcpCapabilities": {"acp": True}})
    wrapped = _line(
        {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "proxy/successor",
            "params": {
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": [ACP_SERVER]},
            },
        }
    )
    (send,) = chain.receive(0, wrapped)
    assert send.hop == 1
    assert _json(send.data)["params"]["mcpServers"] == [ACP_SERVER]  # type: ignore[index]


def test_an_agent_without_mcp_over_acp_is_given_the_bridge_as_a_stdio_server() -> None:
    chain = _bridging_chain({})
    (send,) = chain.receive(CLIENT, _session_new(2, [ACP_SERVER]))
    (send,) = chain.receive(
        0,
        _line(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "proxy/successor",
                "params": {
                    "method": "session/new",
                    "params": _json(send.data)["params"],
                },
            }
        ),
    )
    assert send.hop == 1
    assert _json(send.data)["params"]["mcpServers"] == [  # type: ignore[index]
        {"name": "tools", "command": "shim", "args": ["--", "tools-1"], "env": []}
    ]


def test_an_mcp_message_goes_straight_to_the_hop_that_offered_its_server() -> None:
    chain = Router(["p", "agent"])
    (to_proxy,) = chain.receive(CLIENT, _session_new(2, [ACP_SERVER]))
    chain.receive(
        0,
        _line(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "proxy/successor",
                "params": {
                    "method": "session/new",
                    "params": _json(to_proxy.data)["params"],
                },
            }
        ),
    )
    (send,) = chain.receive(1, _mcp_message(9))  # the agent calls the client's server
    assert send.hop == CLIENT  # the proxy between is skipped
    assert send.data == _mcp_message(9) + b"\n"
    (back,) = chain.receive(CLIENT, b'{"jsonrpc":"2.0","id":9,"result":{"result":{}}}')
    assert back.hop == 1 and _json(back.data) == {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {"result": {}},
    }


def test_a_server_offered_by_a_proxy_is_reached_from_its_successor_side() -> None:
    chain = Router(["p", "agent"])
    chain.receive(
        0,
        _line(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "proxy/successor",
                "params": {
                    "method": "session/new",
                    "params": {"cwd": "/", "mcpServers": [ACP_SERVER]},
                },
            }
        ),
    )
    (send,) = chain.receive(1, _mcp_message(9))
    assert send.hop == 0
    assert _json(send.data)["method"] == "proxy/successor"
    assert _json(send.data)["params"]["method"] == "mcp/message"  # type: ignore[index]


def test_a_providers_notification_goes_to_the_consumer_of_its_request() -> None:
    chain = Router(["p", "agent"])
    chain.receive(CLIENT, _session_new(2, [ACP_SERVER]))
    chain.receive(1, _mcp_message(9))
    note = _line(
        {
            "jsonrpc": "2.0",
            "method": "mcp/message",
            "params": {
                "serverId": "tools-1",
                "requestId": "r1",
                "method": "notifications/progress",
                "params": {"progress": 1},
            },
        }
    )
    (send,) = chain.receive(CLIENT, note)
    assert send.hop == 1 and send.data == note + b"\n"


def test_an_mcp_message_for_a_server_no_component_offered_is_answered_33001() -> None:
    chain = Router(["p", "agent"])
    (send,) = chain.receive(1, _mcp_message(9, server_id="nobody" * 100))
    assert send.hop == 1
    error = _json(send.data)["error"]
    assert error["code"] == -33001  # type: ignore[index]
    assert len(error["message"]) < 300  # type: ignore[index]


def test_an_mcp_message_without_server_request_and_method_is_answered_invalid_params() -> (
    None
):
    chain = Router(["p", "agent"])
    for params in (b'{"serverId":1}', b'"junk"', b"[1,2]", b'{"requestId":"r"}'):
        line = b'{"jsonrpc":"2.0","id":4,"method":"mcp/message","params":%b}' % params
        (send,) = chain.receive(1, line)
        assert send.hop == 1 and _json(send.data)["error"]["code"] == -32602  # type: ignore[index]


async def test_a_line_that_is_not_json_gets_a_parse_error_from_the_bridge() -> None:
    bridge = McpBridge(Limits(max_message_size=4096))
    ours, theirs = memory_stream_pair()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bridge.run, theirs)
            while True:  # the socket is bound by the bridge's task
                try:
                    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    await sock.connect(bridge.path)
                    break
                except OSError:
                    sock.close()
                    await trio.sleep(0.01)
            stream = trio.SocketStream(sock)
            await stream.send_all(b'{"serverId":"tools-1"}\nnot json\n')
            assert json.loads(await stream.receive_some(4096)) == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "Parse error"},
            }
            await stream.send_all(b"x" * 5000 + b"\n")  # past max_message_size
            assert (
                json.loads(await stream.receive_some(4096))["error"]["code"] == -32700
            )
            await stream.aclose()
            await ours.aclose()
            nursery.cancel_scope.cancel()


def test_the_bridge_runs_its_shim_by_path_with_this_python() -> None:
    bridge = McpBridge(Limits())
    try:
        argv = bridge.command("tools-1")
        assert argv[0] == sys.executable and argv[1].endswith("_mcp_shim.py")
        assert argv[2:] == [bridge.path, "tools-1"]
    finally:
        bridge.close()


def test_a_proxys_mcp_message_handler_takes_its_successors_requests_only() -> None:
    class Offers(acp_core.Proxy):
        async def mcp_message(self, params: object) -> object:
            return params

    handlers = acp_core.proxy_handlers(Offers(), acp_core.proxy_schema())
    core = ProxyCore(set(handlers))
    request = b'{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"mcp/message","params":{"serverId":"s","requestId":"r","method":"tools/list"}}}'
    (handle,) = core.receive(request)
    assert isinstance(handle, Handle) and handle.origin == FROM_SUCCESSOR
    note = b'{"jsonrpc":"2.0","method":"mcp/message","params":{"serverId":"s","requestId":"r","method":"notifications/progress"}}'
    (write,) = core.receive(note)  # from the predecessor: forwarded
    assert isinstance(write, Write)
    assert json.loads(write.data)["method"] == "proxy/successor"
