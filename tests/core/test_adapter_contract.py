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
    engine = contract.Engine(contract.AgentRules([1]))  # next_queued: the queue's own
    missing = sorted(n for n in named if not hasattr(engine, n))
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


#: Modules still on acp_core's second door (``Engine.receive_line`` and the
#: flow constants beside it) until the engine's split removes it (issue 18).
SECOND_DOOR: set[str] = set()  # every adapter module takes the public names


def test_the_adapters_import_no_private_acp_core_module() -> None:
    found = []
    # acp_inspect reads a connection from outside (capability rules, schema
    # modules), acp_http routes one (the envelope reader, the framer and its
    # verdict): they build on the same public names
    adapters = ("acp_trio", "acp_asyncio", "acp_host", "acp_inspect", "acp_http")
    for path in sorted(p for a in adapters for p in (RUNTIME / a).rglob("*.py")):
        where = str(path.relative_to(RUNTIME))
        if where in SECOND_DOOR:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            modules = []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules = [
                    node.module,
                    *(f"{node.module}.{a.name}" for a in node.names),
                ]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            found += [
                f"{where}: {m}"
                for m in modules
                if m.startswith("acp_core.") and m.split(".")[1].startswith("_")
            ]
    assert found == []


def test_the_rules_do_not_import_the_engine() -> None:
    # version negotiation lives in the rules objects: no _engine <-> _rules circle
    tree = ast.parse((RUNTIME / "acp_core" / "_rules.py").read_text())
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1
    }
    assert "_engine" not in imported
