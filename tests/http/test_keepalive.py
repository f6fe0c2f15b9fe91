"""A quiet SSE stream carries a keepalive comment every ``keepalive_seconds``.

The server's sweep wakes each reader quiet that long (no timer per wait):
the comment comes within about ``1.33 * keepalive_seconds`` of quiet, on
hypercorn's trio and asyncio workers, over HTTP/2 and HTTP/1.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import trio
from _raw import raw_client
from _servers import Served, serving

LIMITS = {"keepalive_seconds": 0.3}


@pytest.fixture(scope="module", params=["hypercorn-trio", "hypercorn-asyncio"])
def url(request: pytest.FixtureRequest) -> Iterator[Served]:
    with serving(request.param, env={"ACP_HTTP_LIMITS": json.dumps(LIMITS)}) as base:
        yield base


@pytest.mark.parametrize("http2", [True, False], ids=["HTTP/2", "HTTP/1.1"])
async def test_a_quiet_sse_stream_carries_keepalive_comments(
    url: Served, http2: bool
) -> None:
    async with raw_client(url, http2=http2) as raw:
        cid = await raw.initialize()
        headers = {"accept": "text/event-stream", "acp-connection-id": cid}
        seen = b""
        with trio.fail_after(20):
            async with raw.http.stream("GET", url, headers=headers) as response:
                assert response.status_code == 200
                async for chunk in response.aiter_raw():
                    seen += chunk
                    if seen.count(b": keepalive\n\n") >= 2:
                        break
        assert seen == b": keepalive\n\n" * 2  # comments only: nothing else to say
