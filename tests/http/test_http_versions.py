"""Our HTTP client works with the common servers with no option given.

``http://`` speaks HTTP/1.1 unless asked for HTTP/2 with prior knowledge
(``http2=True``, ``connect --http2``); ``https://`` offers both by ALPN; a
failed ``initialize`` says in one bounded line what was tried and what to
change; ``python -m acp_http connect`` exits non-zero when it fails.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import acp_http
import httpx
import pytest
import trio
from _scenario import RecordingClient
from _servers import listening_socket, serving
from acp_http._http_wire import ERROR_LINE_CHARS
from acp_schema import v1

TIMEOUT = 60

#: a line of JSON-RPC: initialize, protocol v1
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
)

#: prints the HTTP version each way of asking gave, against URL (argv[1])
PROBE = """
import json, sys, trio, acp_http

async def main(url):
    seen = {}
    for name, http2 in (("default", None), ("http2", True), ("http1", False)):
        async with acp_http.http_client(url, http2=http2) as http:
            response = await http.post(
                url, content=sys.argv[2], headers={"content-type": "application/json"}
            )
            seen[name] = response.http_version
    print(json.dumps(seen))

trio.run(main, sys.argv[1])
"""


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (openssl), and its key."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,digitalSignature,keyCertSign",
        ],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    return cert, key


@pytest.fixture(scope="module")
def uvicorn_url() -> Iterator[str]:
    with serving("uvicorn") as url:
        yield url


def versions_seen(url: str, cafile: Path | None = None) -> dict[str, str]:
    """What :data:`PROBE` saw (a process of its own: its default TLS context
    trusts ``cafile``)."""
    env = dict(os.environ)
    if cafile is not None:
        env["SSL_CERT_FILE"] = str(cafile)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, url, INITIALIZE.decode()],
        env=env,
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    seen: dict[str, str] = json.loads(done.stdout)
    return seen


@pytest.mark.parametrize(
    ("kind", "app"),
    [
        ("uvicorn", "served_app:app"),
        ("hypercorn-trio", "served_app:app"),
        ("uvicorn", "official_app:app"),  # the official Python SDK's server
    ],
    ids=["uvicorn", "hypercorn", "official-sdk"],
)
async def test_our_http_client_works_with_the_common_servers_with_no_option(
    kind: str, app: str
) -> None:
    with serving(kind, app=app) as url, trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(url, RecordingClient) as conn:
            init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            assert init.protocol_version == 1
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            answer = await conn.agent.session_prompt(
                v1.PromptRequest(
                    session_id=session.session_id, prompt=[v1.TextContent(text="ping")]
                )
            )
            assert answer.stop_reason == "end_turn"


def test_http_urls_speak_http1_unless_asked_and_https_urls_negotiate_by_alpn(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    with serving("hypercorn-trio") as url:
        assert versions_seen(url) == {
            "default": "HTTP/1.1",
            "http2": "HTTP/2",
            "http1": "HTTP/1.1",
        }
    tls = ["--certfile", str(cert), "--keyfile", str(key)]
    with serving("hypercorn-trio", options=tls) as url:
        secure = url.replace("http://", "https://", 1)
        assert versions_seen(secure, cafile=cert) == {
            "default": "HTTP/2",
            "http2": "HTTP/2",
            "http1": "HTTP/1.1",
        }


async def test_a_failed_initialize_says_in_one_bounded_line_what_was_tried_and_what_to_change(
    uvicorn_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="acp_http")
    with trio.fail_after(TIMEOUT), pytest.raises(BaseException):  # noqa: B017
        async with acp_http.connect_http(
            uvicorn_url, RecordingClient, http2=True
        ) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    lines = [r.getMessage() for r in caplog.records if "initialize" in r.getMessage()]
    assert len(lines) == 1, lines
    line = lines[0].removeprefix("remote ACP connection ended: ")
    assert "\n" not in line
    assert len(line) <= ERROR_LINE_CHARS
    assert uvicorn_url in line
    assert "HTTP/2 with prior knowledge" in line  # what was tried
    assert "leave http2 unset" in line  # what to change


@pytest.mark.parametrize("how", ["unreachable", "refused"])
def test_connect_exits_non_zero_when_initialize_fails(how: str) -> None:
    with contextlib.ExitStack() as stack:
        if how == "unreachable":
            sock = listening_socket()
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/acp"
            sock.close()  # nothing listens there any more
        else:  # a server at its bound of one connection: 503 to one more
            limits = {"ACP_HTTP_LIMITS": json.dumps({"max_connections": 1})}
            url = stack.enter_context(serving("uvicorn", env=limits))
            json_body = {"content-type": "application/json"}
            held = httpx.post(
                url, content=INITIALIZE, headers=json_body, timeout=TIMEOUT
            )
            assert held.status_code == 200
        done = subprocess.run(
            [sys.executable, "-m", "acp_http", "connect", url],
            input=INITIALIZE + b"\n",
            capture_output=True,
            timeout=TIMEOUT,
        )
    assert done.returncode == 1, done.stderr
    said = done.stderr.decode().strip().splitlines()
    assert len(said) == 1, said
    assert "initialize" in said[0] and url in said[0]
    if how == "refused":
        assert "HTTP 503" in said[0]
