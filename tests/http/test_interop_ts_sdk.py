"""Interop with the TypeScript SDK 2.4.0 (``@agentclientprotocol/sdk``, node), both ways.

Its Streamable HTTP and WebSocket clients (``experimental/http-client``,
``experimental/ws-client``) drive our server; our Streamable HTTP and
WebSocket clients drive its server (``AcpServer`` with ``experimental/node``'s
HTTP handler and WebSocket upgrade handler; the latter takes a
``WebSocketServer`` of the ``ws`` npm package, which the SDK does not ship:
installed beside it, the version of the SDK's own tests).  Scenario: initialize, session/new, a prompt with updates and
a permission request, a cancel.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import acp_http
import pytest
import trio
from _scenario import RecordingClient
from _servers import serving

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))

from _ts_sdk import TsSdk, ts_sdk
from test_interop_python_sdk import our_scenario

HERE = Path(__file__).resolve().parent
TIMEOUT = 60
#: the WebSocket server the SDK's upgrade handler is given (its devDependency)
WS_PACKAGE = "ws@8.18.0"


@pytest.fixture(scope="module")
def sdk() -> TsSdk:
    """The SDK installed by npm, with our scripts beside its node_modules."""
    installed = ts_sdk(extras=(WS_PACKAGE,))
    for script in ("ts_client.mjs", "ts_server.mjs"):
        shutil.copy(HERE / script, installed.root / f"acp_http_{script}")
    return installed


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    """Our server (hypercorn, trio worker) with the test agent."""
    with serving("hypercorn-trio") as base:
        yield base


def run_ts_client(sdk: TsSdk, mode: str, url: str) -> dict[str, object]:
    flags = ["--experimental-websocket"] if mode == "ws" else []
    done = subprocess.run(
        [sdk.node, *flags, str(sdk.root / "acp_http_ts_client.mjs"), mode, url],
        cwd=sdk.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["http", "ws"])
def test_the_ts_sdks_clients_drive_our_server(sdk: TsSdk, ours: str, mode: str) -> None:
    url = ours.replace("http", "ws", 1) if mode == "ws" else ours
    seen = run_ts_client(sdk, mode, url)
    assert seen["protocolVersion"] == 1
    assert seen["first"] == "end_turn" and seen["second"] == "cancelled"
    assert seen["permissions"] == 1
    assert str(seen["text"]).startswith("hello from typescript slow")


@pytest.fixture(scope="module")
def theirs(sdk: TsSdk) -> Iterator[str]:
    """The TS SDK's server on an ephemeral port of 127.0.0.1, stopped by PID."""
    process = subprocess.Popen(
        [sdk.node, str(sdk.root / "acp_http_ts_server.mjs")],
        cwd=sdk.root,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


async def test_our_http_client_drives_the_ts_sdks_server(theirs: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(theirs, RecordingClient, http2=False) as conn:
            await our_scenario(conn)


async def test_our_websocket_client_drives_the_ts_sdks_server(theirs: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_websocket(
            theirs.replace("http", "ws", 1), RecordingClient
        ) as conn:
            await our_scenario(conn)
