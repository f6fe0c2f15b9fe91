"""Past one machine: nginx (Debian's package) in front of two hypercorn workers.

Each worker names itself in an affinity cookie on ``initialize``; nginx sends
a request with the cookie to that worker, one without it to either.  100
concurrent sessions (one connection each) run a prompt with updates and a
permission request: any request or stream sent to the other worker would meet
an unknown ``Acp-Connection-Id`` (404) and fail its session.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import acp_http
import httpx
import pytest
import trio
from _scenario import RecordingClient, text
from _servers import serving
from acp_schema import v1

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SESSIONS = 100
TIMEOUT = 120

CONFIG = """
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    map $cookie_acp_worker $acp_backend {{
        w1      {w1};
        w2      {w2};
        default acp_pool;
    }}
    upstream acp_pool {{ server {w1}; server {w2}; }}
    map $http_upgrade $connection_upgrade {{ default upgrade; "" ""; }}
    server {{
        listen 127.0.0.1:{port};
        location /acp {{
            proxy_pass http://$acp_backend;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;  # the client's, checked by the workers
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nginx's /acp URL in front of workers w1 and w2."""
    if not os.path.exists(NGINX):
        pytest.fail(
            "nginx is needed (Debian package nginx; .ci/provision.py installs it)"
        )
    tmp = tmp_path_factory.mktemp("nginx")
    with ExitStack() as stack:
        hosts = []
        for name in ("w1", "w2"):
            url = stack.enter_context(
                serving("hypercorn-trio", env={"ACP_HTTP_COOKIE": f"acp_worker={name}"})
            )
            hosts.append(url.split("//")[1].split("/")[0])
        port = _free_port()
        config = tmp / "nginx.conf"
        config.write_text(CONFIG.format(tmp=tmp, w1=hosts[0], w2=hosts[1], port=port))
        process = subprocess.Popen(
            [NGINX, "-p", str(tmp), "-c", str(config)], start_new_session=True
        )
        try:
            yield f"http://127.0.0.1:{port}/acp"
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


async def one_session(url: str, workers: list[str]) -> None:
    """A connection through nginx: initialize, session/new, a prompt with a permission."""
    cookies = httpx.Cookies()
    async with acp_http.connect_http(
        url, RecordingClient, http2=False, cookies=cookies
    ) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        worker = cookies.get("acp_worker")
        assert worker in ("w1", "w2")
        session = await conn.agent.session_new(
            v1.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        sid = session.session_id
        answer = await conn.agent.session_prompt(
            v1.PromptRequest(
                session_id=sid, prompt=[v1.TextContent(text=f"via {worker}")]
            )
        )
        assert answer.stop_reason == "end_turn"
        client: RecordingClient = conn.client
        assert text(client.updates, sid) == f"via {worker} "
        assert client.permissions == 1
        assert (
            cookies.get("acp_worker") == worker
        )  # one worker for the whole connection
        workers.append(worker)


async def test_100_concurrent_sessions_each_kept_on_its_worker(balanced: str) -> None:
    workers: list[str] = []
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            for _ in range(SESSIONS):
                nursery.start_soon(one_session, balanced, workers)
    assert len(workers) == SESSIONS
    assert set(workers) == {"w1", "w2"}  # nginx spread the new connections


#: nginx ending each client connection after 5 requests
RECYCLING = """
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    keepalive_requests 5;
    server {{
        listen 127.0.0.1:{port};
        location /acp {{
            proxy_pass http://{upstream};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"""


@contextmanager
def _nginx_before_one_worker(
    tmp_path_factory: pytest.TempPathFactory, name: str, template: str
) -> Iterator[str]:
    """nginx (``template``: an nginx.conf with ``{tmp}``, ``{upstream}`` and
    ``{port}``) in front of one hypercorn worker; its /acp URL."""
    tmp = tmp_path_factory.mktemp(name)
    with serving("hypercorn-trio") as upstream:
        port = _free_port()
        config = tmp / "nginx.conf"
        host = upstream.split("//")[1].split("/")[0]
        config.write_text(template.format(tmp=tmp, upstream=host, port=port))
        process = subprocess.Popen(
            [NGINX, "-p", str(tmp), "-c", str(config)], start_new_session=True
        )
        try:
            _wait_listening(port)
            yield f"http://127.0.0.1:{port}/acp"
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def recycling(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nginx's /acp URL in front of one worker, each client connection ended
    after 5 requests (``keepalive_requests 5``: ``Connection: close`` on the
    fifth answer)."""
    with _nginx_before_one_worker(
        tmp_path_factory, "nginx-recycling", RECYCLING
    ) as url:
        yield url


def _wait_listening(port: int) -> None:
    """Until something accepts connections on 127.0.0.1:``port`` (nginx started)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.02)


async def test_a_session_goes_on_past_nginx_keepalive_requests(recycling: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(recycling, RecordingClient) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            sid = session.session_id
            for n in range(6):  # 2 POSTs each: past the limit twice
                answer = await conn.agent.session_prompt(
                    v1.PromptRequest(
                        session_id=sid, prompt=[v1.TextContent(text=f"turn {n}")]
                    )
                )
                assert answer.stop_reason == "end_turn"
            client: RecordingClient = conn.client
            assert text(client.updates, sid).endswith("turn 5 ")
            assert client.permissions == 6


#: nginx speaking HTTP/2 alone on a cleartext port (prior knowledge: h2c)
H2C_ONLY = RECYCLING.replace("    keepalive_requests 5;\n", "").replace(
    "listen 127.0.0.1:{port};", "listen 127.0.0.1:{port} http2;"
)


@pytest.fixture(scope="module")
def h2c_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nginx's /acp URL in front of one worker, speaking HTTP/2 alone
    (``listen ... http2`` on a cleartext port: an HTTP/1.1 request there is
    refused)."""
    with _nginx_before_one_worker(tmp_path_factory, "nginx-h2c", H2C_ONLY) as url:
        yield url


async def test_a_session_with_an_http2_only_server_opens_its_streams_over_http2(
    h2c_only: str,
) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(h2c_only, RecordingClient, http2=True) as conn:
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            sid = session.session_id
            for n in range(2):
                answer = await conn.agent.session_prompt(
                    v1.PromptRequest(
                        session_id=sid, prompt=[v1.TextContent(text=f"turn {n}")]
                    )
                )
                assert answer.stop_reason == "end_turn"
            client: RecordingClient = conn.client
            assert text(client.updates, sid).endswith("turn 1 ")
