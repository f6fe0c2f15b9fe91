"""The inspector: lines in, findings out (no I/O).

:class:`Inspector` reads each line of both directions in the order they
crossed the proxy, parses it, checks it against the schema of the negotiated
version and against every rule, then records it in its
:class:`~acp_inspect.ConnectionState`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from acp_core import LineBuffer, Oversized, OversizedVerdict, judge_oversized

from ._message import (
    CLIENT,
    Direction,
    Kind,
    Malformed,
    Message,
    parse_line,
    sender_of,
)
from ._spec import REFS, SpecRef
from ._state import ConnectionState
from ._typed import TypedCheck
from .rules import ALL_MESSAGES, DEFAULT_RULES, Rule

__all__ = [
    "DEFAULT_MAX_FINDINGS",
    "DEFAULT_MAX_LINE",
    "Finding",
    "Inspector",
    "LineSplitter",
]

#: Longest line checked (bytes); a longer one is forwarded but not parsed.
DEFAULT_MAX_LINE = 64 * 1024 * 1024
#: Findings an :class:`Inspector` keeps in ``findings``; the rest are counted
#: per rule in ``dropped`` (still returned by ``feed``).
DEFAULT_MAX_FINDINGS = 1000


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule broken by one line: ``rule`` (its key), the ``spec`` line,
    ``cite`` (``v1/prompt-turn.mdx:332``), the line's ``index`` and
    ``direction``, and one line of ``text``."""

    rule: str
    spec: SpecRef
    cite: str
    level: str
    direction: Direction
    index: int
    time: float
    text: str
    #: how many times the rule broke on this line (a batch's members): one finding
    count: int = 1

    @property
    def is_must(self) -> bool:
        return self.level.startswith("MUST")

    def line(self) -> str:
        """One line for a terminal: ``MUST v1/...:332 [rule] #12 text``."""
        times = f" (x{self.count} on this line)" if self.count > 1 else ""
        return (
            f"{self.level} {self.cite} [{self.rule}] #{self.index} {self.text}{times}"
        )


class Inspector:
    """Checks a connection line by line.  ``feed(direction, time, line)``
    returns the findings of that line; ``finish(time)`` those of the end
    (requests never answered)."""

    def __init__(
        self,
        rules: Iterable[Rule] = DEFAULT_RULES,
        *,
        max_findings: int = DEFAULT_MAX_FINDINGS,
    ) -> None:
        self.rules = tuple(rules)
        self.max_findings = max_findings
        #: findings past ``max_findings``, counted per rule
        self.dropped: dict[str, int] = {}
        #: the rules to run per (direction, kind), in the given order
        self.rules_for: dict[tuple[Direction, Kind], tuple[Rule, ...]] = {
            key: tuple(r for r in self.rules if key in r.applies_to)
            for key in ALL_MESSAGES
        }
        self.state = ConnectionState()
        self.typed = TypedCheck()
        self.index = 0
        self.findings: list[Finding] = []

    def _finding(
        self,
        rule: str,
        spec: SpecRef,
        direction: Direction,
        index: int,
        time: float,
        text: str,
        level: str | None = None,
    ) -> Finding:
        return Finding(
            rule,
            spec,
            spec.cite(self.state.current_version),
            level or spec.level,
            direction,
            index,
            time,
            text,
        )

    def _keep(self, found: list[Finding]) -> list[Finding]:
        """One finding per rule per line (counted), kept up to ``max_findings``."""
        if len(found) > 1:
            first: dict[tuple[str, int, Direction], Finding] = {}
            counts: dict[tuple[str, int, Direction], int] = {}
            for f in found:
                key = (f.rule, f.index, f.direction)
                first.setdefault(key, f)
                counts[key] = counts.get(key, 0) + f.count
            found = [replace(f, count=counts[k]) for k, f in first.items()]
        for f in found:
            if len(self.findings) < self.max_findings:
                self.findings.append(f)
            else:
                self.dropped[f.rule] = self.dropped.get(f.rule, 0) + f.count
        return found

    def feed(self, direction: Direction, time: float, line: bytes) -> list[Finding]:
        """One line (without ``\\n``; a trailing ``\\r`` is ignored)."""
        self.index += 1
        index = self.index
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or line.isspace():
            return []
        out: list[Finding] = []
        own = REFS[
            "client-stdin-only-acp" if direction == CLIENT else "agent-stdout-only-acp"
        ]
        for item in parse_line(direction, index, time, line):
            if isinstance(item, Malformed):
                text = f"{sender_of(direction)} wrote a line that is not a JSON-RPC message: {item.reason}"
                out.append(
                    self._finding("malformed", own, direction, index, time, text[:300])
                )
                continue
            out.extend(self._message(item, own))
        return self._keep(out)

    def _message(self, msg: Message, own: SpecRef) -> list[Finding]:
        out: list[Finding] = []
        problem = self.typed.check(self.state, msg)
        if problem is not None and problem.text:  # empty: a kind told already
            out.append(
                self._finding(
                    problem.rule,
                    own,
                    msg.direction,
                    msg.index,
                    msg.time,
                    problem.text[:300],
                    problem.level,
                )
            )
        for rule in self.rules_for[msg.direction, msg.kind]:
            breach = rule.check(self.state, msg)
            if breach is not None:
                spec = breach.spec or rule.spec
                out.append(
                    self._finding(
                        rule.key,
                        spec,
                        msg.direction,
                        msg.index,
                        msg.time,
                        breach.text[:300],
                        breach.level,
                    )
                )
        self.state.apply(msg)
        return out

    def finish(self, time: float) -> list[Finding]:
        """At the end of the connection: each request left unanswered."""
        out: list[Finding] = []
        for direction, pending in self.state.pending.items():
            other = "agent" if direction == CLIENT else "client"
            for p in pending.values():
                sid = p.params.get("sessionId")
                turn = self.state.turns.get(sid) if isinstance(sid, str) else None
                if p.method == "session/prompt" and turn is not None and turn.cancelled:
                    spec = REFS["cancelled-stop-reason"]
                    text = (
                        f"{other} never answered the cancelled prompt (line {p.index})"
                    )
                else:
                    spec = REFS["jsonrpc-response-required"]
                    text = f"{other} never answered {p.method} (line {p.index})"
                out.append(
                    self._finding("unanswered", spec, direction, p.index, time, text)
                )
        return self._keep(out)


class LineSplitter:
    """Bytes of one direction in, whole lines out: ``acp_core.LineBuffer`` (the
    one framer of the runtime), verbatim (a recorder keeps blank lines and
    ``\\r``), with the lines longer than ``max_line`` discarded while they
    stream and counted in ``skipped``; each one's verdict
    (``acp_core.judge_oversized``, the rule of every reader) waits in
    :meth:`take_discarded` until the caller says it (its ``log`` line)."""

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._buffer = LineBuffer(max_message_size=max_line, verbatim=True)
        self.skipped = 0
        # the streaming oversized line was counted already (told at once)
        self._counted = False
        # verdicts of the lines discarded since take_discarded: one per
        # over-long line, each more than max_line bytes of input
        self._discarded: list[OversizedVerdict] = []

    def take_discarded(self) -> list[OversizedVerdict]:
        """The verdicts of the lines discarded since the last call."""
        taken, self._discarded = self._discarded, []
        return taken

    def feed(self, data: bytes) -> list[bytes]:
        """The lines ``data`` completes (without their ``\\n``);
        a line is counted in ``skipped`` as soon as it is known to be too long."""
        lines = self._kept(self._buffer.feed(data))
        if self._buffer.discarding and not self._counted:
            self._counted = True
            self.skipped += 1
        return lines

    def rest(self) -> list[bytes]:
        """At EOF: the last line, if it had no ``\\n`` (and was not too long)."""
        return self._kept(self._buffer.feed_eof())

    def _kept(self, lines: list[bytes | Oversized]) -> list[bytes]:
        kept: list[bytes] = []
        for line in lines:
            if isinstance(line, Oversized):
                self._discarded.append(judge_oversized(line, self.max_line))
                if self._counted:
                    self._counted = False
                else:
                    self.skipped += 1
            else:
                kept.append(line)
        return kept
