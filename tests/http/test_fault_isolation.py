"""Issue 29, item 1: what one connection's peer or agent sends ends at most that
connection; a server whose shared machinery fails exits non-zero.

Deeply nested JSON is the case in point: every reader takes the one bound
(``HttpLimits.max_nesting_depth``, ``acp_core.Limits.max_nesting_depth``: 128
levels), checked before anything decodes a message.  Real servers (hypercorn
with its trio and asyncio workers, uvicorn) on loopback, real command agents.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import h2.events
import httpx
import msgspec
import pytest
import trio
from _h2peer import H2Peer, ended, status_of
from _raw import INIT, new_session, raw_client
from _servers import Served, serve_command, serving
from websockets.sync.client import connect as ws_connect

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, str(HERE / "remote_agent.py")]
SERVERS = ["hypercorn-trio", "hypercorn-asyncio", "uvicorn"]
BOUND = 128  # HttpLimits.max_nesting_depth, by default


@pytest.fixture(scope="module", params=SERVERS)
def url(request: pytest.FixtureRequest) -> Iterator[Served]:
    with serving(request.param) as base:
        yield base


@pytest.fixture(scope="module", params=SERVERS)
def deep_agent_url(request: pytest.FixtureRequest) -> Iterator[Served]:
    command = f"{sys.executable} {HERE / 'deep_agent.py'}"
    with serving(request.param, env={"ACP_HTTP_AGENT": command}) as base:
        yield base


def _http2(url: Served) -> bool:
    return "uvicorn" not in " ".join(url.process.args)  # type: ignore[arg-type]


def nested(ident: int, depth: int) -> str:
    """A ``session/new`` request ``depth`` levels deep (its own object is level
    1), pretty-printed (its newlines are taken out before the agent reads it)."""
    inner = "[\n" * (depth - 3) + "]\n" * (depth - 3)
    params = '{"cwd": "/", "mcpServers": [], "_meta": {"x": ' + inner + "}}"
    return (
        f'{{\n "jsonrpc": "2.0",\n "id": {ident},\n "method": "session/new",\n'
        f' "params": {params}\n}}'
    )


async def test_an_agent_message_nested_too_deep_is_judged_and_ends_nothing(
    deep_agent_url: Served,
) -> None:
    async with raw_client(deep_agent_url, http2=_http2(deep_agent_url)) as raw:
        other = await raw.initialize()
        cid = await raw.initialize()
        stream = await raw.stream(cid)
        assert (await raw.post(new_session(1), cid)).status_code == 202
        with trio.fail_after(30):
            seen = await stream.until(lambda m: m.get("id") == 1)
        # the deep notification dropped, the deep request answered -32600 to
        # the agent (which said so), the connection going on
        assert [m.get("method") for m in seen] == ["_seen", None]
        answer = seen[0]["params"]["answer"]
        assert answer["id"] == "deep" and answer["error"]["code"] == -32600
        assert f"nested deeper than {BOUND}" in answer["error"]["message"]
        assert seen[1]["result"]["sessionId"] == "s1"
        # no other connection noticed; the server serves
        other_stream = await raw.stream(other)
        assert (await raw.post(new_session(2), other)).status_code == 202
        with trio.fail_after(30):
            seen = await other_stream.until(lambda m: m.get("id") == 2)
        assert seen[-1]["result"]["sessionId"] == "s1"
        assert (await raw.post(INIT)).status_code == 200


async def test_a_client_message_nested_too_deep_is_refused_and_the_connection_goes_on(
    url: Served,
) -> None:
    # one level past the bound, and far past what a decoder takes
    async with raw_client(url, http2=_http2(url)) as raw:
        cid = await raw.initialize()
        stream = await raw.stream(cid)
        for depth in (BOUND + 1, 5_000):
            body = nested(1, depth).encode()
            response = await raw.post(body, cid)
            assert response.status_code == 400, response.text
            error = msgspec.json.decode(response.content)["error"]
            assert error["code"] == -32600
            assert f"nested deeper than {BOUND}" in error["message"]
        body = nested(2, BOUND).encode()  # at the bound
        assert (await raw.post(body, cid)).status_code == 202
        with trio.fail_after(30):
            seen = await stream.until(lambda m: m.get("id") == 2)
        assert "sessionId" in seen[-1]["result"]


def test_a_websocket_message_nested_too_deep_is_answered_and_the_socket_goes_on(
    url: Served,
) -> None:
    ws_url = url.replace("http", "ws", 1)
    with ws_connect(ws_url, open_timeout=20, max_size=None) as client:
        client.send(json.dumps(INIT))
        assert json.loads(client.recv(timeout=20))["id"] == 0
        for depth in (BOUND + 1, 5_000):
            client.send(nested(7, depth))
            answer = json.loads(client.recv(timeout=20))
            assert answer["id"] == 7 and answer["error"]["code"] == -32600
            assert f"nested deeper than {BOUND}" in answer["error"]["message"]
        client.send(nested(8, BOUND))
        answer = json.loads(client.recv(timeout=20))
        assert answer["id"] == 8 and "sessionId" in answer["result"]


@pytest.mark.parametrize("kind", SERVERS)
def test_a_server_whose_shared_task_group_fails_exits_non_zero(kind: str) -> None:
    # hypercorn in one process: its master process (0.18) exits 0 whatever
    # status its worker ended with (run.py reads the exit codes twice)
    options = ["--workers", "0"] if kind.startswith("hypercorn") else []
    env = {"ACP_HTTP_AGENT": "shared-fault"}
    with serving(kind, env=env, options=options) as url:
        with httpx.Client(timeout=30) as http:
            assert http.post(url, json=INIT).status_code == 200
            try:  # the second connection's launch breaks the shared task group
                http.post(url, json=INIT)
            except httpx.HTTPError:
                pass  # the process ended under the request
        try:
            status = url.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the server went on serving after its task group failed")
        assert status == 70  # acp_http.EXIT_SHARED_FAILURE


def test_data_a_peer_sends_on_an_http2_stream_the_server_ended_ends_at_most_its_connection() -> (
    None
):
    # hypercorn (0.18) forgets a stream once its application is done, and
    # fails the connection on DATA for it: on its trio worker, the server
    # with it.  A WebSocket upgrade over HTTP/2 (RFC 8441) refused for its
    # missing token is one such stream, sent by anyone.
    token = "s3cret"
    with serve_command(AGENT, env={"ACP_HTTP_TOKEN": token}) as (url, process):
        peer = H2Peer(url)
        websocket = [(":protocol", "websocket"), ("sec-websocket-version", "13")]
        peer.headers(1, "CONNECT", extra=websocket)
        events = peer.wait_for(h2.events.StreamEnded, 1)
        assert status_of(events, 1) == 403 and ended(events, 1)
        peer.data(1, b"\x81\x80\0\0\0\0")  # its half of the stream is open
        peer.events(2)
        peer.close()
        assert process.poll() is None, "the server ended"
        with httpx.Client(http1=False, http2=True, timeout=20) as http:
            auth = {"authorization": f"Bearer {token}"}
            assert http.post(url, json=INIT, headers=auth).status_code == 200


def test_a_websocket_frame_sent_before_the_upgrade_is_answered_ends_at_most_its_connection() -> (
    None
):
    # hypercorn (0.18) answers such a frame 400 while the application refuses
    # the upgrade (no token): on its trio worker the two answers collide in
    # h11 and the error ends the server; on its asyncio worker the 400 wins
    token = "s3cret"
    with serve_command(AGENT, env={"ACP_HTTP_TOKEN": token}) as (url, process):
        host, port = url.split("//")[1].split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=20) as sock:
            sock.sendall(
                b"GET /acp HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
                b"\x81\x85\0\0\0\0hello"  # a frame, at once
            )
            assert sock.recv(65536).startswith(b"HTTP/1.1 4")
        with httpx.Client(timeout=20) as http:
            auth = {"authorization": f"Bearer {token}"}
            assert http.post(url, json=INIT, headers=auth).status_code == 200
        assert process.poll() is None
