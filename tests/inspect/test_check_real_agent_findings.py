"""``acp_inspect check`` on what real agents did (issue 30): a terminal login
given to ``--auth``, tools asked for after the check's ``session/cancel``, an
error answered without an id, long messages in the HTML report.  Each against
a real agent process (``broken_agent.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHECK = [sys.executable, "-m", "acp_inspect", "check"]
BROKEN = [sys.executable, str(HERE / "broken_agent.py")]


def check(tmp_path: Path, fault: str, *args: str) -> tuple[int, dict[str, Any], str]:
    report = tmp_path / "report.json"
    out = subprocess.run(
        [*CHECK, "--json", str(report), *args, "--", *BROKEN, *fault.split()],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return out.returncode, json.loads(report.read_text()), out.stdout


def cases(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["case"]: c for c in report["cases"]}


def test_auth_with_a_terminal_method_sends_no_authenticate_and_is_judged_like_no_auth(
    tmp_path: Path,
) -> None:
    code, report, out = check(
        tmp_path,
        "terminal-auth-required",
        "--auth",
        "login",
        *("--case", "session.new", "--case", "prompt.turn"),
    )
    got = cases(report)
    assert {k: c["status"] for k, c in got.items()} == {
        "session.new": "n/a",
        "prompt.turn": "n/a",
    }, out
    assert "terminal login, which the check cannot run" in got["session.new"]["detail"]
    sent = [e["text"] for c in got.values() for e in c["timeline"]]
    assert not any('"authenticate"' in text for text in sent)  # MUST NOT
    assert code == 0


def test_a_permission_asked_after_the_checks_cancel_is_answered_cancelled(
    tmp_path: Path,
) -> None:
    _, report, out = check(tmp_path, "tool-after-cancel", "--case", "cancel.prompt")
    case = cases(report)["cancel.prompt"]
    assert "late tool: not run" in case["stderr"], out
    assert "late tool: ran" not in case["stderr"]


def test_an_agent_asking_for_tools_after_a_cancel_is_reported(tmp_path: Path) -> None:
    _, report, out = check(tmp_path, "tool-after-cancel", "--case", "cancel.prompt")
    case = cases(report)["cancel.prompt"]
    rules = {f["rule"]: f for f in case["findings"]}
    assert "tool-after-cancel" in rules, out
    assert rules["tool-after-cancel"]["level"] == "SHOULD"
    assert "tool-after-cancel" in out  # the summary's line under the case


def test_an_error_answered_without_an_id_is_the_answer_waited_for(
    tmp_path: Path,
) -> None:
    # codex-acp answers `[]` with -32700 and no id: the case judges that
    # answer at once instead of waiting --timeout for another
    _, report, out = check(
        tmp_path, "batch-error-without-id", "--case", "jsonrpc.empty-batch"
    )
    case = cases(report)["jsonrpc.empty-batch"]
    assert case["status"] == "fail", out
    assert case["detail"].startswith("expected one -32600 with id null, got"), out
    assert "without an id member" in case["detail"]
    assert "--timeout" not in case["detail"]


def test_the_html_report_shows_a_long_message_as_json(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    _, report, _ = check(
        tmp_path,
        "huge 0.01",  # every answer padded to 10 KB
        *("--case", "initialize.negotiation", "--html", str(page)),
    )
    timeline = cases(report)["initialize.negotiation"]["timeline"]
    long = [e for e in timeline if e["dir"] == "from_agent" and e["size"] > 2000]
    assert long and all(len(e["text"]) < 2100 for e in long)  # bounded
    html = page.read_text()
    assert "(not JSON)" not in html
    assert "result #1: protocolVersion" in html


def test_elicitation_outcomes_fails_an_agent_that_assumes_its_form_is_filled_in(
    tmp_path: Path,
) -> None:
    code, report, out = check(
        tmp_path, "elicitation-assumed", "--case", "elicitation.outcomes"
    )
    case = cases(report)["elicitation.outcomes"]
    assert case["status"] == "fail", out
    assert "answered decline ended" in case["detail"]
    assert case["cite"] == "v1/elicitation.mdx:151"
    assert code == 1  # a MUST


def test_elicitation_outcomes_is_not_applicable_to_an_agent_that_never_elicits(
    tmp_path: Path,
) -> None:
    _, report, out = check(tmp_path, "", "--case", "elicitation.outcomes")
    assert cases(report)["elicitation.outcomes"]["status"] == "n/a", out
