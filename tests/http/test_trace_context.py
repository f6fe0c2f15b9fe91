"""Trace context across processes (the upstream RFD meta-propagation).

With telemetry on, every call and notification sent carries W3C
``traceparent`` / ``tracestate`` in its ``_meta`` (what the application put
there kept as it is) and every one received continues that trace: a trio
client and an asyncio agent in two processes, over stdio and over acp_http,
give one trace.  (What goes into ``_meta``, and nothing with telemetry off:
tests/runtime/test_telemetry.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _servers import serving

pytest.importorskip("opentelemetry.sdk")

HERE = Path(__file__).resolve().parent
PEERS = HERE / "traced_peers.py"
TIMEOUT = 120


def spans_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_client(target: str, trace_file: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(PEERS), "client", target],
        cwd=HERE,
        env={**os.environ, "ACP_TRACE_FILE": str(trace_file)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def assert_one_trace(spans: list[dict[str, Any]]) -> None:
    """One trace id; each handler's span a child of the peer's span that sent it."""
    assert {s["trace"] for s in spans} == {next(iter(spans))["trace"]}, spans
    sent = {
        (s["side"], s["span"]) for s in spans if s["name"] in ("acp.call", "acp.notify")
    }
    handled = [s for s in spans if s["name"] in ("acp.request", "acp.notification")]
    methods = {(s["side"], s["method"]) for s in handled}
    assert {
        ("agent", "initialize"),
        ("agent", "session/new"),
        ("agent", "session/prompt"),
        ("client", "session/update"),
        ("client", "session/request_permission"),
    } <= methods, methods
    for span in handled:
        peer = "client" if span["side"] == "agent" else "agent"
        assert (peer, span["parent"]) in sent, span


def test_a_trio_client_and_an_asyncio_agent_in_two_processes_share_one_trace(
    tmp_path: Path,
) -> None:
    trace_file = tmp_path / "spans.jsonl"
    run_client("stdio", trace_file)  # it spawns the agent, which appends its spans
    assert_one_trace(spans_of(trace_file))


def test_over_acp_http_the_client_and_the_served_agent_share_one_trace(
    tmp_path: Path,
) -> None:
    trace_file = tmp_path / "spans.jsonl"
    env = {"ACP_TRACE_FILE": str(trace_file)}
    with serving("hypercorn-asyncio", app="traced_peers:app", env=env) as url:
        run_client(url, trace_file)
    assert_one_trace(spans_of(trace_file))
