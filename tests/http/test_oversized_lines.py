"""The same over-long line gets the same verdict in every reader
(``acp_core.judge_oversized``, by the one framer ``LineBuffer``): the engine,
acp_http's client wire and acp_http's server.  A request is answered -32600
with its id, an answer becomes an error for its requester, a notification is
dropped; the connection goes on."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import acp_core
import acp_trio
import msgspec
import pytest
import trio
from _servers import Served, serving
from acp_http import WebSocketWire
from acp_http._seam import SeamStream
from acp_trio import MemoryStream
from websockets.sync.client import connect as ws_connect

HERE = Path(__file__).resolve().parent
LIMIT = 1000
#: an over-long request, as a client could write it
BIG = (
    b'{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/","pad":"'
    + b"x" * 5000
    + b'"}}\n'
)
INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
)
NEW = b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'


class _Agent:
    def __init__(self, conn: acp_trio.AgentSideConnection[Any]) -> None:
        pass

    async def initialize(self, params: Any) -> Any:
        from acp_schema import v1

        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: Any) -> Any:
        from acp_schema import v1

        return v1.NewSessionResponse(session_id="s1")


async def _read_line(stream: MemoryStream, buffer: bytearray) -> bytes:
    while b"\n" not in buffer:
        buffer += await stream.receive_some()
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


async def _engine_answer() -> bytes:
    agent_end, client_end = acp_trio.memory_stream_pair()
    limits = acp_trio.Limits(max_message_size=LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: acp_trio.serve_agent(agent_end, _Agent, limits=limits)
        )
        await client_end.send_all(BIG)
        answer = await _read_line(client_end, bytearray())
        await client_end.aclose()
    return answer


def test_the_verdict_on_an_over_long_request_is_an_error_with_its_id() -> None:
    [line] = acp_core.LineBuffer(max_message_size=LIMIT).feed(BIG)
    assert isinstance(line, acp_core.Oversized)
    verdict = acp_core.judge_oversized(line, LIMIT)
    assert verdict.ident == 7 and verdict.fails is None and verdict.answer is not None
    assert json.loads(verdict.answer)["error"] == {
        "code": -32600,
        "message": f"Message of {len(BIG) - 1} bytes exceeds the limit of {LIMIT} bytes",
        "data": {"maxMessageSize": LIMIT},
    }


@pytest.fixture(scope="module")
def url() -> Iterator[Served]:
    with serving("hypercorn-trio") as base:
        yield base


async def test_an_over_long_line_is_refused_the_same_way_by_the_engine_and_the_client_wire(
    url: Served,
) -> None:
    engine = await _engine_answer()
    wire = WebSocketWire(url.replace("http", "ws", 1), max_message_bytes=LIMIT)
    await wire.connect()
    ours, theirs = acp_core.seam_ends()
    local = MemoryStream(theirs)
    buffer = bytearray()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(wire.run, SeamStream(ours))
        await local.send_all(INIT)
        assert json.loads(await _read_line(local, buffer))["id"] == 1
        await local.send_all(BIG)
        refused = await _read_line(local, buffer)
        await local.send_all(NEW)  # the wire goes on
        assert json.loads(await _read_line(local, buffer))["result"]["sessionId"]
        await local.aclose()
    assert refused == engine


@pytest.fixture(scope="module")
def oversized_agent() -> Iterator[Served]:
    command = f"{sys.executable} {HERE / 'oversized_agent.py'}"
    limits = json.dumps({"max_body_bytes": 64 * 1024})
    with serving(
        "hypercorn-trio",
        env={"ACP_HTTP_AGENT": command, "ACP_HTTP_LIMITS": limits},
    ) as base:
        yield base


def test_the_server_judges_an_agent_s_over_long_lines_as_the_engine_does(
    oversized_agent: Served,
) -> None:
    with ws_connect(oversized_agent.replace("http", "ws", 1), open_timeout=20) as ws:
        ws.send(INIT.decode())
        assert json.loads(ws.recv(timeout=20))["id"] == 1
        ws.send(NEW.decode())
        seen = msgspec.json.decode(ws.recv(timeout=20))
        # the over-long notification was dropped; the over-long request answered
        assert seen["method"] == "_seen"
        answer = seen["params"]["answer"]
        assert answer["id"] == "big" and answer["error"]["code"] == -32600
        assert answer["error"]["data"] == {"maxMessageSize": 64 * 1024}
        # the over-long answer to session/new: an error for its requester
        failed = json.loads(ws.recv(timeout=20))
        assert failed["id"] == 2 and failed["error"]["code"] == -32600
        assert "exceeds the limit of 65536 bytes" in failed["error"]["message"]
        ws.send(NEW.replace(b'"id":2', b'"id":3').decode())  # the connection goes on
        assert json.loads(ws.recv(timeout=20)) == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"sessionId": "s2"},
        }
