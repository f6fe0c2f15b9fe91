"""A proxy program reads its stdio as every connection of its adapter does:
pipes, files and ``/dev/null`` alike (``acp_host.protocol_stdio`` and the
adapter's one reader)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from chain_support import HERE, PY


@pytest.mark.parametrize("proxy", ["trio_proxy.py", "asyncio_proxy.py"])
def test_a_proxy_whose_stdin_is_dev_null_ends_at_once(proxy: str) -> None:
    done = subprocess.run(
        [PY, str(HERE / proxy)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]


@pytest.mark.parametrize("proxy", ["trio_proxy.py", "asyncio_proxy.py"])
def test_a_proxy_reads_a_file_as_its_stdin_and_answers_in_a_file(
    proxy: str, tmp_path: Path
) -> None:
    requests = tmp_path / "in.jsonl"
    # a terminal initialize: a proxy needs a conductor, and says so
    requests.write_bytes(
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    )
    replies = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        done = subprocess.run(
            [PY, str(HERE / proxy)],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=30,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b'"id":1' in replies.read_bytes() and b"error" in replies.read_bytes()
