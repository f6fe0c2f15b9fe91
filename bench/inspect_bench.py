"""The latency ``python -m acp_inspect proxy`` adds, beside a direct connection.

    python bench/inspect_bench.py [--rounds N] [--quick] [--workload request|prompt|both]

One client (blocking ``os.read`` / ``os.write``, no event loop) holds three
connections to the same agent program (runtime_lean_agent.py: untyped
msgspec, the least an agent spends) at once:

- ``direct``: the agent itself;
- ``proxy``: ``python -m acp_inspect proxy -- AGENT``;
- ``proxy+trace``: the same with ``--trace FILE`` (every line recorded).

After ``initialize`` and ``session/new`` on each, it times round trips,
interleaved: round ``i`` sends one message on each connection in turn (the
order rotates every round), so the machine's noise falls on all three
alike.  Two workloads:

- ``request``: a ``session/new`` request and its response (one line each
  way);
- ``prompt``: a ``session/prompt`` turn (one line in, five
  ``session/update`` notifications and the response out, written by the
  agent at once): the time until the response arrived.

Either round trip crosses the proxy twice (the request's chunk in, the
answer's chunk out), so the added latency per message is half the added
round trip.

The table gives each connection's median and 90th percentile round trip
and the median *added* latency (the median of the per-round differences to
``direct``), per round trip and per message crossing the proxy.  The issue's
target is a median under 0.2 ms per message on this machine.  Timings are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AGENT = [sys.executable, os.path.join(HERE, "runtime_lean_agent.py")]
#: Median added latency per message the issue asks for (seconds).
TARGET = 0.0002
CHUNKS = 5  # runtime_lean_agent.py's updates per prompt

_encode = msgspec.json.encode
_decode = msgspec.json.decode


def _env() -> dict[str, str]:
    """The proxy imports this checkout's acp_inspect (nox installs it too)."""
    env = dict(os.environ)
    paths = [os.path.join(ROOT, d) for d in ("generated", "runtime")]
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    return env


@dataclass
class Connection:
    """One agent (or proxy) process and the client's side of its pipes."""

    name: str
    command: list[str]
    process: subprocess.Popen[bytes] = field(init=False)
    buf: bytearray = field(default_factory=bytearray)
    next_id: int = 0
    times: dict[str, list[float]] = field(default_factory=dict[str, list[float]])

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(),
            bufsize=0,
        )

    def call(self, method: str, params: Any) -> tuple[Any, int]:
        """Send a request, read up to its response: (result, lines read)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        ident = self.next_id
        self.next_id += 1
        line = _encode(
            {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        )
        os.write(self.process.stdin.fileno(), line + b"\n")
        rx = self.process.stdout.fileno()
        lines = 0
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                data = os.read(rx, 65536)
                if not data:
                    raise RuntimeError(f"{self.name}: the agent closed its stdout")
                self.buf += data
                continue
            msg = _decode(bytes(self.buf[:i]))
            del self.buf[: i + 1]
            lines += 1
            if msg.get("id") == ident and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{self.name}: {method} failed: {msg['error']}")
                return msg["result"], lines

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _setup(conn: Connection) -> None:
    conn.start()
    conn.call(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": False}},
            "clientInfo": {"name": "inspect-bench", "version": "0.1.0"},
        },
    )
    conn.call("session/new", {"cwd": ROOT, "mcpServers": []})


def _one(conn: Connection, workload: str, i: int) -> float:
    if workload == "request":
        t0 = time.perf_counter()
        conn.call("session/new", {"cwd": ROOT, "mcpServers": []})
        return time.perf_counter() - t0
    params = {
        "sessionId": "sess_bench",
        "prompt": [{"type": "text", "text": f"prompt #{i}: say hi"}],
    }
    t0 = time.perf_counter()
    _, lines = conn.call("session/prompt", params)
    elapsed = time.perf_counter() - t0
    if lines != CHUNKS + 1:
        raise RuntimeError(f"{conn.name}: {lines} lines for a turn")
    return elapsed


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


def run(workload: str, rounds: int, conns: list[Connection]) -> dict[str, Any]:
    """Time ``rounds`` round trips on every connection, interleaved."""
    for c in conns:
        c.times[workload] = []
    warmup = max(20, rounds // 20)
    for i in range(warmup + rounds):
        k = i % len(conns)
        for c in conns[k:] + conns[:k]:  # rotate who goes first
            t = _one(c, workload, i)
            if i >= warmup:
                c.times[workload].append(t)
    direct = conns[0].times[workload]
    out: dict[str, Any] = {"workload": workload, "rounds": rounds, "rows": []}
    for c in conns:
        ts = c.times[workload]
        row: dict[str, Any] = {
            "name": c.name,
            "median": statistics.median(ts),
            "p90": statistics.quantiles(ts, n=10)[-1],
        }
        if c is not conns[0]:
            added = statistics.median(t - d for t, d in zip(ts, direct, strict=True))
            row["added"] = added
            # a round trip crosses the proxy twice: the request's chunk in,
            # the answer's chunk out (the turn's six lines come as one write)
            row["added_per_message"] = added / 2
        out["rows"].append(row)
    return out


def _print(result: dict[str, Any]) -> None:
    what = (
        "session/new round trip (1 line each way)"
        if result["workload"] == "request"
        else f"session/prompt turn (1 line in, {CHUNKS} updates + response out)"
    )
    print(f"\n{what}, {result['rounds']} rounds interleaved")
    print(
        f"{'connection':<14}{'median ms':>11}{'p90 ms':>10}"
        f"{'added ms':>11}{'per msg ms':>12}"
    )
    for row in result["rows"]:
        added = _ms(row["added"]) if "added" in row else "-"
        per = _ms(row["added_per_message"]) if "added" in row else "-"
        print(
            f"{row['name']:<14}{_ms(row['median']):>11}{_ms(row['p90']):>10}"
            f"{added:>11}{per:>12}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="200 rounds")
    parser.add_argument(
        "--workload", choices=("request", "prompt", "both"), default="both"
    )
    parser.add_argument("--json", action="store_true", help="print JSON too")
    args, _ = parser.parse_known_args(argv)  # nox passes the codec bench's flags too
    rounds = 200 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        proxy = [sys.executable, "-m", "acp_inspect", "proxy"]
        conns = [
            Connection("direct", AGENT),
            Connection("proxy", [*proxy, "--", *AGENT]),
            Connection(
                "proxy+trace",
                [*proxy, "--trace", os.path.join(tmp, "trace.jsonl"), "--", *AGENT],
            ),
        ]
        for c in conns:
            _setup(c)
        print(
            f"acp_inspect proxy latency: Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs; agent: runtime_lean_agent.py"
        )
        try:
            workloads = (
                ("request", "prompt") if args.workload == "both" else (args.workload,)
            )
            results = [run(w, rounds, conns) for w in workloads]
        finally:
            for c in conns:
                c.close()
    for result in results:
        _print(result)
        if args.json:
            print(msgspec.json.encode(result).decode())
    per_message = max(
        row["added_per_message"]
        for result in results
        for row in result["rows"]
        if "added" in row
    )
    verdict = "under" if per_message < TARGET else "ABOVE"
    print(
        f"\nmedian added latency per message: {_ms(per_message)} ms, "
        f"{verdict} the {_ms(TARGET)} ms target (worst of the rows above)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
