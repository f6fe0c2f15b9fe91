"""``python -m acp_inspect check-client``: the check is the agent a client launches.

Real processes: the check's command line, the client under test
(``acp-client``, or ``tests/fixtures/broken_client.py`` with one fault), the
relay the client starts as its agent.  Every run is bounded by the check's
own bounds (``--timeout``, ``--grace``, ``--case-limit``) and by the
subprocess timeout here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "broken_client.py"
#: seconds any one run of the check may take here (its own bounds are far below)
RUN_LIMIT = 240
#: peak resident memory allowed to the check against a flooding client (KiB)
FLOOD_RSS_KIB = 150 * 1024


def check_client(
    tmp_path: Path,
    client: list[str],
    *options: str,
    env: dict[str, str] | None = None,
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "acp_inspect", "check-client", "--json", str(report),
         "--jobs", "2", *options, "--", *client],
        capture_output=True, text=True, timeout=RUN_LIMIT, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert report.is_file(), done.stdout + done.stderr
    return json.loads(report.read_text()), done


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["case"]: c["status"] for c in report["cases"]}


def broken(fault: str) -> list[str]:
    return [sys.executable, str(FIXTURE), "--fault", fault, "--", "{agent}"]


def test_acp_client_passes_every_case_that_applies(tmp_path: Path) -> None:
    # its default offer (v1 and both v2 drafts in one initialize)
    client = [sys.executable, "-m", "acp_client", "--yes",
              "--prompt", "hi", "--", "{agent}"]  # fmt: skip
    report, done = check_client(tmp_path, client)
    got = statuses(report)
    assert (
        got.pop("capabilities.unadvertised") == "n/a"
    )  # it advertises fs and terminal
    assert set(got.values()) == {"pass"}, done.stdout
    assert done.returncode == 0 and report["peer"] == "client"


def test_the_check_runs_when_tmpdir_is_too_long_for_a_socket_path(
    tmp_path: Path,
) -> None:
    # 150 bytes of TMPDIR: the relay's socket under it would exceed the limit
    deep = tmp_path / ("d" * (150 - len(str(tmp_path)) - 1))
    deep.mkdir()
    client = [sys.executable, "-m", "acp_client", "--yes",
              "--prompt", "hi", "--", "{agent}"]  # fmt: skip
    report, done = check_client(
        tmp_path,
        client,
        "--case",
        "prompt.turn",
        env={**os.environ, "TMPDIR": str(deep)},
    )
    assert statuses(report) == {"prompt.turn": "pass"}, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("fault", "case"),
    [
        ("fail-open", "permission.reject-only"),
        ("path-escape", "fs.path-escape"),
        ("unadvertised", "capabilities.unadvertised"),
        ("terminal-left", "terminal.release-kills"),
        ("hang", "agent.exits-mid-turn"),
    ],
)
def test_a_broken_client_fails_the_case_of_its_fault(
    tmp_path: Path, fault: str, case: str
) -> None:
    report, done = check_client(tmp_path, broken(fault), "--case", case, "--grace", "2")
    assert statuses(report) == {case: "fail"}, done.stdout
    assert case in done.stdout and "FAIL" in done.stdout


def test_the_behaving_broken_client_passes_the_cases_of_the_faults(
    tmp_path: Path,
) -> None:
    """The control: without a fault, the fixture passes those cases."""
    cases = [
        "permission.reject-only",
        "fs.path-escape",
        "terminal.release-kills",
        "agent.exits-mid-turn",
    ]
    options = [x for c in cases for x in ("--case", c)]
    report, done = check_client(tmp_path, broken("none"), *options, "--grace", "2")
    assert set(statuses(report).values()) == {"pass"}, done.stdout


def test_a_client_that_stops_reading_is_a_verdict_within_the_case_bound(
    tmp_path: Path,
) -> None:
    report, _done = check_client(
        tmp_path, broken("stop-reading"), "--case", "permission.offered-option",
        "--timeout", "4", "--grace", "1",
    )  # fmt: skip
    case = next(c for c in report["cases"] if c["case"] == "permission.offered-option")
    assert case["status"] == "fail" and "(--timeout)" in case["detail"]


def test_a_client_that_exits_is_a_verdict_within_the_case_bound(tmp_path: Path) -> None:
    report, _done = check_client(tmp_path, broken("exit"), "--grace", "1")
    setup = report["cases"][0]
    assert setup["case"] == "prompt.turn" and setup["status"] == "fail"
    assert "the client exited (3)" in setup["detail"]
    assert {c["status"] for c in report["cases"][1:]} == {"skip"}


def test_a_command_line_without_the_agent_placeholder_is_refused(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_inspect", "check-client", "--", "acp-client", "--", "agent"],
        capture_output=True, text=True, timeout=RUN_LIMIT,
    )  # fmt: skip
    assert done.returncode == 2 and "{agent}" in done.stderr


def test_peak_memory_against_a_flooding_client_stays_bounded(tmp_path: Path) -> None:
    """The flooding client writes hundreds of MiB to its agent (8 MiB lines,
    small notifications and requests) until the case's limit, reading
    nothing: what the check keeps is its budget, so its peak resident memory
    stays under FLOOD_RSS_KIB (measured: about 75 MiB for 450 MiB flooded
    in 20 s)."""
    measure = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "acp_inspect", "check-client",
         "--case", "prompt.turn", "--case-limit", "10", "--json", str(report), "--", *broken("flood")],
        capture_output=True, text=True, timeout=RUN_LIMIT, cwd=tmp_path,
    )  # fmt: skip
    peak_kib = int(done.stdout.strip().splitlines()[-1])
    case = json.loads(report.read_text())["cases"][0]
    flooded = [
        line for line in case["stderr"].splitlines() if line.startswith("flooded")
    ]
    # at least a block (26 MiB): more than the case keeps (8 MiB waiting, 2 MiB of rows)
    assert flooded, "the client flooded one block at least"
    assert "not kept (the case's budget)" in json.dumps(case["timeline"])
    assert peak_kib < FLOOD_RSS_KIB, f"{peak_kib} KiB after {flooded[-1]}"


def test_the_reports_are_checks_own(tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    report, done = check_client(
        tmp_path,
        broken("none"),
        "--case",
        "permission.offered-option",
        "--html",
        str(html),
    )
    case = report["cases"][-1]
    assert case["cite"] == "v1/tool-calls.mdx:185" and case["level"] == "MUST"
    assert "PASS permission.offered-option" in done.stdout
    page = html.read_text()
    assert "Client: <code>" in page and "permission.offered-option" in page
