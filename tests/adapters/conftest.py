from __future__ import annotations

from collections.abc import Iterator

import pytest
from _raw_peer import ADAPTERS, RawPeer


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> str:
    """The runtime serving the agent: each rule test runs once per adapter."""
    return str(request.param)


@pytest.fixture
def peer(adapter: str) -> Iterator[RawPeer]:
    peer = RawPeer(adapter)
    try:
        yield peer
    finally:
        peer.close()
