"""Issue 29, item 2: every bound holds in time, not only in size.

What a connection holds for a reader that does not read (a session stream
nobody opens, an SSE reader or a WebSocket peer that stopped reading) is at most
``HttpLimits.max_queued_bytes`` and is released once a message waited
``stall_seconds`` for its reader: the connection is closed, its queues dropped,
the blocked send abandoned (the server ends the response or the socket).

Real servers (hypercorn with its trio and asyncio workers, uvicorn) on
loopback; queues made far larger than the output (``max_queued_events``,
``max_queued_bytes``), so that only the time bound can act.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
import trio
import wsproto.events as wsevents
from _raw import INIT, new_session, prompt, raw_client
from _servers import Served, rss_kib, serving
from test_http_hostile_input import _never_reading_stream, _ws_handshake

SERVERS = ["hypercorn-trio", "hypercorn-asyncio", "uvicorn"]
LIMITS = {
    "stall_seconds": 1.0,
    "max_queued_events": 1_000_000,
    "max_queued_bytes": 64 * 1024 * 1024,
}
#: what a server may keep once the connection is gone (KiB), far below the flood
KEPT_KIB = 40 * 1024
PING = {"jsonrpc": "2.0", "method": "_test/ping", "params": {}}


@pytest.fixture(scope="module", params=SERVERS)
def url(request: pytest.FixtureRequest) -> Iterator[Served]:
    with serving(request.param, env={"ACP_HTTP_LIMITS": json.dumps(LIMITS)}) as base:
        yield base


def _http2(url: Served) -> bool:
    return "uvicorn" not in " ".join(url.process.args)  # type: ignore[arg-type]


async def _until_closed(raw: object, cid: str) -> None:
    """Post pings until the connection is gone (404); fails after 30 s."""
    with trio.fail_after(30):
        while (await raw.post(PING, cid)).status_code == 202:  # type: ignore[attr-defined]  # noqa: ASYNC110
            await trio.sleep(0.2)
    assert (await raw.post(PING, cid)).status_code == 404  # type: ignore[attr-defined]


async def test_output_for_a_session_stream_nobody_opens_is_released_within_stall_seconds(
    url: Served,
) -> None:
    async with raw_client(url, http2=_http2(url)) as raw:
        cid = await raw.initialize()
        stream = await raw.stream(cid)  # read: only the session's is never opened
        assert (await raw.post(new_session(1), cid)).status_code == 202
        sid = (await stream.next())["result"]["sessionId"]
        reply = await raw.post(prompt(2, sid, "hello there nopermission"), cid, sid)
        assert reply.status_code == 202
        await _until_closed(raw, cid)
        assert (await raw.post(INIT)).status_code == 200  # still serving


def _drained(sock: socket.socket) -> bool:
    """Read what the server sent until it closed the socket (True), in 30 s."""
    sock.settimeout(30)
    try:
        while sock.recv(1 << 20):
            pass
    except OSError:
        return False
    return True


async def test_a_stuck_sse_reader_is_dropped_and_its_blocked_send_abandoned(
    url: Served,
) -> None:
    async with raw_client(url, http2=_http2(url)) as raw:
        cid = await raw.initialize()
        stream = await raw.stream(cid)
        before = rss_kib(url.pid)
        assert (await raw.post(new_session(1), cid)).status_code == 202
        sid = (await stream.next())["result"]["sessionId"]
        sock = _never_reading_stream(url, cid, sid)
        try:
            flood = await raw.post(prompt(2, sid, "flood"), cid, sid)
            assert flood.status_code == 202
            await _until_closed(raw, cid)
            # the response it was blocked on was ended by the server
            assert await trio.to_thread.run_sync(_drained, sock)
        finally:
            sock.close()
        assert rss_kib(url.pid) - before < KEPT_KIB
        assert (await raw.post(INIT)).status_code == 200


async def test_a_websocket_peer_that_stops_reading_is_dropped_and_its_send_abandoned(
    url: Served,
) -> None:
    async with raw_client(url, http2=_http2(url)) as raw:
        assert (await raw.post(INIT)).status_code == 200
        before = rss_kib(url.pid)
        sock, ws, cid = _ws_handshake(url)
        try:
            sock.sendall(ws.send(wsevents.TextMessage(data=json.dumps(INIT))))
            sock.sendall(ws.send(wsevents.TextMessage(data=json.dumps(new_session(1)))))
            sid = None
            while sid is None:  # read until the session is there, then never again
                ws.receive_data(sock.recv(65536))
                for event in ws.events():
                    if isinstance(event, wsevents.TextMessage):
                        answer = json.loads(event.data)
                        if answer.get("id") == 1:
                            sid = answer["result"]["sessionId"]
            flood = prompt(2, sid, "flood")
            sock.sendall(ws.send(wsevents.TextMessage(data=json.dumps(flood))))
            with trio.fail_after(30):
                while (
                    True
                ):  # a WebSocket connection has no SSE stream: 409 while it lives
                    response = await raw.http.get(
                        raw.url,
                        headers={
                            "accept": "text/event-stream",
                            "acp-connection-id": cid,
                        },
                    )
                    if response.status_code == 404:
                        break
                    assert response.status_code == 409
                    await trio.sleep(0.2)
            assert await trio.to_thread.run_sync(_drained, sock)
        finally:
            sock.close()
        assert rss_kib(url.pid) - before < KEPT_KIB
        assert (await raw.post(INIT)).status_code == 200
