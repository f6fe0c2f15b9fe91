"""Test modules are imported by their file name (no packages under tests/):
two with the same name in different folders make the whole run fail to collect."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_name_is_unique_across_the_suite() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, count in names.items() if count > 1] == []
