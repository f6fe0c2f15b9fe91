"""A skipped case is a defect: the suite's plugin (``pytest_plugins`` in
``conftest.py``) reports every skip as a failure, a test's or a whole
module's (``importorskip``), except ``_upstream.needs``'s: a test of a schema
feature that the spec in ``spec/`` does not have yet (by design after a bump
to an older schema)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest


def _skip_defect(report: pytest.TestReport | pytest.CollectReport) -> None:
    """A skipped case is a defect: it fails, whatever skipped it, unless the
    reason is ``_upstream.needs``'s (the spec in ``spec/`` is older than the
    test: by design after a bump to an older schema)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
    if not reason.removeprefix("Skipped: ").startswith("spec/"):
        report.outcome = "failed"
        report.longrepr = f"a skipped case is a defect here: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    _skip_defect((yield).get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, Any, None]:
    _skip_defect((yield).get_result())  # a module skipped as it is collected
