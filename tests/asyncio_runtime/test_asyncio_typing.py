"""``conn.agent`` / ``conn.client`` of acp_asyncio are typed as the peer's Protocol.

Runs ``mypy --strict`` on ``asyncio_typing_cases.py``: each line marked
``# E: code`` must fail with that code and every other line must pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASES = HERE / "asyncio_typing_cases.py"
_MARK = re.compile(r"#\s*E:\s*([\w-]+)\s*$")
_ERROR = re.compile(r"^[^:]+:(\d+): error: .*\[([\w-]+)\]$")


def test_asyncio_peer_proxies_are_typed_as_the_generated_protocols() -> None:
    expected = {
        (number, m.group(1))
        for number, line in enumerate(CASES.read_text().splitlines(), 1)
        if (m := _MARK.search(line))
    }
    env = dict(os.environ)
    env["MYPYPATH"] = os.pathsep.join([str(ROOT / "generated"), str(ROOT / "runtime")])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--show-error-codes",
            "--no-error-summary",
            "--no-pretty",
            str(CASES),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = {
        (int(m.group(1)), m.group(2))
        for line in proc.stdout.splitlines()
        if (m := _ERROR.match(line))
    }
    assert len(expected) >= 6
    assert errors == expected, proc.stdout + proc.stderr
