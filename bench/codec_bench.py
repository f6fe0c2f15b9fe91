"""Codec benchmark: acp_schema vs the official SDK vs untyped msgspec, in one run.

For each message of `corpus.CORPUS` (protocol version 1) and for the traffic mix
`corpus.MIX`, measures decode (JSON bytes -> typed params/result) and encode
(typed -> JSON bytes) throughput of:

- ``acp_schema``: ``v1.decode(data, T)`` / ``v1.encode(obj)``;
- the official SDK (``agent-client-protocol==0.12.1``): ``json.loads`` +
  ``model_validate``, and ``model_dump`` + ``json.dumps``, as its connection does;
- untyped msgspec: ``msgspec.json.decode(data)`` / ``msgspec.json.encode(dict)``,
  the floor.

Prints ratios (never bare times as claims) and the import-time comparison.
Run: ``nox -s bench`` (or ``python bench/codec_bench.py [--quick]``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).parent))

from acp_schema import v1
from corpus import CORPUS, MIX
from official_sdk_codec import MODEL_FOR, dump


def _type_for(method: str, kind: str) -> Any:
    table = v1.AGENT_METHODS if method in v1.AGENT_METHODS else v1.CLIENT_METHODS
    entry = table[method]
    return entry.result if kind == "response" else entry.params


def _rate(fn: Callable[[], object], n_items: int, budget: float) -> float:
    """Items per second: best of 5 timed batches of about `budget` seconds each."""
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > budget / 5:
            break
        loops *= 2
    best = elapsed
    for _ in range(4):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, time.perf_counter() - start)
    return loops * n_items / best


def _codecs(
    names: list[str],
) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    cases = [CORPUS[name] for name in names]
    ours_types = [_type_for(method, kind) for method, kind, _ in cases]
    payloads = [payload for _, _, payload in cases]
    ours_objs = [v1.decode(p, t) for p, t in zip(payloads, ours_types, strict=True)]
    models = [MODEL_FOR[(method, kind)] for method, kind, _ in cases]
    kinds = [kind for _, kind, _ in cases]
    sdk_objs = [
        m.model_validate(json.loads(p)) for m, p in zip(models, payloads, strict=True)
    ]
    plain_objs = [msgspec.json.decode(p) for p in payloads]
    decode = v1.decode
    encode = v1.encode
    mdecode = msgspec.json.decode
    mencode = msgspec.json.encode
    loads = json.loads
    dumps = json.dumps
    pairs = list(zip(payloads, ours_types, strict=True))
    sdk_pairs = list(zip(payloads, models, strict=True))
    sdk_enc = list(zip(kinds, sdk_objs, strict=True))
    return {
        "acp_schema": (
            lambda: [decode(p, t) for p, t in pairs],
            lambda: [encode(o) for o in ours_objs],
        ),
        "official SDK": (
            lambda: [m.model_validate(loads(p)) for p, m in sdk_pairs],
            lambda: [
                dumps(dump(k, o), separators=(",", ":")).encode() for k, o in sdk_enc
            ],
        ),
        "untyped msgspec": (
            lambda: [mdecode(p) for p in payloads],
            lambda: [mencode(o) for o in plain_objs],
        ),
    }


def _compile_bytecode(*modules: str) -> None:
    """Write .pyc files first: a real install has them (this machine may set
    PYTHONDONTWRITEBYTECODE, which would make every import compile from source)."""
    import compileall
    import importlib.util

    for name in modules:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)


def _import_ms(module: str, runs: int, prelude: str = "pass") -> float:
    """Median wall time of ``prelude; import module`` minus that of ``prelude``."""

    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    base = statistics.median(once(prelude) for _ in range(runs))
    return 1000 * (
        statistics.median(once(f"{prelude}; import {module}") for _ in range(runs))
        - base
    )


# As in an install without pydantic: msgspec imports typing_extensions only
# when it is installed (here it is, for the official SDK).
_NO_TYPING_EXTENSIONS = "import sys; sys.modules['typing_extensions'] = None"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter timing budgets")
    args = parser.parse_args()
    budget = 0.15 if args.quick else 0.5
    rows = [(name, [name]) for name in CORPUS] + [("MIX (one prompt turn)", MIX)]
    print(f"Python {sys.version.split()[0]}, msgspec {msgspec.__version__}")
    print()
    print(
        "| message | decode msgs/s (ours) | vs SDK | vs floor | floor vs SDK"
        " | encode msgs/s (ours) | vs SDK | vs floor | floor vs SDK |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, names in rows:
        codecs = _codecs(names)
        dec = {k: _rate(d, len(names), budget) for k, (d, _) in codecs.items()}
        enc = {k: _rate(e, len(names), budget) for k, (_, e) in codecs.items()}
        ours_d, ours_e = dec["acp_schema"], enc["acp_schema"]
        floor_d, floor_e = dec["untyped msgspec"], enc["untyped msgspec"]
        sdk_d, sdk_e = dec["official SDK"], enc["official SDK"]
        print(
            f"| {label} | {ours_d:,.0f} | {ours_d / sdk_d:.1f}x"
            f" | {ours_d / floor_d:.2f}x | {floor_d / sdk_d:.1f}x"
            f" | {ours_e:,.0f} | {ours_e / sdk_e:.1f}x"
            f" | {ours_e / floor_e:.2f}x | {floor_e / sdk_e:.1f}x |"
        )
    print()
    print("vs SDK: our rate / the official SDK's (higher is better).")
    print("vs floor: our rate / untyped msgspec's (1.0 = as fast as the floor;")
    print("the target is >= 0.91, i.e. typed decode no slower than 1.1x the floor).")
    print("floor vs SDK: untyped msgspec's rate / the SDK's: what any typed layer")
    print("on msgspec can reach at most, give or take the typed-beats-dicts margin.")
    runs = 5 if args.quick else 20
    _compile_bytecode("acp_schema", "acp", "msgspec")
    ours = _import_ms("acp_schema.v1", runs)
    theirs = _import_ms("acp.schema", runs)
    bare = _import_ms("msgspec", runs)
    print()
    print(f"import time (subprocess, median of {runs}, minus `python -c pass`):")
    print(
        f"  acp_schema.v1 {ours:.1f} ms, acp.schema {theirs:.1f} ms: ratio 1/{theirs / ours:.1f}"
        " (target 1/20)"
    )
    print(
        f"  `import msgspec` alone: {bare:.1f} ms, so acp_schema.v1's own part is"
        f" {ours - bare:.1f} ms; the 1/20 budget is {theirs / 20:.1f} ms"
    )
    lean = _import_ms("acp_schema.v1", runs, _NO_TYPING_EXTENSIONS)
    lean_bare = _import_ms("msgspec", runs, _NO_TYPING_EXTENSIONS)
    print(
        f"  without typing_extensions (no pydantic installed): acp_schema.v1"
        f" {lean:.1f} ms (msgspec {lean_bare:.1f} ms): ratio 1/{theirs / lean:.1f}"
    )


if __name__ == "__main__":
    main()
