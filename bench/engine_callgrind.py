"""Instructions per notification of the engine alone, counted by callgrind.

    python bench/engine_callgrind.py [--n1 1000] [--n2 6000] [--chunk-lines 64] [MODE ...]

Wall-clock figures swing on a shared machine; instruction counts do not.
Each MODE runs ``bench/engine_bench.py``'s workload in a fresh
``valgrind --tool=callgrind`` process (``PYTHONHASHSEED=0``) twice, with
``--n1`` and ``--n2`` notifications; the difference divided by
``n2 - n1`` is the cost of one notification, setup and warm-up cancelled
out, less the same for a run that only builds the input (mode ``none``).  Modes (default ``floor engine``):

- ``floor``, ``engine``: ``engine_bench``'s two sides, whole;
- ``onepass``: a floor that knows every line is a ``session/update`` and
  decodes each in one pass (envelope and params in one Struct), for reference:
  not a receiver (it cannot tell methods apart), so not the target's floor;
- ``feed``: ``Engine.receive_data`` only (framing);
- ``produce``: ``receive_data`` and ``next_event`` (the queue emptied
  unhandled after each chunk);
- ``consume``: ``next_queued`` and the handler calls over a queue filled
  beforehand (counted as the filled-and-consumed run minus the filled one);
- ``handlers``: the handler calls alone.

Needs valgrind; not run by the tests (minutes, not seconds).  The
engine / floor ratio printed is in instructions, not time: a guide to
where cost goes, to be confirmed with ``engine_bench.py``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODES = ("floor", "engine", "onepass", "feed", "produce", "consume", "handlers")


def _child(mode: str, n: int, chunk_lines: int) -> None:
    import gc

    sys.path.insert(0, str(HERE))
    import engine_bench as eb
    from acp_core import NEED_DATA, ClientRules, Engine, Limits
    from acp_schema import v1

    lines = [eb.update_line(i) + b"\n" for i in range(n)]
    chunks = [b"".join(lines[i : i + chunk_lines]) for i in range(0, n, chunk_lines)]
    gc.disable()

    def unbounded_engine(client: eb.Client) -> Engine:
        big = 10**12
        engine = Engine(
            ClientRules([1]),
            Limits(notification_queue_size=big, notification_queue_bytes=big),
        )
        engine.set_handler(client)
        call = engine.start_call(
            engine.schema.outgoing["initialize"],
            v1.InitializeRequest(protocol_version=1),
            eb._Flag(),
        )
        engine.receive_data(
            b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":1}}\n' % call.id
        )
        engine.next_event()
        engine.call_finished(call)
        return engine

    def feed() -> None:
        engine = eb.initialized_engine(eb.Client())
        for chunk in chunks:
            engine.receive_data(chunk)
            engine._incoming.clear()  # pyright: ignore[reportPrivateUsage]

    def produce() -> None:
        engine = eb.initialized_engine(eb.Client())
        for chunk in chunks:
            engine.receive_data(chunk)
            while engine.next_event() is not NEED_DATA:
                pass
            engine.queue.clear()

    def fill() -> Engine:
        engine = unbounded_engine(eb.Client())
        for chunk in chunks:
            engine.receive_data(chunk)
        while engine.next_event() is not NEED_DATA:
            pass
        return engine

    def consume() -> None:
        engine = fill()
        next_queued, run = engine.next_queued, eb._run
        item = next_queued()
        while item is not None:
            run(item.handler(item.params))
            item = next_queued(item)  # type: ignore[arg-type]

    def onepass() -> None:
        from typing import Any, Literal

        import msgspec

        literal: Any = Literal
        record = msgspec.defstruct(
            "OnePass",
            [
                ("jsonrpc", literal["2.0"]),
                ("method", literal["session/update"]),
                ("params", v1.SessionNotification),
            ],
            forbid_unknown_fields=True,
        )
        fused = msgspec.json.Decoder(record).decode
        handler = eb.Client().session_update
        for chunk in chunks:
            for line in chunk.split(b"\n"):
                if line:
                    eb._run(handler(fused(line).params))  # type: ignore[attr-defined]

    def handlers() -> None:
        handler = eb.Client().session_update
        for _ in range(n):
            eb._run(handler(None))  # type: ignore[arg-type]

    # warm up every path (first-time decoders, routes) before counting
    small = chunks[:4]
    eb.engine_run(small, min(n, 4 * chunk_lines))
    eb.floor_run(small, min(n, 4 * chunk_lines))
    if mode == "none":
        pass
    elif mode == "engine":
        eb.engine_run(chunks, n)
    elif mode == "floor":
        eb.floor_run(chunks, n)
    else:
        steps = {
            "feed": feed,
            "produce": produce,
            "fill": fill,
            "consume": consume,
            "onepass": onepass,
        }
        steps.get(mode, handlers)()


def _instructions(mode: str, n: int, chunk_lines: int) -> int:
    # the checkout this file is in, not whichever acp-msgspec is installed
    paths = [str(HERE.parent / "runtime"), str(HERE.parent / "generated")]
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=os.pathsep.join(paths))
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--child",
            mode,
            str(n),
            str(chunk_lines),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"Collected\s*:\s*(\d+)", proc.stderr) or re.search(
        r"refs:\s*([\d,]+)", proc.stderr
    )
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{proc.stderr}")
    return int(match.group(1).replace(",", ""))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n1", type=int, default=1000)
    parser.add_argument("--n2", type=int, default=6000)
    parser.add_argument(
        "--chunk-lines", type=int, default=64, help="lines per chunk received"
    )
    # checked here: argparse (3.11) refuses nargs="*" with choices when none is given
    parser.add_argument("modes", nargs="*", metavar="MODE", help=", ".join(MODES))
    args = parser.parse_args()
    unknown = [mode for mode in args.modes if mode not in MODES]
    if unknown:
        parser.error(f"unknown mode {unknown[0]!r} (choose from {', '.join(MODES)})")
    args.modes = args.modes or ["floor", "engine"]
    per: dict[str, float] = {}
    base = (
        _instructions("none", args.n1, args.chunk_lines),
        _instructions("none", args.n2, args.chunk_lines),
    )
    for mode in args.modes:
        low, high = (
            _instructions(mode, args.n1, args.chunk_lines),
            _instructions(mode, args.n2, args.chunk_lines),
        )
        if mode == "consume":  # less the filling of the queue
            low -= _instructions("fill", args.n1, args.chunk_lines)
            high -= _instructions("fill", args.n2, args.chunk_lines)
        else:  # less building the input
            low, high = low - base[0], high - base[1]
        per[mode] = (high - low) / (args.n2 - args.n1)
        print(f"  {mode:9} {per[mode] / 1000:7.2f} k instructions/notification")
    if "floor" in per and "engine" in per:
        print(f"  ratio     {per['engine'] / per['floor']:.2f}x (instructions)")


if __name__ == "__main__":
    main()
