"""The two-process workload shared by the runtime benchmark's programs.

Every implementation (acp_trio, the official SDK, the untyped msgspec floor)
exchanges the same messages in the same order:

    -> initialize      {protocolVersion: 1, clientCapabilities: {fs, terminal}, clientInfo}
    <- result          {protocolVersion: 1, agentCapabilities: {...}, agentInfo}
    -> session/new     {cwd, mcpServers: []}
    <- result          {sessionId}
    N times:
    -> session/prompt  {sessionId, prompt: [{type: text, text: "prompt #i: say hi"}]}
    <- session/update  x CHUNKS: agent_message_chunk, text chunk_text(k), messageId "msg_<i>"
    <- result          {stopReason: "end_turn"}

Each client checks every update with :class:`OrderCheck` (right turn, right
chunk, exact text) and prints one JSON line (:func:`report`).
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from typing import Any

CHUNKS = 5
#: ~80 characters, as in official_sdk_agent.py.
CHUNK_TEXT = (
    "The quick brown fox jumps over the lazy dog while the agent streams its answer."
)
CLIENT_NAME = "runtime-bench-client"
AGENT_NAME = "runtime-bench-agent"
VERSION = "0.1.0"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def use_repo_packages() -> None:
    """Make ``acp_schema`` / ``acp_trio`` importable from this checkout."""
    for folder in ("runtime", "generated"):
        path = os.path.join(ROOT, folder)
        if path not in sys.path:
            sys.path.insert(0, path)


def chunk_text(k: int) -> str:
    return f"[{k}] {CHUNK_TEXT}"


def message_id(turn: int) -> str:
    return f"msg_{turn}"


def prompt_text(turn: int) -> str:
    return f"prompt #{turn}: say hi"


class OrderCheck:
    """Counts updates and checks each is the next one expected.

    The client calls :meth:`turn` before sending prompt ``i``; every update
    must then carry ``messageId`` ``msg_<i>`` and the texts ``[0] ...`` to
    ``[4] ...`` in that order; :meth:`end_turn` checks all of them arrived.
    """

    __slots__ = ("count", "errors", "first_error", "k", "mid", "texts")

    def __init__(self) -> None:
        self.texts = [chunk_text(k) for k in range(CHUNKS)]
        self.count = 0
        self.errors = 0
        self.first_error: str | None = None
        self.mid: str | None = None
        self.k = CHUNKS

    def turn(self, i: int) -> None:
        self.end_turn()
        self.mid = message_id(i)
        self.k = 0

    def update(self, mid: Any, text: Any) -> None:
        k = self.k
        if mid != self.mid or k >= CHUNKS or text != self.texts[k]:
            self._fail(
                f"update #{self.count}: got ({mid!r}, {text!r:.20}) at chunk {k}"
            )
        self.k = k + 1
        self.count += 1

    def end_turn(self) -> None:
        if self.k != CHUNKS:
            self._fail(f"turn {self.mid} ended after {self.k} updates")
            self.k = CHUNKS

    def _fail(self, what: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = what


def peak_rss_kb(pid: int | None = None) -> int:
    """The peak RSS (VmHWM) of process ``pid`` (default: this one), in KiB.

    Read from ``/proc``: ``getrusage`` is no use for the agent, because a child's
    ``ru_maxrss`` keeps the high-water mark of the memory it was forked from (the
    client's), so it would report the larger of the two processes.
    """
    try:
        with open(f"/proc/{pid or 'self'}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if pid is None else 0


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) used so far by process ``pid`` (default: this one).

    Summed over the process's threads from ``/proc/<pid>/task/*/schedstat``
    (nanoseconds); ``nan`` where that is unavailable.
    """
    if pid is None:
        return time.process_time()
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return math.nan
    return total / 1e9


class CpuMeter:
    """CPU seconds of this process and of the agent over the prompt phase."""

    def __init__(self, agent_pid: int) -> None:
        self.agent_pid = agent_pid
        self.client = self.agent = math.nan
        self.agent_rss_kb = 0

    def start(self) -> None:
        self._client0 = cpu_seconds()
        self._agent0 = cpu_seconds(self.agent_pid)

    def stop(self) -> None:
        self.client = cpu_seconds() - self._client0
        self.agent = cpu_seconds(self.agent_pid) - self._agent0
        self.agent_rss_kb = peak_rss_kb(self.agent_pid)  # still running: its own VmHWM


def report(
    impl: str,
    n: int,
    check: OrderCheck,
    seconds: float,
    prompt_seconds: float,
    cpu: CpuMeter,
) -> None:
    """Print the client's one JSON line (the agent's figures come from `cpu`)."""
    check.end_turn()
    print(
        json.dumps(
            {
                "impl": impl,
                "prompts": n,
                "notifications": check.count,
                "order_errors": check.errors,
                "first_error": check.first_error,
                "seconds": round(seconds, 4),
                "prompt_seconds": round(prompt_seconds, 6),
                "client_cpu_seconds": round(cpu.client, 6),
                "agent_cpu_seconds": round(cpu.agent, 6),
                "client_rss_kb": peak_rss_kb(),
                "agent_rss_kb": cpu.agent_rss_kb,
            }
        ),
        flush=True,
    )
