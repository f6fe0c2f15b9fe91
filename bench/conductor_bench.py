"""What each hop of a proxy chain costs, beside the agent alone.

    python bench/conductor_bench.py [--rounds N] [--quick] [--workload request|prompt|both]

One client (blocking ``os.read`` / ``os.write``, no event loop: the same
client as ``inspect_bench.py``) holds these connections to the same agent
program (``runtime_lean_agent.py``) at once and times round trips on them
interleaved, so the machine's noise falls on all alike:

- ``direct``: the agent itself;
- ``inspector``: ``python -m acp_inspect proxy -- AGENT`` (the reference
  figure: one subprocess proxy in the way);
- ``conductor``: ``python -m acp_conductor -- AGENT`` (the conductor alone);
- ``+1 in-process``, ``+2 in-process``: the conductor with one or two
  pass-through proxies in its own process, over the in-memory seam
  (``conductor_chain.py``);
- ``+1 subprocess``, ``+2 subprocess``: the conductor with one or two
  pass-through proxy programs (acp_trio's proxy API).

A hop's cost is the median per-round difference to the chain one hop
shorter (``+2 in-process`` against ``+1 in-process``, ``+1 in-process``
against ``conductor``, ...), halved per message: a round trip crosses each
hop twice (the request in, the answer out).  Messages per second are those
of the prompt workload (one request, five updates and the answer per turn).
The issue's goals: an in-process hop under 0.05 ms per message, a
subprocess hop under the inspector's added latency.  Timings are reported,
never asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from dataclasses import dataclass
from typing import Any

from inspect_bench import AGENT, CHUNKS, HERE, Connection, _ms, _one, _setup

#: The issue's goal for one in-process hop, per message (seconds).
IN_PROCESS_GOAL = 0.00005
PY = sys.executable
PROXY = (
    f"{PY} {os.path.join(os.path.dirname(HERE), 'tests', 'conductor', 'trio_proxy.py')}"
)


@dataclass(frozen=True)
class Row:
    """A connection and the one it is measured against (one hop shorter)."""

    name: str
    command: list[str]
    against: str | None


def rows() -> list[Row]:
    conductor = [PY, "-m", "acp_conductor"]
    in_process = [PY, os.path.join(HERE, "conductor_chain.py")]
    return [
        Row("direct", AGENT, None),
        Row("inspector", [PY, "-m", "acp_inspect", "proxy", "--", *AGENT], "direct"),
        Row("conductor", [*conductor, "--", *AGENT], "direct"),
        Row("+1 in-process", [*in_process, "1", "--", *AGENT], "conductor"),
        Row("+2 in-process", [*in_process, "2", "--", *AGENT], "+1 in-process"),
        Row("+1 subprocess", [*conductor, "--proxy", PROXY, "--", *AGENT], "conductor"),
        Row(
            "+2 subprocess",
            [*conductor, "--proxy", PROXY, "--proxy", PROXY, "--", *AGENT],
            "+1 subprocess",
        ),
    ]


def measure(workload: str, rounds: int, conns: list[Connection]) -> None:
    """``rounds`` round trips on every connection, interleaved, after a warm-up."""
    warmup = max(20, rounds // 20)
    for c in conns:
        c.times[workload] = []
    for i in range(warmup + rounds):
        k = i % len(conns)
        for c in conns[k:] + conns[:k]:  # rotate who goes first
            t = _one(c, workload, i)
            if i >= warmup:
                c.times[workload].append(t)


def table(
    workload: str, spec: list[Row], conns: dict[str, Connection]
) -> list[dict[str, Any]]:
    out = []
    for row in spec:
        ts = conns[row.name].times[workload]
        entry: dict[str, Any] = {"name": row.name, "median": statistics.median(ts)}
        if row.against is not None:
            base = conns[row.against].times[workload]
            added = statistics.median(t - b for t, b in zip(ts, base, strict=True))
            entry["against"] = row.against
            entry["added_per_message"] = added / 2
        if workload == "prompt":
            entry["messages_per_s"] = (CHUNKS + 2) / entry["median"]
        out.append(entry)
    return out


def show(workload: str, result: list[dict[str, Any]], rounds: int) -> None:
    what = (
        "session/new round trip (1 line each way)"
        if workload == "request"
        else f"session/prompt turn (1 line in, {CHUNKS} updates + response out)"
    )
    print(f"\n{what}, {rounds} rounds interleaved")
    print(
        f"{'connection':<15}{'median ms':>10}{'hop ms/msg':>12}  {'against':<15}{'msg/s':>8}"
    )
    for e in result:
        hop = _ms(e["added_per_message"]) if "against" in e else "-"
        rate = f"{e['messages_per_s']:.0f}" if "messages_per_s" in e else "-"
        print(
            f"{e['name']:<15}{_ms(e['median']):>10}{hop:>12}  "
            f"{e.get('against', '-'):<15}{rate:>8}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="150 rounds")
    parser.add_argument(
        "--workload", choices=("request", "prompt", "both"), default="both"
    )
    args, _ = parser.parse_known_args(argv)  # nox passes the other benches' flags too
    rounds = 150 if args.quick else args.rounds
    spec = rows()
    conns = {row.name: Connection(row.name, row.command) for row in spec}
    for c in conns.values():
        _setup(c)
    print(
        f"proxy chain hops: Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        "agent: runtime_lean_agent.py"
    )
    workloads = ("request", "prompt") if args.workload == "both" else (args.workload,)
    results = {}
    try:
        for workload in workloads:
            measure(workload, rounds, list(conns.values()))
            results[workload] = table(workload, spec, conns)
    finally:
        for c in conns.values():
            c.close()
    for workload, result in results.items():
        show(workload, result, rounds)
    for workload, result in results.items():
        by = {e["name"]: e for e in result}
        in_process = max(
            by[n]["added_per_message"] for n in ("+1 in-process", "+2 in-process")
        )
        subprocess_hop = max(
            by[n]["added_per_message"] for n in ("+1 subprocess", "+2 subprocess")
        )
        inspector = by["inspector"]["added_per_message"]
        print(
            f"\n{workload}: in-process hop {_ms(in_process)} ms/msg "
            f"({'under' if in_process < IN_PROCESS_GOAL else 'ABOVE'} the "
            f"{_ms(IN_PROCESS_GOAL)} ms goal); subprocess hop {_ms(subprocess_hop)} ms/msg "
            f"({'under' if subprocess_hop < inspector else 'ABOVE'} the inspector's "
            f"{_ms(inspector)} ms in this run); worst of each pair"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
