"""Every example in a docstring of the shipped packages runs, as a doctest.

``acp_schema`` (the generated modules and ``_runtime``), ``acp_core``,
``acp_trio``, ``acp_asyncio`` and ``acp_codegen``: an example that no longer holds fails here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("acp_schema", "acp_core", "acp_trio", "acp_asyncio", "acp_codegen")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        path = importlib.import_module(package).__path__
        # subpackages too (acp_core.session)
        names += [m.name for m in pkgutil.walk_packages(path, f"{package}.")]
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0, capsys.readouterr().out


def test_the_docstring_examples_are_found() -> None:
    """The examples the modules are known to hold are collected (no silent skip)."""
    finder = doctest.DocTestFinder()
    found = {
        name: sum(len(t.examples) for t in finder.find(importlib.import_module(name)))
        for name in (
            "acp_schema._runtime._bounds",
            "acp_schema._runtime._markers",
            "acp_schema.v1",
            "acp_core.session._blocks",
            "acp_core.session._builders",
            "acp_asyncio._serve",
        )
    }
    assert all(found.values()), found
