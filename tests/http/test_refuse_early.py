"""Issue 29, item 3: a request that will be refused is refused before its body is
read, within a deadline (``HttpLimits.body_seconds``): over HTTP/1.1 its
connection is closed, over HTTP/2 the answer comes before the body ends and
the stream ends with the body or ``body_seconds`` later (under trio: with the
body, see ``acp_http._body``).

Real servers (hypercorn with its trio and asyncio workers, uvicorn) on loopback;
raw sockets, so that what the server answers before the body is seen as it is.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator

import h2.config
import h2.connection
import h2.events
import httpx
import pytest
from _h2peer import H2Peer, status_of
from _raw import INIT
from _servers import Served, serving

SERVERS = ["hypercorn-trio", "hypercorn-asyncio", "uvicorn"]
TOKEN = "s3cret"
LIMITS = {"max_body_bytes": 64 * 1024, "body_seconds": 1.0}
HUGE = 1 << 30  # what a client promises and never sends
#: sockets held at once by clients that promise a huge body and send nothing
CLIENTS = 100


@pytest.fixture(scope="module", params=SERVERS)
def url(request: pytest.FixtureRequest) -> Iterator[Served]:
    env = {"ACP_HTTP_TOKEN": TOKEN, "ACP_HTTP_LIMITS": json.dumps(LIMITS)}
    with serving(request.param, env=env) as base:
        yield base


def descriptors(group: int) -> int:
    """Open descriptors of process group ``group`` (the server and its worker)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[2]) != group:
                    continue
            total += len(os.listdir(f"/proc/{entry}/fd"))
        except (OSError, IndexError, ValueError):
            continue
    return total


def _open(url: str, head: str, body: bytes = b"") -> socket.socket:
    """A socket that sent ``head`` (request line and headers) and ``body``."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    sock = socket.create_connection((host, int(port)), timeout=20)
    sock.sendall(head.encode() + b"\r\n" + body)
    return sock


def _answer(sock: socket.socket) -> tuple[int, bytes]:
    """The status and everything the server sent until it closed the connection."""
    data = b""
    while chunk := sock.recv(65536):  # a timeout (20 s) fails the test
        data += chunk
    sock.close()
    return int(data.split(b" ", 2)[1]), data


def _some(sock: socket.socket) -> bytes:
    """What the server sent next; the connection must stay open."""
    data = sock.recv(65536)  # a timeout (20 s) fails the test
    assert data, "the server closed the connection"
    return data


def _post(token: str | None, content_type: str = "application/json") -> str:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST /acp HTTP/1.1\r\nHost: localhost\r\n{auth}"
        f"Content-Type: {content_type}\r\nContent-Length: {HUGE}\r\n"
    )


def test_a_request_refused_for_its_headers_is_answered_before_its_body_and_its_connection_closed(
    url: Served,
) -> None:
    with httpx.Client(http1=True, http2=False, timeout=20) as http:
        assert http.get(url).status_code == 401  # the server is up and serving
    before = descriptors(url.pid)
    waiting = [_open(url, _post(None)) for _ in range(CLIENTS)]  # no token
    for sock in waiting:
        status, data = _answer(sock)
        assert status == 401 and b"connection: close" in data.lower()
    deadline = time.monotonic() + 20  # every socket let go, soon
    while descriptors(url.pid) > before + 8:
        assert time.monotonic() < deadline, descriptors(url.pid)
        time.sleep(0.1)
    for head, status in (
        (_post(TOKEN), 413),  # Content-Length past max_body_bytes
        (_post(TOKEN, "text/plain"), 415),
        (_post(TOKEN).replace("/acp", "/elsewhere", 1), 404),
        (_post(TOKEN).replace("POST", "PUT", 1), 405),
    ):
        assert _answer(_open(url, head))[0] == status, head
    with httpx.Client(http1=True, http2=False, timeout=20) as http:
        auth = {"authorization": f"Bearer {TOKEN}"}
        assert http.post(url, json=INIT, headers=auth).status_code == 200


def test_a_body_that_does_not_arrive_within_body_seconds_is_answered_408(
    url: Served,
) -> None:
    head = _post(TOKEN).replace(str(HUGE), "1000")
    started = time.monotonic()
    status, _ = _answer(_open(url, head, b'{"jsonrpc":'))  # then nothing
    assert status == 408
    assert time.monotonic() - started >= LIMITS["body_seconds"]


def test_a_body_is_refused_413_as_soon_as_it_passes_max_body_bytes(
    url: Served,
) -> None:
    # chunked, so no Content-Length tells its size; the last chunk never comes
    head = _post(TOKEN).replace(
        f"Content-Length: {HUGE}\r\n", "Transfer-Encoding: chunked\r\n"
    )
    chunk = b"%x\r\n%b\r\n" % (16 * 1024, b" " * 16 * 1024)
    status, _ = _answer(_open(url, head, chunk * 5))  # past 64 KiB
    assert status == 413


def test_a_request_refused_over_http2_is_answered_before_its_body_ends() -> None:
    with serving("hypercorn-trio", env={"ACP_HTTP_TOKEN": TOKEN}) as url:
        host, port = url.split("//")[1].split("/")[0].split(":")
        sock = socket.create_connection((host, int(port)), timeout=20)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        headers = [
            (":method", "POST"),
            (":path", "/acp"),
            (":scheme", "http"),
            (":authority", f"{host}:{port}"),
            ("content-type", "application/json"),
        ]
        conn.send_headers(1, headers)  # no token; a body that goes on
        conn.send_data(1, b"x" * 1000)
        sock.sendall(conn.data_to_send())
        status = None
        while status is None:  # a timeout (20 s) fails the test
            for event in conn.receive_data(_some(sock)):
                if isinstance(event, h2.events.ResponseReceived):
                    status = dict(event.headers)[b":status"]
            sock.sendall(conn.data_to_send())
        assert status == b"401"
        # the rest of the body is dropped as it comes; then the stream ends
        # (under trio only with the body: hypercorn's trio worker would let
        # data after its end take the server down)
        conn.send_data(1, b"x" * 1000, end_stream=True)
        sock.sendall(conn.data_to_send())
        ended = False
        while not ended:
            for event in conn.receive_data(_some(sock)):
                if isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, 1)
                ended = ended or isinstance(event, h2.events.StreamEnded)
            sock.sendall(conn.data_to_send())
        sock.close()
        with httpx.Client(http1=False, http2=True, timeout=20) as http:
            auth = {"authorization": f"Bearer {TOKEN}"}
            assert http.post(url, json=INIT, headers=auth).status_code == 200


def test_over_http2_a_stream_answered_before_its_body_ended_ends_within_body_seconds() -> (
    None
):
    # hypercorn's asyncio worker (as ``python -m acp_http serve`` runs it): an
    # application cannot reset a stream, so it ends it; the client's silence
    # holds nothing past it, and the connection's other streams go on
    env = {"ACP_HTTP_TOKEN": TOKEN, "ACP_HTTP_LIMITS": json.dumps(LIMITS)}
    with serving("hypercorn-asyncio", env=env) as url:
        peer = H2Peer(url)
        json_body = [("content-type", "application/json")]
        auth = [("authorization", f"Bearer {TOKEN}")]
        peer.headers(1, "POST", extra=json_body)  # no token
        peer.data(1, b'{"jsonrpc":')  # then nothing
        peer.headers(3, "POST", extra=json_body + auth)
        peer.data(3, b'{"jsonrpc":')  # then nothing: past body_seconds
        events = peer.wait_for(h2.events.StreamEnded, 1)
        events += peer.wait_for(h2.events.StreamEnded, 3)
        assert status_of(events, 1) == 401 and status_of(events, 3) == 408
        peer.headers(5, "POST", extra=json_body + auth)
        peer.data(5, json.dumps(INIT).encode(), end_stream=True)
        assert status_of(peer.wait_for(h2.events.StreamEnded, 5), 5) == 200
        peer.close()
