"""The trace file: JSON Lines, one record per line crossing the proxy and per finding.

Records (each a JSON object on its own line):

- ``{"trace": "acp-inspect", "format": 1, "command": [...], "started": EPOCH}``: first;
- ``{"t": SECONDS, "dir": "to_agent" | "from_agent", "n": INDEX, "line": TEXT}``:
  a line as it crossed (``t`` from the start; the line without its ``\\n``;
  ``"b64"`` instead of ``"line"`` when it is not UTF-8);
- ``{"t": ..., "finding": {rule, cite, level, quote, dir, n, text, count}}``:
  a rule broken (``count`` times on that line: one record per rule per
  line; ``quote`` only in the first finding citing that spec line);
- ``{"t": ..., "event": TEXT}``: the proxy's own events (EOF, exit status);
- ``{"t": ..., "event": TEXT, "limit": BYTES}``: the last record of a run
  whose trace reached ``max_bytes`` (``--max-trace-bytes``).

A file the proxy appended to several times holds several runs, each from
its header on.
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

__all__ = [
    "DEFAULT_MAX_TRACE_BYTES",
    "TraceLine",
    "TraceRecord",
    "TraceWriter",
    "read_trace",
    "read_traces",
]

#: Bytes of trace one proxy run writes at most (then one closing record).
DEFAULT_MAX_TRACE_BYTES = 256 * 1024 * 1024

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


def finding_json(f: Finding, *, quote: bool = True) -> dict[str, Any]:
    """A finding as the trace and the reports write it."""
    out: dict[str, Any] = {
        "rule": f.rule,
        "cite": f.cite,
        "level": f.level,
        "dir": f.direction,
        "n": f.index,
        "text": f.text,
        "count": f.count,
    }
    if quote:
        out["quote"] = f.spec.quote
    return out


class TraceWriter:
    """Appends records to a binary file object (flushed per record, so a
    trace survives a killed proxy), ``max_bytes`` at most, then one closing
    record and nothing more."""

    def __init__(
        self, out: IO[bytes], max_bytes: int = DEFAULT_MAX_TRACE_BYTES
    ) -> None:
        self.out = out
        self.max_bytes = max_bytes
        self.written = 0
        self.full = False
        self._quoted: set[str] = set()
        self._last_t = 0.0

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
        quote = f.cite not in self._quoted
        if self._write({"t": t, "finding": finding_json(f, quote=quote)}):
            self._quoted.add(f.cite)

    def event(self, t: float, text: str) -> None:
        self._write({"t": t, "event": text})

    def _write(self, record: dict[str, Any]) -> bool:
        if self.full:
            return False
        data = _encode(record) + b"\n"
        t = record.get("t")
        if isinstance(t, float):
            self._last_t = t
        if self.written + len(data) > self.max_bytes:
            self.full = True
            text = f"trace limit of {self.max_bytes} bytes reached (--max-trace-bytes): nothing more is recorded"
            data = _encode({"t": self._last_t, "event": text, "limit": self.max_bytes})
            data += b"\n"
        self.written += len(data)
        self.out.write(data)
        self.out.flush()
        return not self.full


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as f:
        for raw in f:
            if raw.strip():
                value = msgspec.json.decode(raw)
                if isinstance(value, dict):
                    yield value  # pyright: ignore[reportUnknownArgumentType]


def read_trace(path: Path) -> TraceRecord:
    """A trace file back into records (unknown record kinds are skipped); of
    a file holding several runs, the last."""
    return read_traces(path)[-1]


def read_traces(path: Path) -> list[TraceRecord]:
    """Each run a trace file holds (a proxy appends), in order: a new one at
    each header record."""
    runs = [TraceRecord()]
    quotes: dict[str, str] = {}
    for rec in _records(path):
        out = runs[-1]
        if "trace" in rec:
            if out.header or out.lines or out.findings or out.events:
                runs.append(TraceRecord())
                quotes = {}
            runs[-1].header = rec
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
            finding: dict[str, Any] = {**rec["finding"], "t": rec.get("t", 0.0)}
            cite = str(finding.get("cite", ""))
            if "quote" in finding:  # written once per spec line
                quotes[cite] = str(finding["quote"])
            else:
                finding["quote"] = quotes.get(cite, "")
            out.findings.append(finding)
        elif "event" in rec:
            out.events.append((float(rec.get("t", 0.0)), str(rec["event"])))
    return runs
