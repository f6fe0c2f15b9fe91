"""The adapter contract (``acp_core.adapter``): one public module an adapter builds on."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import acp_core
import acp_core.adapter as contract

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


def test_every_engine_member_the_contract_names_exists() -> None:
    named = set(re.findall(r"Engine\.(\w+)", contract.__doc__ or ""))
    named |= set(re.findall(r"engine\.(\w+)\(", contract.__doc__ or ""))
    assert {"receive_data", "next_event", "take_outbox", "next_queued"} <= named
    missing = sorted(n for n in named if not hasattr(contract.Engine, n))
    assert missing == []


def test_the_contract_exports_public_names_of_acp_core() -> None:
    for name in contract.__all__:
        assert getattr(contract, name) is getattr(acp_core, name), name


def test_acp_asyncio_s_connection_takes_the_engine_from_the_contract_only() -> None:
    tree = ast.parse((RUNTIME / "acp_asyncio" / "_connection.py").read_text())
    sources = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("acp")
    }
    assert sources == {"acp_core.adapter"}
