"""The adapters' shared signatures (``spawn_agent``, ``connect_to_agent``,
``connect_to_client`` overloads) are what tools/gen_overloads.py writes from
its one table: a hand edit of one copy, or of the table without
regenerating, fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_overloads", ROOT / "tools" / "gen_overloads.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_adapters_overloads_are_the_generated_ones() -> None:
    tool = _tool()
    stale = [
        m.path
        for m in tool.MODULES
        if tool.regenerate((ROOT / m.path).read_text(), m)
        != (ROOT / m.path).read_text()
    ]
    assert stale == [], "run: python tools/gen_overloads.py"


def test_a_hand_edit_of_one_copy_is_found() -> None:
    tool = _tool()
    module = tool.MODULES[1]  # acp_asyncio's spawn_agent
    text = (ROOT / module.path).read_text()
    edited = text.replace("grace_period: float = 2.0", "grace_period: float = 5.0", 1)
    assert edited != text
    assert tool.regenerate(edited, module) == text
