"""The trace file: JSON Lines, one record per line crossing the proxy and per finding.

Records (each a JSON object on its own line):

- ``{"trace": "acp-inspect", "format": 1, "command": [...], "started": EPOCH}``: first;
- ``{"t": SECONDS, "dir": "to_agent" | "from_agent", "n": INDEX, "line": TEXT}``:
  a line as it crossed (``t`` from the start; the line without its ``\\n``;
  ``"b64"`` instead of ``"line"`` when it is not UTF-8);
- ``{"t": ..., "finding": {rule, cite, level, dir, n, text}}``: a rule broken;
- ``{"t": ..., "event": TEXT}``: the proxy's own events (EOF, exit status).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from ._inspector import Finding
from ._message import Direction

__all__ = ["TraceLine", "TraceRecord", "TraceWriter", "read_trace"]

_encode = msgspec.json.Encoder().encode


@dataclass(slots=True)
class TraceLine:
    """A line of the wire, as recorded."""

    t: float
    dir: Direction
    n: int
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass(slots=True)
class TraceRecord:
    """A whole trace read back: header, lines, findings (as dicts) and events."""

    header: dict[str, Any] = field(default_factory=dict[str, Any])
    lines: list[TraceLine] = field(default_factory=list[TraceLine])
    findings: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    events: list[tuple[float, str]] = field(default_factory=list[tuple[float, str]])


def finding_json(f: Finding) -> dict[str, Any]:
    """A finding as the trace and the reports write it."""
    return {
        "rule": f.rule,
        "cite": f.cite,
        "level": f.level,
        "quote": f.spec.quote,
        "dir": f.direction,
        "n": f.index,
        "text": f.text,
    }


class TraceWriter:
    """Appends records to a binary file object (flushed per record, so a
    trace survives a killed proxy)."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out

    def header(self, command: list[str], started: float) -> None:
        self._write(
            {
                "trace": "acp-inspect",
                "format": 1,
                "command": command,
                "started": started,
            }
        )

    def line(self, t: float, direction: Direction, n: int, data: bytes) -> None:
        try:
            record: dict[str, Any] = {
                "t": t,
                "dir": direction,
                "n": n,
                "line": data.decode("utf-8"),
            }
        except UnicodeDecodeError:
            record = {
                "t": t,
                "dir": direction,
                "n": n,
                "b64": base64.b64encode(data).decode(),
            }
        self._write(record)

    def finding(self, t: float, f: Finding) -> None:
        self._write({"t": t, "finding": finding_json(f)})

    def event(self, t: float, text: str) -> None:
        self._write({"t": t, "event": text})

    def _write(self, record: dict[str, Any]) -> None:
        self.out.write(_encode(record) + b"\n")
        self.out.flush()


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as f:
        for raw in f:
            if raw.strip():
                value = msgspec.json.decode(raw)
                if isinstance(value, dict):
                    yield value  # pyright: ignore[reportUnknownArgumentType]


def read_trace(path: Path) -> TraceRecord:
    """A trace file back into records (unknown record kinds are skipped)."""
    out = TraceRecord()
    for rec in _records(path):
        if "trace" in rec:
            out.header = rec
        elif "dir" in rec:
            direction: Literal["to_agent", "from_agent"] = (
                "to_agent" if rec["dir"] == "to_agent" else "from_agent"
            )
            data = (
                rec["line"].encode()
                if "line" in rec
                else base64.b64decode(rec.get("b64", ""))
            )
            out.lines.append(
                TraceLine(float(rec["t"]), direction, int(rec.get("n", 0)), data)
            )
        elif "finding" in rec:
            out.findings.append({**rec["finding"], "t": rec.get("t", 0.0)})
        elif "event" in rec:
            out.events.append((float(rec.get("t", 0.0)), str(rec["event"])))
    return out
