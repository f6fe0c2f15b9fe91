"""Fixtures of the remote-transport tests: servers on loopback, stopped by PID."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _servers import serving


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The ``/acp`` URL of hypercorn (trio worker) serving the test agent in process."""
    with serving("hypercorn-trio") as base:
        yield base
