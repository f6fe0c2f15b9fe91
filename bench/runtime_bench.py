"""Two-process runtime benchmark: acp_trio vs the official SDK vs a bare floor.

    python bench/runtime_bench.py [--prompts N] [--quick] [--repeat R]

The same workload (runtime_workload.py: initialize, session/new, then N
prompts, each answered after 5 agent_message_chunk updates) over stdio pipes,
client and agent in separate processes, for:

- ``acp_trio``: runtime_acp_client.py -> runtime_acp_agent.py
  (``acp_trio.spawn_agent`` / ``acp_trio.serve_agent_stdio``, typed v1 structs);
- ``acp_asyncio``: runtime_asyncio_client.py -> runtime_asyncio_agent.py
  (``acp_asyncio.spawn_agent`` / ``acp_asyncio.serve_agent_stdio``: the same
  engine, acp_core, on asyncio; the same typed agent and client);
- ``official_sdk``: official_sdk_client.py -> official_sdk_agent.py
  (``agent-client-protocol==0.12.1``, pydantic, asyncio);
- ``floor``: runtime_floor_client.py -> runtime_floor_agent.py (a bare trio
  loop, ``msgspec.json.decode``/``encode`` of dicts, no typing, no routing);
- ``lean``: runtime_lean_client.py -> runtime_lean_agent.py (the floor's
  loop calling ``os.read`` / ``os.write`` directly, waiting in trio only
  when a pipe would block: the least a trio program spends here).

``--baseline PATH`` adds ``acp_trio@base``: the acp_trio client and agent of
another checkout (``PATH/bench``, importing ``PATH``'s runtime), interleaved
with this tree's, to compare two versions of the runtime in one run
(``git worktree add /tmp/base main``; use ``--repeat 7`` or more).

This harness only starts each client as a subprocess (so the client's RSS is
its own); the client spawns its agent, times the N prompts (setup excluded),
checks that all 5N updates arrived in order, and reports its own peak RSS
(VmHWM) and the agent's (its VmHWM, read from ``/proc`` at the end of the
prompts).  Each implementation runs ``--repeat`` times, interleaved; the table
shows the best throughput and the lowest peak RSS.  Timings are reported, never asserted;
a run that lost or reordered an update fails the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
CHUNKS = 5

IMPLS: dict[str, str] = {
    "acp_trio": os.path.join(HERE, "runtime_acp_client.py"),
    "acp_asyncio": os.path.join(HERE, "runtime_asyncio_client.py"),
    "official_sdk": os.path.join(HERE, "official_sdk_client.py"),
    "floor": os.path.join(HERE, "runtime_floor_client.py"),
    "lean": os.path.join(HERE, "runtime_lean_client.py"),
}
BASE = "acp_trio@base"

# Targets from issue 3.
SDK_SPEEDUP_TARGET = 5.0  # acp_trio prompts/s >= 5x the SDK's
SDK_RSS_TARGET = 0.5  # acp_trio peak RSS <= half the SDK's, per process
FLOOR_TARGET = 2.0  # floor prompts/s / acp_trio prompts/s <= 2
# Target from issue 10: acp_asyncio >= 2x the SDK's prompts/s, and <= half its
# CPU per prompt turn (client + agent), in the same run.
ASYNCIO_SDK_TARGET = 2.0
# Target from issue 10: acp_trio's CPU per prompt turn (client + agent) <= 1.35x
# the floor's, in the same run.
TRIO_FLOOR_CPU_TARGET = 1.35


class BenchError(Exception):
    pass


def compile_bytecode() -> None:
    """Write .pyc files first, as a real install has them.

    This machine may set PYTHONDONTWRITEBYTECODE, which would make every
    process compile acp_schema (and the rest) from source: slower start-up
    and a higher peak RSS that a user would never see.
    """
    import compileall
    import importlib.util

    from runtime_workload import use_repo_packages

    use_repo_packages()
    compileall.compile_dir(HERE, quiet=1, maxlevels=0)
    for name in ("acp_schema", "acp_trio", "acp_asyncio", "acp", "msgspec", "trio"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            compileall.compile_dir(os.path.dirname(spec.origin), quiet=1)


def baseline_rss_mb(code: str) -> float:
    """Peak RSS (MB) of a fresh interpreter that runs `code` and exits.

    The floor under every process of the benchmark: ``import trio`` alone
    shows what no trio runtime can go below, whatever it does per message.
    """
    from runtime_workload import ROOT

    repo = [os.path.join(ROOT, folder) for folder in ("runtime", "generated")]
    # VmHWM, not ru_maxrss: a child's ru_maxrss keeps the high-water mark of
    # the process it was forked from (this one).
    probe = (
        f"{code}\n"
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(repo)},
    ).stdout
    return int(out) / 1024


def run_client(impl: str, n: int, timeout: float) -> dict[str, Any]:
    """One client process (it spawns its agent); its JSON report, checked."""
    cmd = [sys.executable, IMPLS[impl], str(n)]
    proc = subprocess.run(
        cmd, stdout=subprocess.PIPE, text=True, timeout=timeout, check=False
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise BenchError(f"{impl}: {' '.join(cmd)} exited {proc.returncode}")
    result: dict[str, Any] = json.loads(lines[-1])
    expected = CHUNKS * n
    if result["prompts"] != n or result["notifications"] != expected:
        raise BenchError(
            f"{impl}: {result['notifications']} updates for {result['prompts']} "
            f"prompts, expected {expected}"
        )
    if result["order_errors"]:
        raise BenchError(
            f"{impl}: {result['order_errors']} updates out of order or altered "
            f"(first: {result['first_error']})"
        )
    if not result["client_rss_kb"] or not result["agent_rss_kb"]:
        raise BenchError(f"{impl}: no peak RSS reported")
    return result


def summarize(runs: list[dict[str, Any]]) -> dict[str, float]:
    best = min(r["prompt_seconds"] for r in runs)
    n = runs[0]["prompts"]
    walls = sorted(r["prompt_seconds"] for r in runs)
    cpus = sorted(r["client_cpu_seconds"] + r["agent_cpu_seconds"] for r in runs)
    return {
        "median_us": walls[len(walls) // 2] / n * 1e6,
        "cpu_us": cpus[0] / n * 1e6,
        "median_cpu_us": cpus[len(cpus) // 2] / n * 1e6,
        "prompts_s": n / best,
        "notifications_s": CHUNKS * n / best,
        "us_per_prompt": best / n * 1e6,
        "client_cpu_us": min(r["client_cpu_seconds"] for r in runs) / n * 1e6,
        "agent_cpu_us": min(r["agent_cpu_seconds"] for r in runs) / n * 1e6,
        "client_mb": min(r["client_rss_kb"] for r in runs) / 1024,
        "agent_mb": min(r["agent_rss_kb"] for r in runs) / 1024,
        "spread": max(r["prompt_seconds"] for r in runs) / best,
    }


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=None, help="default 2000")
    parser.add_argument("--quick", action="store_true", help="300 prompts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per impl")
    parser.add_argument(
        "--only", action="append", choices=sorted(IMPLS), help="run only these"
    )
    parser.add_argument(
        "--baseline",
        metavar="PATH",
        help="also run the acp_trio client of the checkout at PATH (acp_trio@base)",
    )
    args = parser.parse_args()
    n = args.prompts or (300 if args.quick else 2000)
    impls = [i for i in IMPLS if not args.only or i in args.only]
    if args.baseline:
        client = os.path.join(
            os.path.abspath(args.baseline),
            "bench",
            IMPLS["acp_trio"].rsplit(os.sep, 1)[1],
        )
        if not os.path.exists(client):
            parser.error(f"no {client}")
        IMPLS[BASE] = client
        impls.insert(impls.index("acp_trio") + 1 if "acp_trio" in impls else 0, BASE)
    timeout = 60 + n * 0.02

    compile_bytecode()
    print(
        f"runtime benchmark: {n} prompts x {CHUNKS} updates, best of {args.repeat}; "
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs"
    )
    runs: dict[str, list[dict[str, Any]]] = {i: [] for i in impls}
    try:
        for rep in range(args.repeat):
            for impl in impls:  # interleaved, so drift hits all alike
                r = run_client(impl, n, timeout)
                runs[impl].append(r)
                print(
                    f"  run {rep + 1} {impl:13s} {n / r['prompt_seconds']:8.0f} prompts/s"
                    f"  client {r['client_rss_kb'] / 1024:5.1f} MB"
                    f"  agent {r['agent_rss_kb'] / 1024:5.1f} MB",
                    flush=True,
                )
    except (BenchError, subprocess.TimeoutExpired) as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 1

    stats = {i: summarize(runs[i]) for i in impls}
    print()
    header = (
        f"{'implementation':14s} {'prompts/s':>10s} {'notifs/s':>10s} "
        f"{'us/prompt':>10s} {'median':>8s} {'client CPU':>11s} {'agent CPU':>10s} "
        f"{'CPU/prompt':>11s} {'client MB':>10s} {'agent MB':>9s} {'spread':>7s}"
    )
    print(header)
    print("-" * len(header))
    for impl, s in stats.items():
        print(
            f"{impl:14s} {s['prompts_s']:10.0f} {s['notifications_s']:10.0f} "
            f"{s['us_per_prompt']:10.1f} {s['median_us']:8.1f} "
            f"{s['client_cpu_us']:9.1f}us {s['agent_cpu_us']:8.1f}us "
            f"{s['cpu_us']:9.1f}us {s['client_mb']:10.1f} {s['agent_mb']:9.1f} "
            f"{s['spread']:6.2f}x"
        )
    print(
        f"(all {CHUNKS * n} updates of every run received in order; throughput and "
        "CPU per prompt turn over the N prompts only, setup excluded; us/prompt "
        "best run, median the median run; CPU/prompt = client + agent, best run; "
        "peak RSS = VmHWM of the whole process; spread = slowest/fastest run)"
    )
    cpu_rows = [i for i in ("acp_trio", BASE, "floor", "lean") if i in stats]
    if len(cpu_rows) > 1:
        print()
        print("CPU per prompt turn, client + agent (best / median run):")
        ref = stats[cpu_rows[-1]]["cpu_us"]
        for impl in cpu_rows:
            s = stats[impl]
            print(
                f"  {impl:14s} {s['cpu_us']:7.1f} / {s['median_cpu_us']:7.1f} us"
                f"  ({s['cpu_us'] / ref:.2f}x {cpu_rows[-1]})"
            )
    if BASE in stats and "acp_trio" in stats:
        ours, base = stats["acp_trio"], stats[BASE]
        print()
        print(
            f"acp_trio vs acp_trio@base ({args.baseline}): wall best "
            f"{ours['us_per_prompt']:.1f} vs {base['us_per_prompt']:.1f} us "
            f"({ours['us_per_prompt'] / base['us_per_prompt']:.3f}x), median "
            f"{ours['median_us']:.1f} vs {base['median_us']:.1f} us "
            f"({ours['median_us'] / base['median_us']:.3f}x); CPU best "
            f"{ours['cpu_us']:.1f} vs {base['cpu_us']:.1f} us "
            f"({ours['cpu_us'] / base['cpu_us']:.3f}x), median "
            f"{ours['median_cpu_us']:.1f} vs {base['median_cpu_us']:.1f} us "
            f"({ours['median_cpu_us'] / base['median_cpu_us']:.3f}x)"
        )

    ours = stats.get("acp_trio")
    sdk = stats.get("official_sdk")
    floor = stats.get("floor")
    aio = stats.get("acp_asyncio")
    if aio is not None and sdk is not None:
        speedup = aio["prompts_s"] / sdk["prompts_s"]
        cpu = sdk["cpu_us"] / aio["cpu_us"]
        ok = speedup >= ASYNCIO_SDK_TARGET and cpu >= ASYNCIO_SDK_TARGET
        print()
        print(
            f"acp_asyncio vs official SDK (both asyncio): {speedup:.2f}x prompts/s, "
            f"{cpu:.2f}x less CPU per prompt turn ({aio['cpu_us']:.1f} vs "
            f"{sdk['cpu_us']:.1f} us; target >= {ASYNCIO_SDK_TARGET:g}x each: "
            f"{verdict(ok)})"
        )
    if ours is None:
        return 0
    if floor is not None:
        best = ours["cpu_us"] / floor["cpu_us"]
        median = ours["median_cpu_us"] / floor["median_cpu_us"]
        print()
        print(
            f"acp_trio vs floor CPU per prompt turn: best {best:.2f}x, median "
            f"{median:.2f}x (target <= {TRIO_FLOOR_CPU_TARGET:g}x: "
            f"{verdict(max(best, median) <= TRIO_FLOOR_CPU_TARGET)})"
        )
    print()
    if sdk is not None:
        speedup = ours["prompts_s"] / sdk["prompts_s"]
        client_rss = ours["client_mb"] / sdk["client_mb"]
        agent_rss = ours["agent_mb"] / sdk["agent_mb"]
        print(
            f"acp_trio vs official SDK: {speedup:.2f}x prompts/s "
            f"(target >= {SDK_SPEEDUP_TARGET:g}x: {verdict(speedup >= SDK_SPEEDUP_TARGET)})"
        )
        print(
            f"  peak RSS client {client_rss:.2f}x, agent {agent_rss:.2f}x of the SDK's "
            f"(target <= {SDK_RSS_TARGET:g}: client "
            f"{verdict(client_rss <= SDK_RSS_TARGET)}, agent "
            f"{verdict(agent_rss <= SDK_RSS_TARGET)})"
        )
    if sdk is not None and floor is not None:
        reach = floor["prompts_s"] / sdk["prompts_s"]
        print(
            f"  the floor itself runs {reach:.2f}x the SDK's prompts/s: "
            + (
                "the 5x target lies above the floor here"
                if reach < SDK_SPEEDUP_TARGET
                else "the 5x target is within reach of the floor"
            )
        )
    if sdk is not None:
        budget = SDK_RSS_TARGET * min(sdk["client_mb"], sdk["agent_mb"])
        for label, code in (
            ("python -c pass", "pass"),
            ("import trio", "import trio"),
            ("import acp_trio, acp_schema.v1", "import acp_trio, acp_schema.v1"),
        ):
            mb = baseline_rss_mb(code)
            print(
                f"  peak RSS of a bare `{label}` process: {mb:.1f} MB "
                f"({'above' if mb > budget else 'within'} the {budget:.1f} MB budget)"
            )
    if floor is not None:
        gap = floor["prompts_s"] / ours["prompts_s"]
        print(
            f"floor vs acp_trio: the floor is {gap:.2f}x faster "
            f"(target <= {FLOOR_TARGET:g}x: {verdict(gap <= FLOOR_TARGET)}); "
            f"acp_trio adds {ours['us_per_prompt'] - floor['us_per_prompt']:.0f} us "
            "per prompt turn"
        )
        print(
            f"  peak RSS client {ours['client_mb'] / floor['client_mb']:.2f}x, "
            f"agent {ours['agent_mb'] / floor['agent_mb']:.2f}x of the floor's"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
