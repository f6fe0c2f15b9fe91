"""``python -m acp_inspect check``: run the conformance suite against an agent."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import trio

from ._cases import CASES, Case, CaseContext, CaseFailed, NotApplicable
from ._driver import AgentExited, AgentUnderTest, Entry
from ._inspector import Finding
from ._message import AGENT
from ._trace import finding_json

__all__ = ["DEFAULT_TIMEOUT", "CaseResult", "CheckReport", "run_check"]

#: Seconds a case may take before it fails (a hung agent fails its case only).
DEFAULT_TIMEOUT = 10.0
#: Seconds to wait for what may not come (late updates, an optional update).
DEFAULT_SETTLE = 0.3
#: Bytes of the oversized line (``jsonrpc.oversized-line``).
DEFAULT_OVERSIZED = 4 * 1024 * 1024
#: The prompt that makes the agent run until cancelled (the echo agent's convention).
DEFAULT_WAIT_PROMPT = "wait"
#: Cases run at the same time (each with its own agent process).
DEFAULT_JOBS = 4
#: Seconds an agent has to exit after the case (stdin closed), then SIGTERM / SIGKILL.
CASE_GRACE = 1.0

Status = Literal["pass", "fail", "n/a"]


@dataclass(slots=True)
class CaseResult:
    """What one case found."""

    case: Case
    status: Status
    detail: str
    seconds: float
    timeline: list[Entry]
    findings: list[Finding]
    stderr: str
    version: int

    @property
    def must_failed(self) -> bool:
        if self.status == "fail" and self.case.severity.startswith("MUST"):
            return True
        return any(f.is_must and f.direction == AGENT for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        spec = self.case.spec
        return {
            "case": self.case.key,
            "title": self.case.title,
            "status": self.status,
            "level": self.case.severity,
            "cite": spec.cite(self.version),
            "quote": spec.quote,
            "detail": self.detail,
            "seconds": round(self.seconds, 3),
            "findings": [finding_json(f) for f in self.findings],
            "timeline": [
                {
                    "t": round(e.t, 6),
                    "dir": e.dir,
                    "text": e.text,
                    "findings": [f.rule for f in e.findings],
                }
                for e in self.timeline
            ],
            "stderr": self.stderr,
        }


@dataclass(slots=True)
class CheckReport:
    """The whole run."""

    command: list[str]
    protocol: int
    results: list[CaseResult] = field(default_factory=list[CaseResult])

    @property
    def must_failed(self) -> bool:
        return any(r.must_failed for r in self.results)

    def to_json(self) -> dict[str, Any]:
        counts = {
            s: sum(r.status == s for r in self.results) for s in ("pass", "fail", "n/a")
        }
        return {
            "command": self.command,
            "protocol": self.protocol,
            "summary": {**counts, "must_failed": self.must_failed},
            "cases": [r.to_json() for r in self.results],
        }

    def summary(self) -> str:
        """The terminal summary: one line per case, its findings under it."""
        lines: list[str] = []
        mark = {"pass": "PASS", "fail": "FAIL", "n/a": "n/a "}
        for r in self.results:
            cite = r.case.spec.cite(r.version)
            lines.append(
                f"{mark[r.status]} {r.case.key:<28} {r.case.severity:<10} {cite}"
            )
            if r.status != "pass":
                lines.append(f"     {r.detail}")
            for f in r.findings:
                if f.direction == AGENT:
                    lines.append(f"     {f.line()}"[:300])
        data = self.to_json()["summary"]
        lines.append(
            f"{data['pass']} passed, {data['fail']} failed, {data['n/a']} not applicable"
            + ("; MUST violations found" if self.must_failed else "")
        )
        return "\n".join(lines)


async def run_case(
    case: Case,
    command: Sequence[str],
    *,
    protocol: int,
    case_timeout: float,
    settle: float,
    oversized_bytes: int,
    wait_prompt: str,
    cwd: str,
) -> CaseResult:
    """One case against a fresh agent process."""
    agent = AgentUnderTest(command)
    ctx = CaseContext(agent, protocol, cwd, settle, oversized_bytes, wait_prompt)
    status: Status = "pass"
    detail = ""
    async with trio.open_nursery() as nursery:
        try:
            await agent.run(nursery)
        except OSError as exc:
            return CaseResult(
                case,
                "fail",
                f"the agent could not start: {exc}",
                0.0,
                [],
                [],
                "",
                protocol,
            )
        with trio.move_on_after(case_timeout) as scope:
            try:
                await case.run(ctx)
            except CaseFailed as exc:
                status, detail = "fail", str(exc)
            except NotApplicable as exc:
                status, detail = "n/a", str(exc)
            except AgentExited as exc:
                status, detail = "fail", str(exc)
        if scope.cancelled_caught:
            status, detail = (
                "fail",
                f"no progress within {case_timeout:g}s (the agent hung?)",
            )
            agent.note(detail)
        await agent.stop(CASE_GRACE)
        nursery.cancel_scope.cancel()
    findings = list(agent.inspector.findings)
    if status == "pass" and any(f.is_must and f.direction == AGENT for f in findings):
        status, detail = "fail", "the agent broke a rule (see findings)"
    stderr = agent.stderr[-4096:].decode("utf-8", "replace")
    return CaseResult(
        case, status, detail, agent.now(), agent.timeline, findings, stderr, ctx.version
    )


async def run_check(
    command: Sequence[str],
    *,
    protocol: int = 1,
    case_timeout: float = DEFAULT_TIMEOUT,
    settle: float = DEFAULT_SETTLE,
    oversized_bytes: int = DEFAULT_OVERSIZED,
    wait_prompt: str = DEFAULT_WAIT_PROMPT,
    cases: Sequence[Case] = CASES,
    jobs: int = DEFAULT_JOBS,
) -> CheckReport:
    """Run ``cases`` (default: all), each against a fresh agent started with
    ``command`` speaking ``protocol``, up to ``jobs`` at a time."""
    report = CheckReport(list(command), protocol)
    results: list[CaseResult | None] = [None] * len(cases)
    limiter = trio.CapacityLimiter(max(1, jobs))
    with tempfile.TemporaryDirectory(prefix="acp-inspect-") as cwd:

        async def one(i: int, case: Case) -> None:
            async with limiter:
                results[i] = await run_case(
                    case,
                    command,
                    protocol=protocol,
                    case_timeout=case_timeout,
                    settle=settle,
                    oversized_bytes=oversized_bytes,
                    wait_prompt=wait_prompt,
                    cwd=cwd,
                )

        async with trio.open_nursery() as nursery:
            for i, case in enumerate(cases):
                nursery.start_soon(one, i, case)
    report.results = [r for r in results if r is not None]
    return report
