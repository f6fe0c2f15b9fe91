"""``python -m acp_http serve -- AGENT_CMD`` and ``python -m acp_http connect URL``,
run as commands, with and without a bearer token."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import acp_core
import acp_http
import acp_trio
import httpx
import pytest
import trio
from _scenario import RecordingClient, run_scenario
from _servers import listening_socket, serving, stop
from acp_schema import v1

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, str(HERE / "remote_agent.py")]
TIMEOUT = 60


@contextmanager
def bridge_serving(pids: Path, *options: str) -> Iterator[str]:
    """``python -m acp_http serve`` on an ephemeral port; yield its /acp URL."""
    sock = listening_socket()
    fd = sock.fileno()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acp_http",
            "serve",
            "--listen",
            f"fd://{fd}",
            *options,
            "--",
            *AGENT,
        ],
        pass_fds=[fd],
        env={**os.environ, "ACP_HTTP_PIDS": str(pids)},
        start_new_session=True,
    )
    port = sock.getsockname()[1]
    sock.close()
    try:
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        stop(process)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def agent_pids(folder: Path) -> list[int]:
    """The PIDs of the agents started so far (each left a file)."""
    return [int(p.name) for p in folder.iterdir()]


async def wait_ended(pids: Path, count: int) -> None:
    """Every agent the bridge started ended (``count`` of them started)."""
    # other processes' state: nothing to wait on but a poll
    with trio.fail_after(TIMEOUT):
        while len(agent_pids(pids)) < count:  # noqa: ASYNC110
            await trio.sleep(0.05)
        while any(alive(pid) for pid in agent_pids(pids)):  # noqa: ASYNC110
            await trio.sleep(0.05)


async def test_serve_runs_one_agent_process_per_connection_ended_with_it(
    tmp_path: Path,
) -> None:
    with bridge_serving(tmp_path) as url, trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(url, RecordingClient) as conn:
            await run_scenario(conn)
            async with acp_http.connect_websocket(
                url.replace("http", "ws", 1), RecordingClient
            ) as other:
                await run_scenario(other)
                assert len(agent_pids(tmp_path)) == 2  # one process each
        await wait_ended(tmp_path, 2)


async def test_connect_is_a_stdio_agent_forwarding_to_a_remote_endpoint(
    tmp_path: Path,
) -> None:
    with serving("hypercorn-trio") as url, trio.fail_after(TIMEOUT):
        for remote in (url, url.replace("http", "ws", 1)):
            command = [sys.executable, "-m", "acp_http", "connect", remote]
            async with acp_trio.spawn_agent(command, RecordingClient) as conn:
                await run_scenario(conn)


async def test_a_bearer_token_is_checked_on_every_request_and_the_upgrade(
    tmp_path: Path,
) -> None:
    with bridge_serving(tmp_path, "--token", "s3cret") as url, trio.fail_after(TIMEOUT):
        async with httpx.AsyncClient() as http:
            for method in ("POST", "GET", "DELETE"):
                response = await http.request(
                    method,
                    url,
                    headers={
                        "content-type": "application/json",
                        "acp-connection-id": "x",
                    },
                    content=b"{}",
                )
                assert response.status_code == 401, method
                assert response.headers["www-authenticate"] == "Bearer"
                assert response.json()["error"]["code"] == -32000
            response = await http.post(
                url, headers={"authorization": "Bearer wrong"}, json={}
            )
            assert response.status_code == 401
        with pytest.raises(acp_http.HttpError) as refused:
            async with acp_http.connect_websocket(
                url.replace("http", "ws", 1), RecordingClient
            ):
                pass
        assert refused.value.status == 403
        async with acp_http.connect_http(url, RecordingClient, token="wrong") as conn:
            with pytest.raises(acp_core.RequestError, match="401"):
                await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        async with acp_http.connect_http(url, RecordingClient, token="s3cret") as conn:
            await run_scenario(conn)
        command = [
            sys.executable,
            "-m",
            "acp_http",
            "connect",
            url.replace("http", "ws", 1),
        ]
        env = {**os.environ, "ACP_HTTP_TOKEN": "s3cret"}
        async with acp_trio.spawn_agent(command, RecordingClient, env=env) as conn:
            await run_scenario(conn)
    assert not any(alive(pid) for pid in agent_pids(tmp_path))


SERVE = [sys.executable, "-m", "acp_http", "serve"]


def test_serve_says_its_address_once(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*SERVE, "--listen", "127.0.0.1:0", "--", *AGENT],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        first = ""
        while "Running on" not in first:  # blocks until hypercorn says it serves
            line = process.stderr.readline()
            assert line, first
            first += line
        assert "Running on http://127.0.0.1:" in first, first
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT)
    rest = process.stderr.read()  # what readline's buffer holds too
    assert (first + rest).count("Running on") == 1, first + rest
