"""The command line beyond protocol 1: ``check --protocol 2`` against our echo
agent, ``view`` of a v2 trace, and the hint when trio is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acp_inspect._trace import read_trace

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INSPECT = [sys.executable, "-m", "acp_inspect"]
ECHO_AGENT = [sys.executable, "-m", "acp_echo"]


def test_check_protocol_2_echo_agent_passes_every_case_on_v2_lines(
    tmp_path: Path,
) -> None:
    report_file = tmp_path / "report.json"
    # the echo agent exits ~2 s after EOF when idle: more on a loaded machine
    args = ["check", "--protocol", "2", "--eof-grace", "30", "--json", str(report_file)]
    out = subprocess.run(
        [*INSPECT, *args, "--", *ECHO_AGENT],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    report = json.loads(report_file.read_text())
    assert out.returncode == 0, out.stdout
    assert report["protocol"] == 2
    got = {c["case"]: c["status"] for c in report["cases"]}
    assert set(got.values()) <= {"pass", "n/a"}, out.stdout
    # the v2 draft it speaks (2.0.0-alpha.0) has no elicitation
    assert [k for k, v in got.items() if v == "n/a"] == ["elicitation.outcomes"]
    # the agent answered in v2, and the cases cite the v2 pages where they have the line
    init = next(c for c in report["cases"] if c["case"] == "initialize.negotiation")
    answer = json.loads(init["timeline"][1]["text"])
    assert answer["result"]["protocolVersion"] == 2
    cites = {c["case"]: c["cite"] for c in report["cases"]}
    assert cites["cancel.prompt"] == "v2/prompt-turn.mdx:439"
    assert cites["session.new"] == "v2/session-setup.mdx:72"
    # the suite's own deliberate faults aside, nothing the agent wrote broke a rule
    assert not [
        f for c in report["cases"] for f in c["findings"] if f["dir"] == "from_agent"
    ]


def test_view_renders_a_v2_trace_with_v2_citations(tmp_path: Path) -> None:
    trace = tmp_path / "v2.jsonl"
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 2, "capabilities": {}},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": "relative/dir", "mcpServers": []},
        },
    ]
    proc = subprocess.Popen(
        [*INSPECT, "proxy", "--trace", str(trace), "--", *ECHO_AGENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for obj in lines:  # one at a time: the second is read as v2 once answered
        proc.stdin.write(json.dumps(obj).encode() + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
    proc.stdin.close()
    proc.stdout.read()
    assert proc.wait(timeout=60) == 0
    record = read_trace(trace)
    assert [f["cite"] for f in record.findings] == ["v2/overview.mdx:140"]
    out = subprocess.run(
        [*INSPECT, "view", str(trace), "--html", str(tmp_path / "v2.html")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    page = Path(out.stdout.strip()).read_text()
    assert "v2/overview.mdx:140" in page and "[relative-path]" in page
    assert "&quot;protocolVersion&quot;:2" in page or '"protocolVersion":2' in page


def test_python_m_acp_inspect_without_trio_prints_a_one_line_hint() -> None:
    # trio made unimportable in a fresh interpreter, as if not installed
    code = (
        "import runpy, sys; sys.modules['trio'] = None; "
        "sys.argv = ['acp_inspect', 'check', '--', 'agent']; "
        "runpy.run_module('acp_inspect', run_name='__main__', alter_sys=True)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert out.stderr == "acp_inspect needs trio: pip install 'acp-msgspec[trio]'\n"
    # the I/O-free inspector itself needs no trio
    lib = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['trio'] = None; import acp_inspect; "
            "print(len(acp_inspect.DEFAULT_RULES))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(lib.stdout) >= 12
