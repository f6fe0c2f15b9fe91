"""The suite's own rules: .ci/provision.py's plan, and no wall-clock rule in
hypothesis."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def provision() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "provision", ROOT / ".ci" / "provision.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["provision"] = module
    spec.loader.exec_module(module)
    return module


def test_provision_installs_the_missing_packages_as_root_with_apt(
    provision: ModuleType,
) -> None:
    needs = (
        provision.Need(path="/usr/bin/a", debian="pa", why="x"),
        provision.Need(path="/usr/sbin/b", debian="pb", why="y"),
    )
    todo = provision.plan(needs, present={"/usr/bin/a"}, root=True, apt=True)
    assert todo == provision.Plan(install=("pb",), missing=None)
    done = provision.plan(
        needs, present={"/usr/bin/a", "/usr/sbin/b"}, root=False, apt=False
    )
    assert done == provision.Plan(install=(), missing=None)


@pytest.mark.parametrize(("root", "apt"), [(False, True), (True, False)])
def test_provision_says_in_one_line_what_is_missing_when_it_cannot_install(
    provision: ModuleType, root: bool, apt: bool
) -> None:
    todo = provision.plan(provision.NEEDS, present=set(), root=root, apt=apt)
    assert todo.install == ()
    assert todo.missing is not None and "\n" not in todo.missing
    assert "chromium" in todo.missing and "tests/inspect" in todo.missing


def test_the_tests_needs_are_a_table_of_paths_and_debian_packages(
    provision: ModuleType,
) -> None:
    assert "/usr/bin/chromium" in {need.path for need in provision.NEEDS}
    assert all(need.path.startswith("/") and need.debian for need in provision.NEEDS)


def test_hypothesis_has_no_deadline_and_no_too_slow_check_in_the_suite() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
