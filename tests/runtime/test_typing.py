"""``conn.agent`` / ``conn.client`` are typed as the peer's generated Protocol.

Runs ``mypy --strict`` on ``typing_cases.py``: each line marked ``# E: code``
must fail with exactly that error code and every other line must pass, so
the test fails both when typing is lost (``Any`` lets a mistake through) and
when a correct call stops type-checking.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, "typing_cases.py")

_MARK = re.compile(r"#\s*E:\s*([\w-]+)\s*$")
_ERROR = re.compile(r"^[^:]+:(\d+): error: .*\[([\w-]+)\]$")


def _expected() -> set[tuple[int, str]]:
    with open(CASES, encoding="utf-8") as f:
        return {
            (number, m.group(1))
            for number, line in enumerate(f, 1)
            if (m := _MARK.search(line))
        }


def test_peer_proxies_are_typed_as_the_generated_protocols() -> None:
    env = dict(os.environ)
    env["MYPYPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "generated"), os.path.join(ROOT, "runtime")]
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--show-error-codes",
            "--no-error-summary",
            "--no-pretty",
            CASES,
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
    expected = _expected()
    assert len(expected) >= 8
    assert errors == expected, proc.stdout + proc.stderr
