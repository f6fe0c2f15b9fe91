"""An SSE stream whose client left is free again: the server sees the
disconnect while the stream is idle (no send to fail) and a new GET of the
same stream is served, not refused 409 ("this stream already has a reader").

Real servers (hypercorn's trio and asyncio workers, uvicorn) on loopback,
over HTTP/2 where the server speaks it and over HTTP/1.1.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import trio
from _raw import raw_client
from _servers import Served, serving

#: (server, over HTTP/2): HTTP/2 where the server speaks it (uvicorn does not)
CASES = [
    ("hypercorn-trio", True),
    ("hypercorn-trio", False),
    ("hypercorn-asyncio", True),
    ("hypercorn-asyncio", False),
    ("uvicorn", False),
]


@pytest.fixture(
    scope="module",
    params=CASES,
    ids=[f"{server}-{'HTTP/2' if h2 else 'HTTP/1.1'}" for server, h2 in CASES],
)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Served, bool]]:
    server, http2 = request.param
    with serving(server) as base:
        yield base, http2


async def test_an_idle_stream_whose_client_left_can_be_opened_again(
    served: tuple[Served, bool],
) -> None:
    url, http2 = served
    async with raw_client(url, http2=http2) as raw:
        cid = await raw.initialize()
        headers = {"accept": "text/event-stream", "acp-connection-id": cid}
        with trio.fail_after(20):
            # a client of its own, closed with the stream: the socket goes too
            async with (
                httpx.AsyncClient(http1=not http2, http2=http2) as other,
                other.stream("GET", url, headers=headers) as first,
            ):
                assert first.status_code == 200
            status = 409
            while status == 409:  # until the server saw the first one leave
                async with raw.http.stream("GET", url, headers=headers) as again:
                    status = again.status_code
                if status == 409:
                    await trio.sleep(0.05)
        assert status == 200
