"""What the proxy does with the bytes it forwarded: trace them, check them, report."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ._inspector import DEFAULT_MAX_LINE, Finding, Inspector, LineSplitter
from ._message import Direction
from ._trace import TraceWriter

__all__ = ["DEFAULT_MAX_REPORTS", "REPORT_WIDTH", "Observer", "Reporter"]

#: Findings written to stderr before the rest go to the trace only.
DEFAULT_MAX_REPORTS = 1000
#: Longest stderr report line (characters).
REPORT_WIDTH = 300


@dataclass(slots=True)
class Reporter:
    """One bounded line per finding on a file descriptor (stderr), up to
    ``max_reports`` lines, then one line saying the rest is in the trace."""

    fd: int = 2
    max_reports: int = DEFAULT_MAX_REPORTS
    width: int = REPORT_WIDTH
    count: int = 0

    def report(self, finding: Finding) -> None:
        self.count += 1
        if self.count > self.max_reports:
            if self.count == self.max_reports + 1:
                self._write(
                    f"acp-inspect: more than {self.max_reports} findings; the rest only in the trace"
                )
            return
        self._write("acp-inspect: " + finding.line())

    def note(self, text: str) -> None:
        """One line that is no finding (a discarded line), within ``max_reports``."""
        self.count += 1
        if self.count <= self.max_reports:
            self._write("acp-inspect: " + text)

    def _write(self, text: str) -> None:
        if len(text) > self.width:
            text = text[: self.width - 3] + "..."
        try:
            os.write(
                self.fd, (text.replace("\n", " ") + "\n").encode("utf-8", "replace")
            )
        except OSError:
            pass  # stderr gone: the trace still has it


@dataclass(slots=True)
class Observer:
    """Lines of both directions -> trace records, inspector findings, reports.
    ``t`` is seconds since ``start`` (``time.monotonic``)."""

    inspector: Inspector = field(default_factory=Inspector)
    trace: TraceWriter | None = None
    reporter: Reporter | None = None
    max_line: int = DEFAULT_MAX_LINE
    start: float = field(default_factory=time.monotonic)
    splitters: dict[Direction, LineSplitter] = field(
        default_factory=dict[Direction, LineSplitter]
    )

    def now(self) -> float:
        return time.monotonic() - self.start

    def data(self, direction: Direction, data: bytes, t: float) -> None:
        """A chunk forwarded at ``t``."""
        for line in self.split(direction, data):
            self.line(direction, line, t)

    def skipped(self, direction: Direction) -> int:
        """Lines of ``direction`` over ``max_line``: forwarded, not checked."""
        splitter = self.splitters.get(direction)
        return 0 if splitter is None else splitter.skipped

    def split(self, direction: Direction, data: bytes) -> list[bytes]:
        """The lines a chunk of ``direction`` completes (to :meth:`line` later)."""
        splitter = self.splitters.get(direction)
        if splitter is None:
            splitter = self.splitters[direction] = LineSplitter(self.max_line)
        return splitter.feed(data)

    def discarded(self, direction: Direction) -> list[str]:
        """The log lines of the lines of ``direction`` over ``max_line``
        discarded since the last call (``acp_core.judge_oversized``'s, as
        every reader says them)."""
        splitter = self.splitters.get(direction)
        if splitter is None:
            return []
        return [
            f"{direction}: {verdict.log}: forwarded, not traced or checked"
            for verdict in splitter.take_discarded()
        ]

    def line(self, direction: Direction, line: bytes, t: float) -> None:
        if self.trace is not None:
            self.trace.line(t, direction, self.inspector.index + 1, line)
        for finding in self.inspector.feed(direction, t, line):
            self._found(finding)

    def eof(self, direction: Direction) -> None:
        """That direction ended: a last line without ``\\n`` is still a line."""
        splitter = self.splitters.get(direction)
        for rest in splitter.rest() if splitter is not None else []:
            self.line(direction, rest, self.now())
        for text in self.discarded(direction):  # cut by the end
            self.say(text)
        self.event(f"EOF {direction}")

    def say(self, text: str) -> None:
        """An event of the proxy's own, in the trace and on stderr (bounded)."""
        self.event(text)
        if self.reporter is not None:
            self.reporter.note(text)

    def event(self, text: str) -> None:
        if self.trace is not None:
            self.trace.event(self.now(), text)

    def finish(self) -> list[Finding]:
        found = self.inspector.finish(self.now())
        for finding in found:
            self._found(finding)
        return found

    def extra(self, finding: Finding) -> None:
        """A finding made outside the inspector (the proxy's EOF watch)."""
        self.inspector.findings.append(finding)
        self._found(finding)

    def _found(self, finding: Finding) -> None:
        if self.trace is not None:
            self.trace.finding(finding.time, finding)
        if self.reporter is not None:
            self.reporter.report(finding)
