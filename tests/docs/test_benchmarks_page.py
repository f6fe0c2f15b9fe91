"""The benchmark figures the documentation shows come from one run of
bench/report.py, never copied by hand."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "benchmarks.md"
MARKER = "<!-- Written by bench/report.py"


def _report() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "report", ROOT / "bench" / "report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["report"] = module
    spec.loader.exec_module(module)
    return module


def test_the_readme_shows_no_benchmark_figures_and_links_the_generated_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/benchmarks.md)" in readme
    # a table row of figures or a rate is a hand copy
    assert not re.search(
        r"\d[\d,.]* *(msgs/s|prompts/s|notifs/s)|\| *\d[\d,.]*x *\|", readme
    )


def test_the_benchmark_page_is_the_report_scripts_output() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page.startswith("# Benchmarks\n") and MARKER in page
    for label in ("- date: ", "- machine: ", "- Python ", "msgspec ", "- commit "):
        assert label in page, label


def test_the_report_names_date_machine_versions_and_mode_of_its_run() -> None:
    report = _report()
    runs = [report.Run(bench, f"{bench.title} table", 0) for bench in report.BENCHES]
    page = report.render(
        runs, quick=True, started="2026-01-02 03:04", load=("1.0", "2.0")
    )
    assert page.startswith("# Benchmarks\n") and MARKER in page
    assert "- date: 2026-01-02 03:04 (UTC)" in page and "quick mode" in page
    assert "1.0 at the start, 2.0 at the end" in page
    for bench in report.BENCHES:
        assert f"```text\n{bench.title} table\n```" in page
    failed = report.render(
        [report.Run(report.BENCHES[0], "", 3)],
        quick=False,
        started="x",
        load=("?", "?"),
    )
    assert "exited with status 3" in failed and "full runs" in failed
