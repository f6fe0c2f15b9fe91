"""The proxy over real pipes: bytes unchanged both ways, findings on stderr and
in the trace, the agent's process group ended with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from acp_inspect._process import group_alive
from acp_inspect._trace import read_trace

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROXY = [sys.executable, "-m", "acp_inspect", "proxy"]
ECHO_AGENT = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]


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
        [*PROXY, "--trace", str(trace), "--", *ECHO_AGENT],
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
            "--grace",
            "0.5",
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
    deadline = time.monotonic() + 20
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pids = json.loads(pidfile.read_text())
    assert proc.stdin is not None
    proc.stdin.close()  # the editor goes away
    assert proc.wait(timeout=20) == 0
    assert not group_alive(pids["agent"])  # the grandchild holding stdout is gone too


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
