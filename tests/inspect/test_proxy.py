"""The proxy over real pipes: bytes unchanged both ways, findings on stderr and
in the trace, the agent's process group ended with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from acp_inspect._process import group_alive
from acp_inspect._trace import read_trace, read_traces

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROXY = [sys.executable, "-m", "acp_inspect", "proxy"]
RAW_COPY = [sys.executable, str(HERE / "raw_copy_agent.py")]
ECHO_AGENT = [sys.executable, "-m", "acp_echo"]


def test_proxy_forwards_every_byte_unchanged_both_ways(tmp_path: Path) -> None:
    got = tmp_path / "agent-received"
    trace = tmp_path / "trace.jsonl"
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
        + b"not json at all\r\n"
        + bytes(range(256)) * 3  # invalid UTF-8, NULs, stray newlines
        + b"\n\n\n"
        + b'{"big":"'
        + b"x" * 300_000
        + b'"}\n'
        + "caf\u00e9 \u2603\n".encode()
        + b"no newline at the end"
    )
    out = subprocess.run(
        [
            *PROXY,
            "--trace",
            str(trace),
            "--",
            sys.executable,
            str(HERE / "raw_copy_agent.py"),
            str(got),
        ],
        input=data,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert got.read_bytes() == data  # client -> agent
    assert out.stdout == data  # agent -> client
    record = read_trace(trace)
    to_agent = [line.data for line in record.lines if line.dir == "to_agent"]
    from_agent = [line.data for line in record.lines if line.dir == "from_agent"]
    assert b"\n".join(to_agent) == data
    assert from_agent == to_agent
    assert b"malformed" in out.stderr
    assert all(len(line) <= 300 for line in out.stderr.decode().splitlines())


def test_proxy_reports_broken_rules_on_stderr_and_in_the_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        },
    ]
    proc = subprocess.Popen(
        # --grace: the echo agent takes seconds to exit on a loaded machine
        [*PROXY, "--grace", "30", "--trace", str(trace), "--", *ECHO_AGENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for obj in lines:
        proc.stdin.write(json.dumps(obj).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline(), proc.stdout.readline()  # both answered
    relative = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/new",
        "params": {"cwd": "here", "mcpServers": []},
    }
    proc.stdin.write(json.dumps(relative).encode() + b"\n")
    proc.stdin.close()
    proc.stdout.read()
    proc.wait(timeout=30)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    assert "MUST v1/initialization.mdx:24 [before-initialize] #1" in stderr
    assert "MUST v1/overview.mdx:214 [relative-path] #" in stderr
    rules = [f["rule"] for f in read_trace(trace).findings]
    assert rules == ["before-initialize", "relative-path"]


def test_proxy_ends_the_agents_process_group_no_orphans(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids.json"
    family = ROOT / "tests" / "runtime" / "family_agent.py"
    proc = subprocess.Popen(
        [
            *PROXY,
            "--grace",  # the agent exits on EOF: slowly on a loaded machine
            "30",
            "--",
            sys.executable,
            str(family),
            "leave",
            str(pidfile),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        pids = json.loads(pidfile.read_text())
        assert proc.stdin is not None
        proc.stdin.close()  # the editor goes away
        assert proc.wait(timeout=60) == 0
        assert not group_alive(pids["agent"])  # the grandchild holding stdout too
    finally:  # a failed test leaves no proxy waiting for its editor
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_agent_ignoring_stdin_eof_is_reported_and_terminated(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(100)"
    out = subprocess.run(
        [
            *PROXY,
            "--grace",
            "0.3",
            "--trace",
            str(trace),
            "--",
            sys.executable,
            "-c",
            stubborn,
        ],
        input=b"",
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert out.returncode == 128 + 9  # SIGKILLed after SIGTERM was ignored
    assert b"SHOULD v1/transports.mdx:40 [eof-ignored]" in out.stderr
    assert [f["rule"] for f in read_trace(trace).findings] == ["eof-ignored"]
    assert os.path.exists(trace)


def test_client_input_after_the_agent_closed_its_stdin_is_read_not_left_blocking(
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    # an agent that closes its stdin at once, then runs until told to exit
    agent = (
        "import os, sys, time; os.close(0); "
        f"[time.sleep(0.02) for _ in range(2000) if not os.path.exists({str(go)!r})]"
    )
    trace = tmp_path / "trace.jsonl"
    proc = subprocess.Popen(
        [*PROXY, "--trace", str(trace), "--", sys.executable, "-c", agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    time.sleep(0.5)  # let the agent close its stdin (a pipe holds 64 KiB)
    pad = b"a" * 50_000
    line = b'{"jsonrpc":"2.0","method":"x","params":{"pad":"' + pad + b'"}}\n'
    done = threading.Event()

    def write() -> None:
        assert proc.stdin is not None
        proc.stdin.write(line * 40)  # 2 MB: blocks unless the proxy reads
        proc.stdin.close()
        done.set()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        assert done.wait(30), "the proxy left the editor blocked writing"
    finally:
        go.touch()
    assert proc.wait(timeout=30) == 0
    record = read_trace(trace)
    assert len([x for x in record.lines if x.dir == "to_agent"]) == 40
    assert any("not delivered" in text for _, text in record.events)


HOSTILE = [sys.executable, str(HERE / "hostile_agent.py")]


def _start(
    tmp_path: Path, mode: str, *options: str
) -> tuple[subprocess.Popen[bytes], dict[str, int]]:
    pidfile = tmp_path / "pids.json"
    proc = subprocess.Popen(
        [*PROXY, *options, "--", *HOSTILE, mode, str(pidfile)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not pidfile.exists():  # no proxy left waiting for its editor
        proc.kill()
        proc.wait()
    return proc, json.loads(pidfile.read_text())


def _gone(pgid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_editor_close_schedule_never_strands_an_agent_that_ignores_everything(
    tmp_path: Path, sig: int
) -> None:
    # acp_trio.spawn_agent's schedule, scaled: close stdin, G, SIGTERM (or
    # the terminal's SIGHUP), G, SIGKILL; the proxy's own delays scaled alike
    # (its defaults: 2 s, then 1 s, against the editor's 2 s steps)
    proc, pids = _start(tmp_path, "stubborn", "--grace", "0.6", "--kill-after", "0.3")
    assert proc.stdin is not None
    proc.stdin.close()
    time.sleep(0.6)
    proc.send_signal(sig)
    try:
        proc.wait(timeout=0.6)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    try:
        assert _gone(pids["agent"], 0.5), "the agent outlived the proxy"
    finally:
        if group_alive(pids["agent"]):
            os.killpg(pids["agent"], signal.SIGKILL)


def test_proxy_exits_with_the_agent_though_a_detached_child_holds_its_stdout(
    tmp_path: Path,
) -> None:
    proc, pids = _start(tmp_path, "detach", "--kill-after", "0.3")
    try:
        assert proc.wait(timeout=15) == 0  # the editor's stdin still open
    finally:
        os.kill(pids["child"], signal.SIGKILL)


def _batch(n: int, first_id: int) -> bytes:
    members = [
        {
            "jsonrpc": "2.0",
            "id": first_id + i,
            "method": "session/new",
            "params": {"cwd": "here", "mcpServers": []},
        }
        for i in range(n)
    ]
    return json.dumps(members).encode() + b"\n"


def test_trace_findings_one_per_rule_per_line_each_quote_once(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    data = _batch(2000, 1) + _batch(3, 5000)
    out = subprocess.run(
        [*PROXY, "--trace", str(trace), "--", *RAW_COPY, str(tmp_path / "got")],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    records = [json.loads(r) for r in trace.read_bytes().splitlines()]
    findings = [r["finding"] for r in records if "finding" in r]
    sent = [f for f in findings if f["dir"] == "to_agent" and f["rule"] != "unanswered"]
    # each line: before-initialize and relative-path, counted, not repeated
    assert [(f["rule"], f["count"]) for f in sent] == [
        ("before-initialize", 2000),
        ("relative-path", 2000),
        ("before-initialize", 3),
        ("relative-path", 3),
    ]
    unanswered = [f["count"] for f in findings if f["rule"] == "unanswered"]
    assert sorted(unanswered) == [3, 3, 2000, 2000]  # both ways: one per line
    quoted = [f["cite"] for f in findings if "quote" in f]
    assert len(quoted) == len(set(quoted))  # each spec line's quote once
    assert trace.stat().st_size < 3 * len(data)
    # read back, every finding has its quote
    assert all(f["quote"] for f in read_trace(trace).findings)


def test_trace_stops_at_max_trace_bytes_with_a_closing_record(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    line = b'{"jsonrpc":"2.0","method":"x","params":{"pad":"' + b"a" * 1000 + b'"}}\n'
    out = subprocess.run(
        [
            *PROXY,
            "--trace",
            str(trace),
            "--max-trace-bytes",
            "20000",
            "--",
            *RAW_COPY,
            str(tmp_path / "got"),
        ],
        input=line * 100,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0 and out.stdout == line * 100  # forwarding goes on
    records = [json.loads(r) for r in trace.read_bytes().splitlines()]
    assert records[-1]["limit"] == 20000 and "--max-trace-bytes" in records[-1]["event"]
    assert sum(len(r) + 1 for r in trace.read_bytes().splitlines()[:-1]) <= 20000


def test_view_shows_each_run_of_an_appended_trace_separately(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    for n in (1, 2):
        subprocess.run(
            [*PROXY, "--trace", str(trace), "--", *RAW_COPY, str(tmp_path / "got")],
            input=_batch(1, n * 100),
            capture_output=True,
            timeout=60,
            check=True,
        )
    runs = read_traces(trace)
    assert [[line.n for line in run.lines] for run in runs] == [[1, 2], [1, 2]]
    out = subprocess.run(
        [sys.executable, "-m", "acp_inspect", "view", str(trace)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    page = Path(out.stdout.strip()).read_text()
    assert 'id="run-1"' in page and 'id="run-2"' in page and "2 runs" in page
