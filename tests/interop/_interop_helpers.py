"""Paths and environment for the interop tests (real subprocesses over stdio)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import acp_schema
import acp_trio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PYTHON = sys.executable
ECHO_AGENT = [PYTHON, "-m", "acp_echo"]
ASYNCIO_ECHO_AGENT = str(ROOT / "examples" / "asyncio_echo_agent.py")
CLIENT = [PYTHON, "-m", "acp_client"]
OFFICIAL_AGENT = str(HERE / "official_agent.py")
WIRETAP = str(HERE / "wiretap.py")


def child_env() -> dict[str, str]:
    """What a child Python needs to import acp_schema and acp_trio as we do.

    (Installed or from ``PYTHONPATH=generated:runtime``: both work.)
    """
    paths = [
        str(Path(acp_schema.__file__).resolve().parents[1]),
        str(Path(acp_trio.__file__).resolve().parents[1]),
    ]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def read_wire(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """The lines a :mod:`wiretap` logged: ``("->" | "<-", message)``."""
    return [
        (line[:2], json.loads(line[3:]))
        for line in log.read_text().splitlines()
        if line.strip()
    ]
