"""The same over-long line in acp_inspect as in every reader: discarded while it
streams (``acp_core.LineBuffer``), said in the one bounded log line of
``acp_core.judge_oversized``, the next line read as usual.  The proxy forwards
every byte and answers nothing (it is no side of the connection); the check
fails the case waiting (what the agent answered is not known).  Real processes,
real bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio
from acp_core import LineBuffer, Oversized, judge_oversized
from acp_inspect._driver import AgentUnderTest, Budget, LineTooLong
from acp_inspect._trace import read_trace

HERE = Path(__file__).resolve().parent
PROXY = [sys.executable, "-m", "acp_inspect", "proxy"]
LIMIT = 1000
#: an over-long request (id 7), then a line under the bound
BIG = (
    b'{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/","pad":"'
    + b"x" * 5000
    + b'"}}'
)
SMALL = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}'


def verdict_log() -> str:
    """What every reader logs for BIG over LIMIT."""
    [line] = LineBuffer(max_message_size=LIMIT).feed(BIG + b"\n")
    assert isinstance(line, Oversized)
    return judge_oversized(line, LIMIT).log


def test_an_over_long_line_is_refused_the_same_way_in_the_inspect_proxy(
    tmp_path: Path,
) -> None:
    got = tmp_path / "agent-received"
    trace = tmp_path / "trace.jsonl"
    data = BIG + b"\n" + SMALL + b"\n"
    out = subprocess.run(
        [
            *PROXY,
            "--max-line",
            str(LIMIT),
            "--trace",
            str(trace),
            "--",
            sys.executable,
            str(HERE / "raw_copy_agent.py"),
            str(got),
        ],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert got.read_bytes() == data and out.stdout == data  # forwarded, unanswered
    said = f"to_agent: {verdict_log()}: forwarded, not traced or checked"
    reported = out.stderr.decode().splitlines()
    assert "acp-inspect: " + said in reported  # one bounded line
    assert all(len(line) <= 300 for line in reported)
    record = read_trace(trace)
    assert said in [text for _, text in record.events]
    # the next line is read as usual, both ways
    assert [line.data for line in record.lines] == [SMALL, SMALL]


WRITTEN = BIG + b"\n" + SMALL + b"\n"
#: writes both lines in one write, then waits for the end of its input
AGENT = f"import os, sys; os.write(1, {WRITTEN!r}); sys.stdin.buffer.read()"


async def test_an_over_long_line_is_refused_the_same_way_in_the_inspect_check() -> None:
    agent = AgentUnderTest([sys.executable, "-c", AGENT], budget=Budget(max_line=LIMIT))
    async with trio.open_nursery() as nursery:
        await agent.run(nursery)
        with trio.fail_after(60), pytest.raises(LineTooLong):
            await agent.wait_for(lambda m: m.id == 7)  # the case waiting fails
        with trio.fail_after(60):
            while agent.lines_received < 1:  # the next line is read as usual
                await agent.wait_for(lambda m: True, respond=False)
        await agent.stop(0.5)
    notes = [e.text for e in agent.timeline if e.dir is None]
    assert f"from the agent: {verdict_log()}: not parsed" in notes
    assert agent.lines_received == 1
