"""Browsers cannot drive a local agent (issue 29, item 4).

A web page can make its visitor's browser open a WebSocket to
``127.0.0.1:PORT/acp`` (never preflighted) or POST there once its own name
resolves to 127.0.0.1 (DNS rebinding).  The server checks ``Host`` and
``Origin`` against allow lists (by default, on a loopback address: loopback
names and loopback origins) and refuses anything else with 403 before an
agent starts; ``serve`` without a token refuses a non-loopback address unless
told, and warns on loopback.  hypercorn and uvicorn on loopback, command
agents that leave a file when they start, real bytes on the wire.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import msgspec
import pytest
from _raw import INIT
from _servers import Served, serve_command, serving

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, str(HERE / "remote_agent.py")]
TIMEOUT = 20  # seconds any one exchange may take (a hang guard only)
EVIL = "https://evil.example"


@pytest.fixture(scope="module", params=["hypercorn-trio", "uvicorn"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Served, Path]]:
    """A server with the default allow lists; the folder its agents mark."""
    pids = tmp_path_factory.mktemp("pids")
    env = {"ACP_HTTP_AGENT": " ".join(AGENT), "ACP_HTTP_PIDS": str(pids)}
    with serving(request.param, env=env) as url:
        yield url, pids


def post(url: str, **headers: str) -> httpx.Response:
    """``initialize`` POSTed over HTTP/1.1 with these headers added."""
    with httpx.Client(timeout=TIMEOUT) as http:
        response = http.post(
            url,
            content=msgspec.json.encode(INIT),
            headers={"content-type": "application/json", **headers},
        )
        if response.status_code == 200:
            cid = response.headers["acp-connection-id"]
            http.delete(url, headers={"acp-connection-id": cid, **headers})
        return response


def upgrade(url: str, headers: Mapping[str, str]) -> int:
    """The status of a WebSocket upgrade of ``url`` sent with ``headers`` (a
    browser's: ``Host`` and ``Origin`` as it sets them)."""
    parts = urlsplit(url)
    lines = [
        f"GET {parts.path} HTTP/1.1",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    assert parts.port is not None
    with socket.create_connection((parts.hostname, parts.port), TIMEOUT) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n" not in head:
            data = sock.recv(4096)
            if not data:
                break
            head += data
    return int(head.split(b" ", 2)[1])


def authority(url: str) -> str:
    return urlsplit(url).netloc


def started(pids: Path) -> int:
    """Agents started so far (each leaves a file before it answers)."""
    return len(os.listdir(pids))


def test_a_websocket_upgrade_from_another_origin_is_refused_403_and_starts_no_agent(
    served: tuple[Served, Path],
) -> None:
    url, pids = served
    before = started(pids)
    host = authority(url)
    assert upgrade(url, {"Host": host, "Origin": EVIL}) == 403
    assert upgrade(url, {"Host": host, "Origin": "null"}) == 403
    assert started(pids) == before
    # a loopback page is let in (the default allow list on loopback)
    assert upgrade(url, {"Host": host, "Origin": "http://localhost:5173"}) == 101


def test_a_post_from_another_origin_is_refused_403_and_starts_no_agent(
    served: tuple[Served, Path],
) -> None:
    url, pids = served
    before = started(pids)
    response = post(url, origin=EVIL)
    assert response.status_code == 403
    error = response.json()["error"]
    assert "Origin" in error["message"] and "evil.example" in error["message"]
    assert started(pids) == before
    assert post(url).status_code == 200  # a program: no Origin
    for origin in ("http://localhost:5173", "https://127.0.0.1", "http://[::1]:3000"):
        assert post(url, origin=origin).status_code == 200, origin


def test_a_request_naming_another_host_is_refused_403_dns_rebinding(
    served: tuple[Served, Path],
) -> None:
    url, pids = served
    before = started(pids)
    port = urlsplit(url).port
    rebound = f"evil.example:{port}"
    # the page's own origin, its name now resolving to 127.0.0.1
    response = post(url, host=rebound, origin=f"http://{rebound}")
    assert response.status_code == 403
    assert "Host" in response.json()["error"]["message"]
    assert post(url, host=rebound).status_code == 403  # no Origin (a same-origin GET)
    assert upgrade(url, {"Host": rebound, "Origin": f"http://{rebound}"}) == 403
    assert started(pids) == before
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "[::1]", "localhost"):
        assert post(url, host=host).status_code == 200, host


def test_the_allowed_hosts_and_origins_replace_the_defaults() -> None:
    env = {
        "ACP_HTTP_ALLOWED_HOSTS": json.dumps(["agents.example"]),
        "ACP_HTTP_ALLOWED_ORIGINS": json.dumps(["https://app.example"]),
    }
    with serving("hypercorn-trio", env=env) as url:
        served = {"host": "agents.example", "origin": "https://app.example"}
        assert post(url, **served).status_code == 200
        assert post(url, host="agents.example").status_code == 200
        assert post(url).status_code == 403  # Host 127.0.0.1:PORT is not listed
        assert post(url, host="agents.example", origin=EVIL).status_code == 403
        local = {"host": "agents.example", "origin": "http://localhost:3000"}
        assert post(url, **local).status_code == 403
        assert upgrade(url, {"Host": "agents.example", "Origin": EVIL}) == 403
        listed = {"Host": "agents.example", "Origin": "https://app.example"}
        assert upgrade(url, listed) == 101


def serve_refusal(*options: str) -> subprocess.CompletedProcess[str]:
    """``serve OPTIONS -- AGENT`` without a token, run to its end."""
    env = {k: v for k, v in os.environ.items() if k != "ACP_HTTP_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "acp_http", "serve", *options, "--", *AGENT],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_serve_without_a_token_refuses_a_non_loopback_address_unless_told() -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: nothing could
    # listen there, so the test never serves off loopback whatever happens
    refused = serve_refusal("--listen", "192.0.2.1:8000")
    assert refused.returncode == 2
    assert "not a loopback address" in refused.stderr
    assert "--insecure-no-token" in refused.stderr
    told = serve_refusal("--listen", "192.0.2.1:8000", "--insecure-no-token")
    assert "not a loopback address" not in told.stderr  # it tried to bind
    assert "without a token (--insecure-no-token)" in told.stderr


def test_serve_without_a_token_on_loopback_warns() -> None:
    with serve_command(AGENT, stderr=subprocess.PIPE) as (url, process):
        assert process.stderr is not None  # closed with the process
        os.set_blocking(process.stderr.fileno(), False)
        said = b""
        deadline = time.monotonic() + TIMEOUT
        while b"without a token" not in said:
            assert time.monotonic() < deadline, said
            said += process.stderr.read() or b""
            time.sleep(0.05)
        assert post(url).status_code == 200  # and it serves
