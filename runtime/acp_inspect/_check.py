"""``python -m acp_inspect check``: run the conformance suite against an agent."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import trio
from acp_core import VersionUnavailableError, protocol_module

from ._cases import (
    CASES,
    AuthRequired,
    Case,
    CaseContext,
    CaseFailed,
    NotApplicable,
)
from ._driver import AgentExited, AgentUnderTest, Budget, Entry, LineTooLong
from ._inspector import Finding
from ._message import AGENT, Direction
from ._spec import stale_docs_note
from ._trace import finding_json

if TYPE_CHECKING:
    from ._client_context import ClientCase

__all__ = [
    "DEFAULT_CASE_LIMIT",
    "DEFAULT_EOF_GRACE",
    "DEFAULT_START_TIMEOUT",
    "DEFAULT_STREAMING",
    "DEFAULT_TIMEOUT",
    "CaseResult",
    "CheckReport",
    "Limits",
    "run_check",
]

#: Seconds without a byte from the agent before a case fails ("no progress";
#: every line, every chunk of one, resets it).
DEFAULT_TIMEOUT = 30.0
#: Seconds the agent has to write its first byte (an agent started through
#: npx, or loading a model, may take many seconds to answer initialize).
DEFAULT_START_TIMEOUT = 60.0
#: Seconds a case may take in all, however busy the agent.
DEFAULT_CASE_LIMIT = 120.0
#: Seconds the agent has to exit after its stdin closed (``eof.exit``): an
#: agent that exits, however slowly, does not ignore EOF (an editor's own
#: grace, 2 s in ``acp_trio.spawn_agent``, is the proxy's ``--grace``).
DEFAULT_EOF_GRACE = 5.0
#: Seconds of streaming before the mid-turn ``session/cancel``.
DEFAULT_STREAMING = 1.0
#: Lines of the agent's stderr shown under a failing case on stdout.
STDERR_LINES = 5
#: Characters of a summary line on stdout.
WIDTH = 300
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

Status = Literal["pass", "fail", "n/a", "skip"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The time a case has (see the constants)."""

    timeout: float = DEFAULT_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    case_limit: float = DEFAULT_CASE_LIMIT
    eof_grace: float = DEFAULT_EOF_GRACE
    streaming: float = DEFAULT_STREAMING


@dataclass(slots=True)
class CaseResult:
    """What one case found (``peer``: whose findings fail it, the agent's
    for ``check``, the client's for ``check-client``)."""

    case: Case | ClientCase
    status: Status
    detail: str
    seconds: float
    timeline: list[Entry]
    findings: list[Finding]
    stderr: str
    version: int
    #: the setup step the case could not get past (``initialize``,
    #: ``session/new``), when that is why it failed
    step: str = ""
    #: findings past the case's budget, counted per rule
    dropped: dict[str, int] = field(default_factory=dict[str, int])
    peer: Direction = AGENT
    #: the peer's exit status when the case ended (``None``: still running)
    exit_code: int | None = None

    @property
    def must_failed(self) -> bool:
        if self.status == "fail" and self.case.severity.startswith("MUST"):
            return True
        return any(f.is_must and f.direction == self.peer for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        spec = self.case.spec
        return {
            "case": self.case.key,
            "title": self.case.title,
            "status": self.status,
            "level": self.case.severity,
            "cite": spec.cite(self.version),
            "quote": spec.quote,
            **({"reported": spec.doc} if spec.reported else {}),
            "detail": self.detail,
            "seconds": round(self.seconds, 3),
            "findings": [finding_json(f) for f in self.findings],
            "findings_not_kept": self.dropped,
            "timeline": [
                {
                    "t": round(e.t, 6),
                    "dir": e.dir,
                    "text": e.text,
                    "size": e.size,
                    "findings": [f.rule for f in e.findings],
                    **({"label": e.label} if e.label else {}),
                }
                for e in self.timeline
            ],
            "stderr": self.stderr,
            "exit_code": self.exit_code,
        }


@dataclass(slots=True)
class CheckReport:
    """The whole run (``peer``: ``agent`` for ``check``, ``client`` for
    ``check-client``)."""

    command: list[str]
    protocol: int
    results: list[CaseResult] = field(default_factory=list[CaseResult])
    peer: str = "agent"

    @property
    def must_failed(self) -> bool:
        return any(r.must_failed for r in self.results)

    def to_json(self) -> dict[str, Any]:
        counts = {
            s: sum(r.status == s for r in self.results)
            for s in ("pass", "fail", "n/a", "skip")
        }
        return {
            "command": self.command,
            "peer": self.peer,
            "protocol": self.protocol,
            "summary": {**counts, "must_failed": self.must_failed},
            "cases": [r.to_json() for r in self.results],
        }

    def summary(self) -> str:
        """The terminal summary: one line per case that ran, one line per
        finding kind under it, the agent's stderr tail under a failure; the
        cases skipped or not applicable for one reason on one line."""
        lines: list[str] = []
        mark = {"pass": "PASS", "fail": "FAIL", "n/a": "n/a ", "skip": "SKIP"}
        grouped: dict[tuple[Status, str], list[str]] = {}
        for r in self.results:
            if r.status in ("skip", "n/a") and r.step:
                grouped.setdefault((r.status, r.detail), []).append(r.case.key)
                continue
            cite = r.case.spec.cite(r.version)
            lines.append(
                f"{mark[r.status]} {r.case.key:<28} {r.case.severity:<10} {cite}"
            )
            if r.status != "pass":
                lines.append(f"     {r.detail}"[:WIDTH])
            lines.extend(f"     {line}"[:WIDTH] for line in _finding_kinds(r))
            if r.status == "fail" and r.stderr.strip():
                tail = r.stderr.strip().splitlines()[-STDERR_LINES:]
                label = "stderr" if r.peer == AGENT else "output"
                lines.extend(f"     {label}| {line}"[:WIDTH] for line in tail)
        for (status, detail), keys in grouped.items():
            text = f"{len(keys)} cases {'skipped' if status == 'skip' else 'not applicable'}: {detail}"
            lines.append(f"{mark[status]} {text}"[:WIDTH])
        for version in sorted({r.version for r in self.results}):
            note = stale_docs_note(version, _schema_version(version))
            if note is not None:
                lines.append(note)
        data = self.to_json()["summary"]
        lines.append(
            f"{data['pass']} passed, {data['fail']} failed, {data['n/a']} not applicable"
            + (f", {data['skip']} skipped" if data["skip"] else "")
            + ("; MUST violations found" if self.must_failed else "")
        )
        return "\n".join(lines)


def _finding_kinds(r: CaseResult) -> list[str]:
    """One line per rule the peer broke in a case: the first finding, and
    how many in all."""
    first: dict[str, Finding] = {}
    counts: dict[str, int] = dict(r.dropped)
    for f in r.findings:
        if f.direction == r.peer:
            first.setdefault(f.rule, f)
            counts[f.rule] = counts.get(f.rule, 0) + f.count
    out: list[str] = []
    for rule, f in first.items():
        n = counts[rule]
        more = f" ({n} in all)" if n > 1 else ""
        out.append(f"{f.level} {f.cite} [{rule}] #{f.index} {f.text}{more}")
    return out


def case_env(root: Path) -> tuple[str, dict[str, str]]:
    """A case's own working directory (the sessions' ``cwd``) and
    environment: HOME and the XDG directories in ``root`` (nothing of the
    user's configuration, nothing shared with the other cases)."""
    env = dict(os.environ)
    for name, sub in (
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "home/.config"),
        ("XDG_DATA_HOME", "home/.local/share"),
        ("XDG_STATE_HOME", "home/.local/state"),
        ("XDG_CACHE_HOME", "home/.cache"),
    ):
        path = root / sub
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    cwd = root / "work"
    cwd.mkdir()
    return str(cwd), env


async def run_case(
    case: Case,
    command: Sequence[str],
    *,
    protocol: int,
    limits: Limits,
    settle: float,
    oversized_bytes: int,
    wait_prompt: str,
    auth: str | None = None,
    budget: Budget | None = None,
) -> CaseResult:
    """One case against a fresh agent process with a temporary directory of
    its own: the sessions' ``cwd`` and the agent's HOME (the process itself
    starts in the current directory, where a relative command is found)."""
    with tempfile.TemporaryDirectory(prefix="acp-inspect-") as root:
        cwd, env = case_env(Path(root))
        return await _run_case(
            case,
            AgentUnderTest(command, budget=budget, env=env),
            protocol=protocol,
            limits=limits,
            settle=settle,
            oversized_bytes=oversized_bytes,
            wait_prompt=wait_prompt,
            auth=auth,
            cwd=cwd,
        )


async def _run_case(
    case: Case,
    agent: AgentUnderTest,
    *,
    protocol: int,
    limits: Limits,
    settle: float,
    oversized_bytes: int,
    wait_prompt: str,
    auth: str | None,
    cwd: str,
) -> CaseResult:
    ctx = CaseContext(
        agent,
        protocol,
        cwd,
        settle,
        oversized_bytes,
        wait_prompt,
        auth=auth,
        eof_grace=limits.eof_grace,
        streaming=limits.streaming,
    )
    status: Status = "pass"
    detail = ""
    step = ""
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
        with trio.move_on_after(limits.case_limit) as overall:
            # until the agent's first byte: start_timeout; then no progress
            idle = trio.CancelScope(deadline=trio.current_time() + limits.start_timeout)

            started = False

            def progress(from_agent: bool) -> None:
                nonlocal started
                started = started or from_agent
                if started:
                    idle.deadline = trio.current_time() + limits.timeout

            agent.on_line = progress
            with idle:
                try:
                    await case.run(ctx)
                except CaseFailed as exc:
                    status, detail = "fail", str(exc)
                    step = exc.step
                except AuthRequired as exc:
                    status, detail, step = "n/a", str(exc), "session/new"
                except NotApplicable as exc:
                    status, detail = "n/a", str(exc)
                except (AgentExited, LineTooLong) as exc:
                    status, detail, step = "fail", f"{exc}; {agent.where()}", ctx.step
            if idle.cancelled_caught:
                status, step = "fail", ctx.step
                if not agent.last_received:
                    detail = f"the agent wrote nothing in {limits.start_timeout:g} s (--start-timeout); {agent.where()}"
                else:
                    detail = f"nothing from the agent for {limits.timeout:g} s (--timeout); {agent.where()}"
                if agent.last_sent == "session/cancel":
                    detail = "the cancelled prompt was never answered: " + detail
        if overall.cancelled_caught:
            status, step = "fail", ctx.step
            detail = f"the case took over {limits.case_limit:g} s (--case-limit); {agent.where()}"
        if status == "fail":
            agent.note(detail)
        agent.budget_note()
        agent.done()
        await agent.stop(1.0)
        nursery.cancel_scope.cancel()
    findings = list(agent.inspector.findings)
    if status == "pass" and (any(f.is_must and f.direction == AGENT for f in findings)):
        status, detail = "fail", "the agent broke a rule (see findings)"
    stderr = agent.stderr[-4096:].decode("utf-8", "replace")
    return CaseResult(
        case,
        status,
        detail,
        agent.now(),
        agent.timeline,
        findings,
        stderr,
        ctx.version,
        step=step,
        dropped=dict(agent.inspector.dropped),
    )


def _skipped(
    case: Case, status: Status, detail: str, step: str, protocol: int
) -> CaseResult:
    return CaseResult(case, status, detail, 0.0, [], [], "", protocol, step=step)


async def run_check(
    command: Sequence[str],
    *,
    protocol: int = 1,
    limits: Limits | None = None,
    settle: float = DEFAULT_SETTLE,
    oversized_bytes: int = DEFAULT_OVERSIZED,
    wait_prompt: str = DEFAULT_WAIT_PROMPT,
    cases: Sequence[Case] = CASES,
    jobs: int = DEFAULT_JOBS,
    auth: str | None = None,
    budget: Budget | None = None,
) -> CheckReport:
    """Run ``cases`` (default: all), each against a fresh agent started with
    ``command`` speaking ``protocol``, up to ``jobs`` at a time.

    The setup steps first: ``initialize.negotiation``, then ``session.new``
    (run whether asked for or not when a case needs them, reported only if
    asked for).  When ``initialize`` fails, the cases that need it are
    skipped; when ``session/new`` fails, those that need a session (not
    applicable when the agent requires authentication and ``auth`` is
    ``None``); each such group is one line of the summary.
    """
    limits = limits or Limits()
    report = CheckReport(list(command), protocol)
    by_key = {c.key: c for c in CASES}
    results: dict[str, CaseResult] = {}

    async def one(case: Case) -> CaseResult:
        return await run_case(
            case,
            command,
            protocol=protocol,
            limits=limits,
            settle=settle,
            oversized_bytes=oversized_bytes,
            wait_prompt=wait_prompt,
            auth=auth,
            budget=budget,
        )

    blocked: dict[str, tuple[Status, str]] = {}  # need -> why
    for key, need in (
        ("initialize.negotiation", "initialize"),
        ("session.new", "session"),
    ):
        if need in blocked or not any(c.needs in _NEEDS[need] for c in cases):
            continue
        result = await one(by_key[key])
        results[key] = result
        if result.status == "n/a" and result.step == "session/new":
            blocked["session"] = ("n/a", result.detail)
        elif result.status == "fail" and result.step:
            why = f"{result.step} failed (see {key})"
            if result.step == "initialize":
                blocked["initialize"] = blocked["session"] = ("skip", why)
            else:
                blocked["session"] = ("skip", why)
    limiter = trio.CapacityLimiter(max(1, jobs))

    async def queued(case: Case) -> None:
        async with limiter:
            results[case.key] = await one(case)

    async with trio.open_nursery() as nursery:
        for case in cases:
            if case.key in results:
                continue
            if case.needs in blocked:
                status, why = blocked[case.needs]
                results[case.key] = _skipped(case, status, why, case.needs, protocol)
            else:
                nursery.start_soon(queued, case)
    report.results = [results[c.key] for c in cases if c.key in results]
    for key in ("initialize.negotiation", "session.new"):
        setup = results.get(key)
        if setup is not None and by_key[key] not in cases:
            if setup.status != "pass":  # the cause of the skips: shown
                report.results.insert(0, setup)
    return report


#: The cases a setup step's failure stops: by what they need.
_NEEDS: dict[str, tuple[str, ...]] = {
    "initialize": ("initialize", "session"),
    "session": ("session",),
}


def _schema_version(version: int) -> str:
    """The schema a connection of protocol ``version`` speaks by default."""
    try:
        return str(getattr(protocol_module(version), "SCHEMA_VERSION", "unknown"))
    except (ValueError, VersionUnavailableError):
        return "unknown"
