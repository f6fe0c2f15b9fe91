"""Instructions per prompt turn, client and agent, under callgrind (load-independent).

    python bench/runtime_callgrind.py [--impl acp floor lean ...] [--n1 21] [--n2 221]
                                      [--side client|agent|both] [--keep DIR]

Wall and CPU time on this shared 2-core machine swing by more than the
effects being tuned; the number of
instructions a process executes does not.  For each implementation of
``runtime_bench.py``'s workload (initialize, session/new, then prompts each
answered after 5 ``agent_message_chunk`` updates) this runs, under
``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0``:

- the client side: ``bench/runtime_<impl>_client.py N`` (it spawns its own
  agent, which is not traced: valgrind does not follow children here);
- the agent side: ``bench/runtime_<impl>_agent.py`` driven by a blocking
  driver in this process (one prompt written, lines read up to its answer,
  updates checked, then ``--driver-pause`` seconds, default 5 ms, before
  the next prompt), the same bytes a client sends.  The pause stands for
  the client's own work: without it the driver, 50x faster than the traced
  agent, has always written the next prompt before the agent reads again,
  which no real client does.

Each side is run with ``--n1`` and ``--n2`` prompts; ``(I(n2) - I(n1)) /
(n2 - n1)`` is its instruction count per prompt turn, start-up and set-up
cancelled out.  The defaults (21 and 221) leave the first 20 turns out of
the difference: they still build decoders and warm caches, and the floor's
agent, whose reads depend on timing, counted 318k instructions per turn
from ``--n1 1`` against 175-201k from 21 (its ratio to ours looked 1.28x
where it is ~1.67x).  The table gives both sides, their sum and the sum's ratio
to the floor's (``floor`` must be among the implementations for that).

Time-based bounds are scaled by ``--time-scale`` (default 50, about how
much slower a Python process runs under callgrind): ``acp_trio``'s
``IO_POLL_INTERVAL`` and ``HOLD_SECONDS`` and ``acp_asyncio``'s
``YIELD_INTERVAL`` are multiplied by it before the script runs, so that
they fire about as often per instruction as in a real run (unscaled, a
200 us bound fires at every message under valgrind).

What this cannot see: the kernel (system calls count as the few user-space
instructions around them) and timing.  Under valgrind a process runs ~50x
slower, so its untraced peer has always written everything before it
reads: a turn's updates arrive in one read whether the agent wrote them in
one ``write`` or six.  Count system calls with ``strace -f -c`` and time
with ``runtime_bench.py`` for those.

``--keep DIR`` keeps the callgrind output files (``callgrind_annotate
DIR/<impl>-<side>-<n>.out``; Python frames show as the interpreter's C
functions).  Not run by the tests or by ``nox -s bench`` (a few minutes per
implementation).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from runtime_workload import CHUNKS, chunk_text, message_id, prompt_text  # noqa: E402

IMPLS = ("acp", "floor", "lean", "asyncio")
_COLLECTED = re.compile(rb"Collected\s*:\s*(\d+)")


def _env() -> dict[str, str]:
    paths = [os.path.join(ROOT, p) for p in ("generated", "runtime", "codegen")]
    return {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": os.pathsep.join(paths),
    }


#: Run before the script: scale the runtimes' time-based bounds (see above).
_SHIM = """
import importlib, runpy, sys
scale = float(sys.argv[1])
for module, names in (
    ("acp_trio._schedule", ("IO_POLL_INTERVAL",)),
    ("acp_trio._connection", ("IO_POLL_INTERVAL",)),
    ("acp_trio._framing", ("HOLD_SECONDS",)),
    ("acp_asyncio._connection", ("YIELD_INTERVAL",)),
):
    try:
        mod = importlib.import_module(module)
    except ImportError:
        continue
    for name in names:
        if hasattr(mod, name):
            setattr(mod, name, getattr(mod, name) * scale)
sys.argv = sys.argv[2:]
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
runpy.run_path(sys.argv[0], run_name="__main__")
"""

#: Set by main() from --time-scale and --driver-pause.
_time_scale = 50.0
_driver_pause = 0.005


def _valgrind(out_file: str) -> list[str]:
    return [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        sys.executable,
        "-c",
        _SHIM,
        str(_time_scale),
    ]


def _collected(stderr: bytes, what: str) -> int:
    found = _COLLECTED.findall(stderr)
    if not found:
        raise RuntimeError(f"{what}: no callgrind total in:\n{stderr.decode()[-2000:]}")
    return int(found[-1])


def _out_file(keep: str | None, impl: str, side: str, n: int) -> str:
    if keep is None:
        return os.devnull
    return os.path.join(keep, f"{impl}-{side}-{n}.out")


def client_instructions(impl: str, n: int, keep: str | None) -> int:
    """Instructions of the client process of ``impl`` running ``n`` prompts."""
    script = os.path.join(HERE, f"runtime_{impl}_client.py")
    proc = subprocess.run(
        [*_valgrind(_out_file(keep, impl, "client", n)), script, str(n)],
        capture_output=True,
        env=_env(),
        cwd=HERE,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{impl} client exited {proc.returncode}: {proc.stderr!r}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["notifications"] != CHUNKS * n or result["order_errors"]:
        raise RuntimeError(f"{impl} client: updates lost or out of order: {result}")
    return _collected(proc.stderr, f"{impl} client")


def _send(pipe: IO[bytes], ident: int, method: str, params: Any) -> None:
    msg = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
    pipe.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], ident: int, turn: int | None) -> Any:
    """Read lines up to the answer to ``ident``, checking a turn's updates."""
    k = 0
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("the agent closed its output")
        msg = json.loads(line)
        if "method" in msg:
            update = msg["params"]["update"]
            if (
                turn is None
                or update.get("messageId") != message_id(turn)
                or update["content"]["text"] != chunk_text(k)
            ):
                raise RuntimeError(f"unexpected update {msg}")
            k += 1
        elif msg.get("id") == ident:
            if turn is not None and k != CHUNKS:
                raise RuntimeError(f"turn {turn}: {k} updates before its answer")
            return msg["result"]


def agent_instructions(impl: str, n: int, keep: str | None) -> int:
    """Instructions of the agent process of ``impl`` answering ``n`` prompts."""
    script = os.path.join(HERE, f"runtime_{impl}_agent.py")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [*_valgrind(_out_file(keep, impl, "agent", n)), script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=_env(),
            cwd=HERE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        _send(
            proc.stdin,
            0,
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": True,
                },
                "clientInfo": {"name": "callgrind-driver", "version": "0.1.0"},
            },
        )
        _answer(proc.stdout, 0, None)
        _send(proc.stdin, 1, "session/new", {"cwd": ROOT, "mcpServers": []})
        sid = _answer(proc.stdout, 1, None)["sessionId"]
        for i in range(n):
            prompt = [{"type": "text", "text": prompt_text(i)}]
            _send(
                proc.stdin,
                2 + i,
                "session/prompt",
                {"sessionId": sid, "prompt": prompt},
            )
            _answer(proc.stdout, 2 + i, i)
            time.sleep(_driver_pause)  # the client's own work (see above)
        proc.stdin.close()
        rc = proc.wait()
        proc.stdout.close()
        err.seek(0)
        stderr = err.read()
    if rc != 0:
        raise RuntimeError(f"{impl} agent exited {rc}: {stderr!r}")
    return _collected(stderr, f"{impl} agent")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impl", nargs="+", choices=IMPLS, default=["acp", "floor"])
    parser.add_argument("--side", choices=("client", "agent", "both"), default="both")
    parser.add_argument("--n1", type=int, default=21)
    parser.add_argument("--n2", type=int, default=221)
    parser.add_argument("--keep", metavar="DIR", help="keep the callgrind output files")
    parser.add_argument(
        "--time-scale",
        type=float,
        default=50.0,
        help="multiply the runtimes' time-based bounds by this (default 50)",
    )
    parser.add_argument(
        "--driver-pause",
        type=float,
        default=0.005,
        help="seconds the agent's driver waits after each answer (default 0.005)",
    )
    args = parser.parse_args()
    global _time_scale, _driver_pause
    _time_scale = args.time_scale
    _driver_pause = args.driver_pause
    if args.n2 <= args.n1:
        parser.error("--n2 must be larger than --n1")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    from runtime_bench import compile_bytecode

    compile_bytecode()  # as runtime_bench does: no process compiles its imports
    sides = ("client", "agent") if args.side == "both" else (args.side,)
    measure = {"client": client_instructions, "agent": agent_instructions}
    span = args.n2 - args.n1
    table: dict[str, dict[str, float]] = {}
    for impl in args.impl:
        row = table[impl] = {}
        for side in sides:
            low = measure[side](impl, args.n1, args.keep)
            high = measure[side](impl, args.n2, args.keep)
            row[side] = (high - low) / span
            print(
                f"  {impl:8s} {side:6s} {row[side] / 1000:8.1f} k instructions/turn",
                flush=True,
            )
        row["total"] = sum(row[s] for s in sides)
    print()
    print(
        f"instructions per prompt turn ({args.n2} minus {args.n1} prompts, "
        f"PYTHONHASHSEED=0, user space only):"
    )
    floor = table.get("floor")
    for impl, row in table.items():
        parts = "  ".join(f"{s} {row[s] / 1000:7.1f} k" for s in sides)
        ratio = ""
        if floor is not None:
            ratio = (
                "  ("
                + ", ".join(f"{s} {row[s] / floor[s]:.2f}x" for s in (*sides, "total"))
                + " of floor)"
            )
        print(f"  {impl:8s} {parts}  total {row['total'] / 1000:7.1f} k{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
