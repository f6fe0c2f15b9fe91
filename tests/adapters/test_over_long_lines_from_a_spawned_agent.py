"""The same over-long line in the adapters' ``spawn_agent`` as in every reader
(``acp_core.judge_oversized`` on ``acp_core.LineBuffer``): a real agent process
writes, past the client's ``max_message_size``, a notification (dropped), a
request (answered -32600 with its id) and the answer to ``session/new`` (the
call fails with -32600); the connection goes on.  Real processes, real bytes;
the agent is tests/http/oversized_agent.py, the one acp_http's server is
tested with."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import acp_asyncio
import acp_trio
import pytest
import trio
from acp_schema import v1

AGENT = [
    sys.executable,
    str(Path(__file__).resolve().parents[1] / "http" / "oversized_agent.py"),
]
LIMIT = 64 * 1024  # the agent pads its over-long lines with 100 kB
INIT = v1.InitializeRequest(protocol_version=1)
NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


class Client:
    """Records the extension notifications the agent sends (``_seen``)."""

    def __init__(self, conn: Any) -> None:
        self.seen: list[Any] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        pass

    async def ext_notification(self, method: str, params: Any) -> None:
        self.seen.append((method, params))


def _check(seen: list[Any], refused: BaseException, second: Any) -> None:
    # the over-long notification was dropped: only _seen arrived
    [(method, params)] = seen
    assert method.lstrip("_") == "seen"
    answer = dict(params)["answer"]
    assert answer["id"] == "big" and answer["error"]["code"] == -32600
    assert answer["error"]["data"] == {"maxMessageSize": LIMIT}
    # the over-long answer to session/new failed its call, as -32600
    assert getattr(refused, "code", None) == -32600
    assert f"exceeds the limit of {LIMIT} bytes" in str(refused)
    assert second.session_id == "s2"  # the connection goes on


async def test_an_over_long_line_is_refused_the_same_way_in_acp_trio_spawn_agent() -> (
    None
):
    with trio.fail_after(60):
        async with acp_trio.spawn_agent(
            AGENT, client=Client, max_message_size=LIMIT, grace_period=0.5
        ) as conn:
            await conn.agent.initialize(INIT)
            with pytest.raises(acp_trio.RequestError) as refused:
                await conn.agent.session_new(NEW)
            second = await conn.agent.session_new(NEW)
            client = conn.client
    assert isinstance(client, Client)
    _check(client.seen, refused.value, second)


def test_an_over_long_line_is_refused_the_same_way_in_acp_asyncio_spawn_agent() -> None:
    async def main() -> None:
        async with acp_asyncio.spawn_agent(
            AGENT, client=Client, max_message_size=LIMIT, grace_period=0.5
        ) as conn:
            await conn.agent.initialize(INIT)
            with pytest.raises(acp_asyncio.RequestError) as refused:
                await conn.agent.session_new(NEW)
            second = await conn.agent.session_new(NEW)
            client = conn.client
        assert isinstance(client, Client)
        _check(client.seen, refused.value, second)

    asyncio.run(asyncio.wait_for(main(), 60))
