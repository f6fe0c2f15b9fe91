"""Hostile input against a server with small limits: clear HTTP or JSON-RPC errors,
memory bounded, the server still serving afterwards."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
import trio
import wsproto
import wsproto.events as wsevents
from _raw import INIT, new_session, prompt, raw_client, request
from _servers import Served, rss_kib, serving
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

LIMITS = {
    "max_body_bytes": 64 * 1024,
    "max_queued_events": 16,
    "max_queued_bytes": 64 * 1024,
    "stall_seconds": 1.0,
    "max_sessions_per_connection": 4,
    "max_connections": 8,
    "max_pending_requests": 8,
    "idle_seconds": 2.0,
    "max_id_length": 100,
}
#: what a server may grow by while a peer misbehaves (KiB): far below the flood
GROWTH_KIB = 40 * 1024


@pytest.fixture(scope="module")
def url() -> Iterator[Served]:
    with serving("hypercorn-trio", env={"ACP_HTTP_LIMITS": json.dumps(LIMITS)}) as base:
        yield base


def error_of(response: Any) -> dict[str, Any]:
    return msgspec.json.decode(response.content)["error"]


async def test_an_oversized_body_is_413_and_the_server_still_serves(
    url: Served,
) -> None:
    async with raw_client(url) as raw:
        big = request(1, "initialize", protocolVersion=1, padding="x" * 200_000)
        response = await raw.post(big)
        assert response.status_code == 413
        assert "65536" in error_of(response)["message"]
        assert (await raw.post(INIT)).status_code == 200


async def test_overlong_ids_are_400(url: Served) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        response = await raw.post(
            request("x" * 500, "session/new", cwd="/", mcpServers=[]), cid
        )
        assert (
            response.status_code == 400 and "too long" in error_of(response)["message"]
        )
        response = await raw.post(prompt(2, "s" * 500, "hi"), cid, "s" * 500)
        assert response.status_code == 400
        await raw.http.delete(raw.url, headers={"acp-connection-id": cid})


async def test_connections_and_sessions_per_connection_are_bounded(url: Served) -> None:
    async with raw_client(url) as raw:
        made: list[str] = []
        refused = None
        for _ in range(LIMITS["max_connections"] + 1):
            response = await raw.post(INIT)
            if response.status_code != 200:
                refused = response
                break
            made.append(response.headers["acp-connection-id"])
        assert refused is not None and refused.status_code == 503
        assert "connections" in error_of(refused)["message"]
        for cid in made[1:]:
            await raw.http.delete(raw.url, headers={"acp-connection-id": cid})
        cid = made[0]
        stream = await raw.stream(cid)
        for rid in range(LIMITS["max_sessions_per_connection"]):
            assert (await raw.post(new_session(rid), cid)).status_code == 202
            await stream.next()
        response = await raw.post(new_session(99), cid)
        assert response.status_code == 429 and error_of(response)["code"] == -32600
        await raw.http.delete(raw.url, headers={"acp-connection-id": cid})


async def test_idle_connections_expire(url: Served) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        with trio.fail_after(30):
            while (await raw.post(new_session(1), cid)).status_code == 202:  # noqa: ASYNC110
                await trio.sleep(LIMITS["idle_seconds"] + 0.5)
        assert (await raw.post(new_session(2), cid)).status_code == 404


def _never_reading_stream(url: str, cid: str, sid: str) -> socket.socket:
    """An HTTP/1.1 GET of a session stream whose response is never read."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(
        (
            f"GET /acp HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
            f"Acp-Connection-Id: {cid}\r\nAcp-Session-Id: {sid}\r\n\r\n"
        ).encode()
    )
    return sock


async def test_a_reader_that_never_reads_its_sse_stream_is_dropped_memory_bounded(
    url: Served,
) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        before = rss_kib(url.pid)  # the worker process is up and serving
        stream = await raw.stream(cid)
        await raw.post(new_session(1), cid)
        sid = (await stream.next())["result"]["sessionId"]
        sock = _never_reading_stream(url, cid, sid)
        try:
            assert (
                await raw.post(prompt(2, sid, "flood"), cid, sid)
            ).status_code == 202
            cancel = {"jsonrpc": "2.0", "method": "_test/ping", "params": {}}
            with trio.fail_after(30):
                while (await raw.post(cancel, cid)).status_code == 202:  # noqa: ASYNC110
                    await trio.sleep(0.2)
            # the connection was closed: its id is unknown now
            assert (await raw.post(cancel, cid)).status_code == 404
        finally:
            sock.close()
        assert (await raw.post(INIT)).status_code == 200  # still serving
    assert rss_kib(url.pid) - before < GROWTH_KIB


def _ws_handshake(url: str) -> tuple[socket.socket, wsproto.WSConnection, str]:
    """A WebSocket opened by hand on a socket with a small receive buffer."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.settimeout(20)
    ws = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    sock.sendall(ws.send(wsevents.Request(host=f"{host}:{port}", target="/acp")))
    while True:
        ws.receive_data(sock.recv(65536))
        for event in ws.events():
            if isinstance(event, wsevents.AcceptConnection):
                headers = dict(event.extra_headers)
                return sock, ws, headers[b"acp-connection-id"].decode()
            assert not isinstance(event, wsevents.RejectConnection)


async def test_a_websocket_flood_from_a_peer_that_never_reads_is_dropped_memory_bounded(
    url: Served,
) -> None:
    async with raw_client(url) as raw:
        assert (await raw.post(INIT)).status_code == 200
    before = rss_kib(url.pid)  # the worker process is up and serving
    sock, ws, cid = _ws_handshake(url)
    sock.settimeout(2)
    try:
        sock.sendall(ws.send(wsevents.TextMessage(data=json.dumps(INIT))))
        for n in range(1, 30_000):  # about 2 MB of requests; the answers never read
            flood = {"jsonrpc": "2.0", "id": n, "method": "_flood/x", "params": {}}
            sock.sendall(ws.send(wsevents.TextMessage(data=json.dumps(flood))))
    except (TimeoutError, ConnectionError):
        pass  # backpressure (a send that waits), or the server closed the socket
    async with raw_client(url) as raw:
        with trio.fail_after(30):
            while True:  # a WebSocket connection has no SSE stream: 409 while it lives
                response = await raw.http.get(
                    raw.url,
                    headers={"accept": "text/event-stream", "acp-connection-id": cid},
                )
                if response.status_code == 404:
                    break
                assert response.status_code == 409
                await trio.sleep(0.2)
        assert (await raw.post(INIT)).status_code == 200  # still serving
    sock.close()
    assert rss_kib(url.pid) - before < GROWTH_KIB


def test_an_oversized_websocket_message_closes_1009(url: Served) -> None:
    ws_url = url.replace("http", "ws", 1)
    with ws_connect(ws_url, open_timeout=20, max_size=None) as client:
        client.send("x" * (LIMITS["max_body_bytes"] + 1))
        with pytest.raises(ConnectionClosed) as ended:
            client.recv(timeout=20)
        assert ended.value.rcvd is not None and ended.value.rcvd.code == 1009


async def test_a_refusal_before_the_body_is_read_keeps_the_server_serving(
    url: Served,
) -> None:
    # hypercorn 0.18 fails the HTTP/2 connection (and, on trio, the server) when
    # a request is answered before its body ended: every refusal reads it first
    async with raw_client(url) as raw:
        body = b"x" * 300_000  # several DATA frames
        wrong_path = raw.url.replace("/acp", "/elsewhere")
        for _ in range(3):
            response = await raw.http.post(wrong_path, content=body)
            assert response.status_code == 404 and error_of(response)["code"] == -32600
            response = await raw.http.put(raw.url, content=body)
            assert response.status_code == 405
        assert (await raw.post(INIT)).status_code == 200
