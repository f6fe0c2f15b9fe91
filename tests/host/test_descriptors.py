"""acp_host._descriptors: what the host says about a descriptor (no event loop)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from acp_host import pollable, reader_gone


def test_pipes_and_sockets_are_pollable_regular_files_and_dev_null_are_not(
    tmp_path: Path,
) -> None:
    r, w = os.pipe()
    a, b = socket.socketpair()
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b"{}\n")
    with open(path, "rb") as file, open(os.devnull, "wb") as null:
        try:
            assert pollable(r) and pollable(w) and pollable(a.fileno())
            assert not pollable(file.fileno())  # epoll refuses a regular file
            assert not pollable(null.fileno())  # and /dev/null (EPERM)
        finally:
            os.close(r)
            os.close(w)
            a.close()
            b.close()


def test_a_pipe_whose_reader_closed_reports_its_reader_gone() -> None:
    r, w = os.pipe()
    try:
        assert not reader_gone(w)
        os.close(r)
        assert reader_gone(w)
    finally:
        os.close(w)
    assert reader_gone(-1)  # a closed stream's descriptor
