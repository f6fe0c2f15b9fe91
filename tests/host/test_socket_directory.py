"""acp_host.socket_directory: a Unix socket's directory whose path the kernel
accepts, whatever ``TMPDIR`` is (real sockets bound, no event loop)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_host import MAX_SOCKET_PATH, socket_directory


@pytest.fixture
def long_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``TMPDIR`` of 150 bytes, as tempfile sees it."""
    deep = tmp_path / ("d" * (150 - len(str(tmp_path)) - 1))
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    yield deep


def bind(path: str) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(path)
    finally:
        server.close()


def test_the_socket_directory_is_under_tmpdir_when_the_socket_path_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    directory = socket_directory("acp-test-", "agent.sock")
    assert Path(directory).parent == tmp_path
    bind(os.path.join(directory, "agent.sock"))


def test_the_socket_directory_is_under_tmp_when_tmpdir_is_too_long_for_a_socket(
    long_tmpdir: Path,
) -> None:
    path = os.path.join(str(long_tmpdir), "agent.sock")
    with pytest.raises(OSError):  # the failure this rule avoids
        bind(path)
    directory = socket_directory("acp-test-", "agent.sock")
    try:
        assert Path(directory).parent == Path("/tmp")
        assert len(os.path.join(directory, "agent.sock")) <= MAX_SOCKET_PATH
        bind(os.path.join(directory, "agent.sock"))
    finally:
        shutil.rmtree(directory)


def test_the_socket_directory_is_private_to_its_user(tmp_path: Path) -> None:
    directory = socket_directory("acp-test-", "agent.sock")
    try:
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    finally:
        shutil.rmtree(directory)


def test_a_socket_name_that_fits_nowhere_is_a_clear_error() -> None:
    with pytest.raises(OSError, match="would exceed 103 bytes"):
        socket_directory("acp-test-", "s" * 120)
