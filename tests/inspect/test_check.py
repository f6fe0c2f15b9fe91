"""``acp_inspect check`` against real agent processes: our echo agent passes,
the official SDK's agent shows its known departures, each broken agent trips
exactly its case; the HTML report in a real headless browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHECK = [sys.executable, "-m", "acp_inspect", "check"]
BROKEN = [sys.executable, str(HERE / "broken_agent.py")]
CHROMIUM = "/usr/bin/chromium"


def check(
    tmp_path: Path, agent: list[str], *args: str
) -> tuple[int, dict[str, object], str]:
    report = tmp_path / "report.json"
    out = subprocess.run(
        [*CHECK, "--json", str(report), *args, "--", *agent],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return out.returncode, json.loads(report.read_text()), out.stdout


def statuses(report: dict[str, object]) -> dict[str, str]:
    cases = report["cases"]
    assert isinstance(cases, list)
    return {c["case"]: c["status"] for c in cases}


def test_echo_agent_passes_every_case(tmp_path: Path) -> None:
    code, report, out = check(tmp_path, [sys.executable, "-m", "acp_echo"])
    got = statuses(report)
    assert code == 0, out
    assert set(got.values()) <= {"pass", "n/a"}, out
    # it advertises everything but session/list
    assert [k for k, v in got.items() if v == "n/a"] == ["session.list"]
    agent_findings = [
        f
        for c in report["cases"]  # type: ignore[union-attr]
        for f in c["findings"]
        if f["dir"] == "from_agent"
    ]
    assert agent_findings == []


def test_official_sdk_agent_departures_are_reported_with_their_spec_lines(
    tmp_path: Path,
) -> None:
    agent = [sys.executable, str(ROOT / "tests" / "interop" / "official_agent.py")]
    # the cases the SDK hangs on wait out a short timeout; the others get a
    # long one, as the SDK's imports take many seconds on a loaded machine
    # (a case ends as soon as it passes or fails): both runs at once
    groups = {
        "hangs": (["jsonrpc.malformed-line", "jsonrpc.batch"], "12"),
        "answers": (["initialize.first", "cancel.prompt", "prompt.turn"], "90"),
    }
    runs = {
        name: subprocess.Popen(
            [*CHECK, "--json", str(tmp_path / f"{name}.json"), "--timeout", timeout]
            + [arg for case in cases for arg in ("--case", case)]
            + ["--", *agent],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for name, (cases, timeout) in groups.items()
    }
    outs = {name: run.communicate(timeout=240)[0] for name, run in runs.items()}
    code = max(run.returncode for run in runs.values())
    out = "\n".join(outs.values())
    report = {
        "cases": [
            c
            for name in groups
            for c in json.loads((tmp_path / f"{name}.json").read_text())["cases"]
        ]
    }
    assert code == 1, out  # a MUST violation
    by_case = {c["case"]: c for c in report["cases"]}  # type: ignore[union-attr]
    # 0.12.1 never answers a line that is not JSON (JSON-RPC: -32700, id null)
    assert by_case["jsonrpc.malformed-line"]["status"] == "fail"
    assert (
        by_case["jsonrpc.malformed-line"]["cite"]
        == "JSON-RPC 2.0 §5.1 Error object (-32700)"
    )
    # a batch is not answered (the agent dies on it, or hangs under load)
    assert by_case["jsonrpc.batch"]["status"] == "fail"
    detail = by_case["jsonrpc.batch"]["detail"]
    assert "exited" in detail or "no progress" in detail
    # it serves session/new before initialize (SHOULD, initialization.mdx:24)
    assert by_case["initialize.first"]["status"] == "fail"
    assert (
        by_case["initialize.first"]["level"],
        by_case["initialize.first"]["cite"],
    ) == (
        "SHOULD",
        "v1/initialization.mdx:24",
    )
    assert by_case["cancel.prompt"]["status"] == "pass"
    assert by_case["prompt.turn"]["status"] == "pass"


@pytest.mark.parametrize(
    ("fault", "case", "rule"),
    [
        ("", None, None),
        ("end-turn-after-cancel", "cancel.prompt", "cancelled-stop-reason"),
        ("update-after-response", "prompt.turn", "update-after-turn"),
        (
            "fs-without-capability",
            "capabilities.honoured",
            "unadvertised-client-method",
        ),
        ("ignore-eof", "eof.exit", None),
    ],
)
def test_broken_agent_trips_exactly_its_case(
    tmp_path: Path, fault: str, case: str | None, rule: str | None
) -> None:
    code, report, out = check(
        tmp_path, [*BROKEN, fault] if fault else BROKEN, "--timeout", "3"
    )
    failed = [k for k, v in statuses(report).items() if v == "fail"]
    assert failed == ([case] if case else []), out
    if rule is not None:
        found = {f["rule"] for c in report["cases"] for f in c["findings"]}  # type: ignore[union-attr]
        assert rule in found
    assert code == (1 if case and case != "eof.exit" else 0)  # eof.exit is a SHOULD


def _chromium(page: Path, shot: Path) -> str:
    """Load ``page`` in headless Chromium, screenshot it; its console output."""
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1280,2000",
                f"--screenshot={shot}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    return "\n".join(line for line in out.stderr.splitlines() if ":CONSOLE" in line)


def test_html_report_renders_in_headless_chromium_without_console_messages(
    tmp_path: Path,
) -> None:
    # A missing browser is a failure, not a skip: .ci/provision.py installs it.
    assert os.path.exists(CHROMIUM), (
        "Debian chromium is a test dependency: python3 .ci/provision.py (as root) "
        "installs it, as nox -s tests does"
    )
    html = tmp_path / "report.html"
    subprocess.run(
        [
            *CHECK,
            "--timeout",
            "3",
            "--html",
            str(html),
            "--",
            *BROKEN,
            "end-turn-after-cancel",
        ],
        capture_output=True,
        timeout=240,
        check=False,
    )
    text = html.read_text()
    assert "cancel.prompt" in text and "v1/prompt-turn.mdx:332" in text
    shot = tmp_path / "report.png"
    assert _chromium(html, shot) == ""
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one
    # the console check can fail: a page that logs is caught
    noisy = tmp_path / "noisy.html"
    noisy.write_text("<script>console.error('boom')</script>")
    assert "boom" in _chromium(noisy, tmp_path / "noisy.png")
    shutil.copy(shot, tmp_path / "kept.png")


def test_view_renders_a_proxy_trace_as_the_same_timeline(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    lines = b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
    subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_inspect",
            "proxy",
            "--trace",
            str(trace),
            "--",
            *BROKEN,
        ],
        input=lines,
        capture_output=True,
        timeout=60,
        check=True,
    )
    out = subprocess.run(
        [sys.executable, "-m", "acp_inspect", "view", str(trace)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    page = Path(out.stdout.strip())
    text = page.read_text()
    assert "session/new #1" in text and "[before-initialize]" in text
    if os.path.exists(CHROMIUM):
        assert _chromium(page, tmp_path / "trace.png") == ""
