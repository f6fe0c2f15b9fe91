"""Bounds that hold under concurrency (issue 29, item 5): a connection or a
session is counted when it is reserved, not when it is filled, so many
attempts at once never get past the bound, whatever each waits for in between
(an agent process starting, the agent's ``session/new`` answer).  Real
servers on loopback, many concurrent requests."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import anyio
import msgspec
import pytest
import trio
from _raw import INIT, new_session, raw_client
from _servers import serving

HERE = Path(__file__).resolve().parent
#: a command agent: starting one is an await in the server (a process spawned)
AGENT = f"{sys.executable} {HERE / 'remote_agent.py'}"
ATTEMPTS = 60
MAX_CONNECTIONS = 5
MAX_SESSIONS = 8
TIMEOUT = 120  # a hang guard only


@pytest.mark.parametrize("server", ["hypercorn-trio", "uvicorn"])
async def test_concurrent_initializes_never_open_more_than_max_connections(
    server: str,
) -> None:
    limits = json.dumps({"max_connections": MAX_CONNECTIONS})
    env = {"ACP_HTTP_AGENT": AGENT, "ACP_HTTP_LIMITS": limits}
    with serving(server, env=env) as url:
        async with raw_client(url, http2=False) as raw:
            statuses: list[int] = []
            opened: list[str] = []

            async def attempt() -> None:
                response = await raw.post(INIT)
                statuses.append(response.status_code)
                if response.status_code == 200:
                    opened.append(response.headers["acp-connection-id"])

            with trio.fail_after(TIMEOUT):
                async with anyio.create_task_group() as tg:
                    for _ in range(ATTEMPTS):
                        tg.start_soon(attempt)
                for cid in opened:
                    await raw.http.delete(url, headers={"acp-connection-id": cid})
    assert Counter(statuses) == {
        200: MAX_CONNECTIONS,
        503: ATTEMPTS - MAX_CONNECTIONS,
    }


async def test_concurrent_session_news_never_make_more_than_max_sessions_per_connection() -> (
    None
):
    limits = json.dumps({"max_sessions_per_connection": MAX_SESSIONS})
    with serving("hypercorn-trio", env={"ACP_HTTP_LIMITS": limits}) as url:
        async with raw_client(url) as raw:
            cid = await raw.initialize()
            stream = await raw.stream(cid)
            statuses: list[int] = []

            async def attempt(rid: int) -> None:
                statuses.append((await raw.post(new_session(rid), cid)).status_code)

            with trio.fail_after(TIMEOUT):
                async with anyio.create_task_group() as tg:
                    for rid in range(ATTEMPTS):
                        tg.start_soon(attempt, rid)
                made = [
                    (await stream.next())["result"]["sessionId"]
                    for _ in range(statuses.count(202))
                ]
                # and no more: one more session/new is refused
                again = await raw.post(new_session(ATTEMPTS), cid)
                await raw.http.delete(url, headers={"acp-connection-id": cid})
    assert Counter(statuses) == {202: MAX_SESSIONS, 429: ATTEMPTS - MAX_SESSIONS}
    assert len(set(made)) == MAX_SESSIONS
    assert again.status_code == 429
    assert msgspec.json.decode(again.content)["error"]["code"] == -32600
