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
from typing import Any

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
    # it exits ~2 s after EOF when idle: more on a loaded machine
    code, report, out = check(
        tmp_path, [sys.executable, "-m", "acp_echo"], "--eof-grace", "30"
    )
    got = statuses(report)
    assert code == 0, out
    assert set(got.values()) <= {"pass", "n/a"}, out
    # it advertises every session method the cases try
    assert [k for k, v in got.items() if v == "n/a"] == []
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
    # dying shows as an exit or as its stdout closing first, whichever is seen first
    assert any(
        word in detail for word in ("exited", "closed its stdout", "no progress")
    )
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
        # a SHOULD (prompt-turn.mdx:217 does not say nothing may follow)
        ("update-after-response", None, "update-after-turn"),
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


def check_rss(
    tmp_path: Path, agent: list[str], *args: str
) -> tuple[int, dict[str, Any], str, int]:
    """``check`` in a process of its own: exit status, JSON report, stdout,
    and the checker's own peak RSS in KiB (not its agents')."""
    report = tmp_path / "report.json"
    code = (
        "import resource, sys\n"
        "from acp_inspect._cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "check",
            "--json",
            str(report),
            *args,
            "--",
            *agent,
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        # the bound is the inspector's as shipped: the schema check of what it
        # sends (on in the tests, off by default) decodes each message again
        env={**os.environ, "ACP_CHECK_OUTGOING": "0"},
    )
    rss = int(out.stderr.split("RSS ")[-1].split()[0])
    return out.returncode, json.loads(report.read_text()), out.stdout, rss


def by_case(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["case"]: c for c in report["cases"]}


def test_check_memory_and_reports_stay_bounded_against_a_flooding_agent(
    tmp_path: Path,
) -> None:
    # the same case against 1 MB of updates: the checker's own size (imports included)
    *_, baseline = check_rss(tmp_path, [*BROKEN, "flood", "1"], "--case", "prompt.turn")
    # 160 MB of updates in one turn, half of them after its answer (a finding each):
    # most arrive after the case stopped reading (its settle), while the agent is
    # reaped; kept, they would cost ~150 KB each (count-bounded only, up to 150 MB)
    _code, report, out, rss = check_rss(
        tmp_path, [*BROKEN, "flood", "160"], "--case", "prompt.turn"
    )
    case = by_case(report)["prompt.turn"]
    assert case["findings"]  # update-after-turn, counted
    # KiB above the baseline: the budget's 8 MiB of waiting lines and 2 MiB of
    # timeline text, not the agent's output
    assert rss - baseline < 16 * 1024, (rss, baseline)
    assert (tmp_path / "report.json").stat().st_size < 4 * 1024 * 1024
    assert len(case["timeline"]) <= 2001
    assert any("not kept" in e["text"] for e in case["timeline"])
    # one stdout line per finding kind, with the count in all
    lines = out.splitlines()
    assert len(lines) < 15, out
    kind = [line for line in lines if "[update-after-turn]" in line]
    assert len(kind) == 1 and "in all)" in kind[0]
    assert all(len(line) <= 300 for line in lines)


def test_check_memory_stays_bounded_when_every_answer_is_huge(tmp_path: Path) -> None:
    *_, baseline = check_rss(tmp_path, [*BROKEN, "huge", "0"], "--case", "session.new")
    _code, report, out, rss = check_rss(
        tmp_path,
        [*BROKEN, "huge", "12"],
        "--jobs",
        "1",
        "--case",
        "session.new",
        "--case",
        "prompt.turn",
        "--case",
        "jsonrpc.batch",
        "--case",
        "cancel.prompt",
        "--case",
        "session.list",
    )
    assert set(statuses(report).values()) == {"pass", "n/a"}, out
    # KiB above the baseline: a 12 MB line costs a few times its size while it
    # is read and parsed (bounded by --max-line); the ~20 answers are not kept
    assert rss - baseline < 96 * 1024, (rss, baseline)
    assert (tmp_path / "report.json").stat().st_size < 1024 * 1024
    texts = [e["text"] for c in report["cases"] for e in c["timeline"]]
    assert any(t.endswith(" bytes]") for t in texts)  # cut, its size said
    assert max(len(t) for t in texts) < 2100
    # over --max-line: said at once, not waited out
    _code, report, out, rss = check_rss(
        tmp_path,
        [*BROKEN, "huge", "2"],
        "--max-line",
        "1000000",
        "--case",
        "session.new",
    )
    assert "(--max-line)" in by_case(report)["initialize.negotiation"]["detail"]


def test_no_progress_resets_on_every_message_and_a_late_start_is_no_hang(
    tmp_path: Path,
) -> None:
    # a turn streaming 2 s and an agent starting 2 s late, against a 1 s
    # no-progress limit: neither is a hang (the defaults: 30 s no progress,
    # 60 s for the first byte: an echo agent started 12 s late passes)
    for agent in ([*BROKEN, "slow-stream"], [*BROKEN, "late", "2"]):
        _code, report, out = check(
            tmp_path, agent, "--timeout", "1", "--case", "prompt.turn"
        )
        assert statuses(report) == {"prompt.turn": "pass"}, out


def test_a_failure_says_what_was_observed_last(tmp_path: Path) -> None:
    _code, report, _out = check(
        tmp_path,
        [*BROKEN, "error-without-id"],
        "--timeout",
        "1",
        "--case",
        "session.new",
    )
    detail = by_case(report)["session.new"]["detail"]
    assert "nothing from the agent for 1 s (--timeout)" in detail
    assert "session/new #2 sent at" in detail
    assert "answered -32700 at" in detail and "without an id" in detail


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("end-turn-mid-turn", "cancelled after 0.5 s of streaming ended end_turn"),
        ("silent-mid-turn", "the cancelled prompt was never answered"),
    ],
)
def test_cancel_prompt_cancels_mid_turn_too(
    tmp_path: Path, fault: str, said: str
) -> None:
    code, report, out = check(
        tmp_path,
        [*BROKEN, fault],
        "--streaming",
        "0.5",
        "--timeout",
        "2",
        "--case",
        "cancel.prompt",
    )
    case = by_case(report)["cancel.prompt"]
    assert case["status"] == "fail" and said in case["detail"], out
    assert code == 1


def test_permission_is_allowed_once_never_always(tmp_path: Path) -> None:
    _code, report, out = check(
        tmp_path, [*BROKEN, "always-trap"], "--case", "prompt.turn"
    )
    assert statuses(report) == {"prompt.turn": "pass"}, out


def test_an_agent_requiring_auth_without_auth_has_its_session_cases_not_applicable(
    tmp_path: Path,
) -> None:
    cases = ["session.new", "prompt.turn", "cancel.prompt", "jsonrpc.unknown-method"]
    picks = [arg for case in cases for arg in ("--case", case)]
    code, report, out = check(tmp_path, [*BROKEN, "auth-required"], *picks)
    assert statuses(report) == {
        "session.new": "n/a",
        "prompt.turn": "n/a",
        "cancel.prompt": "n/a",
        "jsonrpc.unknown-method": "pass",
    }, out
    said = [line for line in out.splitlines() if "requires authentication" in line]
    assert len(said) == 1 and said[0].startswith("n/a  3 cases not applicable")
    assert code == 0
    code, report, out = check(
        tmp_path, [*BROKEN, "auth-required"], "--auth", "key", *picks
    )
    assert set(statuses(report).values()) == {"pass"}, out


def test_each_case_has_its_own_cwd_and_home(tmp_path: Path) -> None:
    _code, report, _out = check(
        tmp_path, BROKEN, "--case", "session.new", "--case", "prompt.turn"
    )
    seen: list[tuple[str, str]] = []
    for case in report["cases"]:
        texts = [e["text"] for e in case["timeline"] if e["dir"] is not None]
        init = json.loads(texts[1])["result"]["_meta"]  # the initialize answer
        new = json.loads(next(t for t in texts if '"session/new"' in t))
        seen.append((init["home"], new["params"]["cwd"]))
    homes, cwds = {h for h, _ in seen}, {c for _, c in seen}
    assert len(homes) == len(cwds) == 2  # nothing shared
    assert os.path.expanduser("~") not in homes


def test_eof_grace_is_explicit(tmp_path: Path) -> None:
    agent = [*BROKEN, "slow-eof", "0.5"]
    _code, report, out = check(
        tmp_path, agent, "--eof-grace", "5", "--case", "eof.exit"
    )
    assert statuses(report) == {"eof.exit": "pass"}, out
    _code, report, out = check(
        tmp_path, agent, "--eof-grace", "0.1", "--case", "eof.exit"
    )
    assert (
        "0.1 s after its stdin closed (--eof-grace)"
        in by_case(report)["eof.exit"]["detail"]
    )


def test_initialize_failing_is_one_cause_its_dependents_skipped_and_counted(
    tmp_path: Path,
) -> None:
    _code, report, out = check(tmp_path, [*BROKEN, "no-protocol-version"])
    assert report["summary"]["skip"] == 17, out
    assert by_case(report)["initialize.negotiation"]["status"] == "fail"
    skipped = [line for line in out.splitlines() if line.startswith("SKIP")]
    assert skipped == [
        "SKIP 17 cases skipped: initialize failed (see initialize.negotiation)"
    ]
    # the agent's stderr under each failing case
    assert "stderr| broken_agent: no-protocol-version" in out
