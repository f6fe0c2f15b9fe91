"""``python -m acp_inspect check-client -- CLIENT_CMD ... {agent} ...``: the
check is a scripted agent that the client under test launches, once per case.

Each case gets a temporary directory of its own: ``work/`` (the client's
working directory, where it opens its session), ``outside/`` beside it, the
relay's executable and socket, and HOME and the XDG directories (as
``check`` gives an agent).  The report is ``check``'s
(:class:`~acp_inspect._check.CheckReport`: the summary, JSON, HTML), the
client's findings failing a case where ``check`` counts the agent's.

Bounds, per case: ``start_timeout`` seconds for the client to write its
first byte to its agent, then ``timeout`` seconds without a byte either
way, ``case_limit`` seconds in all; ``grace`` seconds for what the client
is to do on its own (exit after its agent left, send ``session/cancel``
after SIGINT, end a released command).  A client that stops reading blocks
the check's writes, one that exits ends the wait: each is a verdict within
the case's bounds.  What is kept of the wire is the ``Budget`` of ``check``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio
from acp_host import socket_directory

from ._cases import CaseFailed, NotApplicable
from ._check import (
    CASE_GRACE,
    DEFAULT_CASE_LIMIT,
    DEFAULT_JOBS,
    DEFAULT_OVERSIZED,
    DEFAULT_SETTLE,
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    CaseResult,
    CheckReport,
    Status,
    case_env,
)
from ._client_cases import CLIENT_CASES
from ._client_context import ClientCase, ClientCaseContext, agent_responder
from ._client_driver import AGENT_PLACEHOLDER, ClientUnderTest
from ._driver import AgentExited, Budget, LineTooLong
from ._message import CLIENT

__all__ = [
    "DEFAULT_GRACE",
    "ClientLimits",
    "run_check_client",
    "run_client_case",
]

#: Seconds the client has to do what a case waits for on its own.
DEFAULT_GRACE = 5.0
#: Bytes of the client's output (stdout and stderr) shown in a case's report.
OUTPUT_SHOWN = 4096


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """The time a case has (see the module's text)."""

    timeout: float = DEFAULT_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    case_limit: float = DEFAULT_CASE_LIMIT
    grace: float = DEFAULT_GRACE


async def run_client_case(
    case: ClientCase,
    command: Sequence[str],
    *,
    limits: ClientLimits,
    settle: float = DEFAULT_SETTLE,
    oversized_bytes: int = DEFAULT_OVERSIZED,
    baseline: int | None = None,
    budget: Budget | None = None,
    stdin: bytes = b"",
) -> CaseResult:
    """One case against a fresh client process in a temporary directory."""
    # the relay's socket apart from the case's directory: a long TMPDIR must
    # not make its path longer than a Unix socket's may be
    sockets = Path(socket_directory("acp-check-client-", "agent.sock"))
    try:
        with tempfile.TemporaryDirectory(prefix="acp-check-client-") as name:
            root = Path(name)
            cwd, env = case_env(root)
            outside = root / "outside"
            outside.mkdir()
            client = ClientUnderTest(
                command,
                root=root,
                socket=sockets / "agent.sock",
                budget=budget,
                cwd=cwd,
                env=env,
                stdin=stdin,
            )
            ctx = ClientCaseContext(
                client,
                cwd,
                str(outside),
                settle,
                limits.grace,
                oversized_bytes,
                baseline=baseline,
            )
            client.responder = agent_responder(ctx)
            status, detail = await _drive(case, client, ctx, limits)
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    findings = list(client.inspector.findings)
    if status == "pass" and any(f.is_must and f.direction == CLIENT for f in findings):
        status, detail = "fail", "the client broke a rule (see findings)"
    return CaseResult(
        case,
        status,
        detail,
        client.now(),
        client.timeline,
        findings,
        client.stderr[-OUTPUT_SHOWN:].decode("utf-8", "replace"),
        1,
        step=ctx.step if status == "fail" and ctx.step else "",
        dropped=dict(client.inspector.dropped),
        peer=CLIENT,
        exit_code=ctx.exit_code,
    )


async def _drive(
    case: ClientCase,
    client: ClientUnderTest,
    ctx: ClientCaseContext,
    limits: ClientLimits,
) -> tuple[Status, str]:
    status: Status = "pass"
    detail = ""
    async with trio.open_nursery() as nursery:
        try:
            await client.run(nursery)
        except OSError as exc:
            nursery.cancel_scope.cancel()
            return "fail", f"the client could not start: {exc}"
        with trio.move_on_after(limits.case_limit) as overall:
            idle = trio.CancelScope(deadline=trio.current_time() + limits.start_timeout)
            started = False

            def progress(from_client: bool) -> None:
                nonlocal started
                started = started or from_client
                if started:
                    idle.deadline = trio.current_time() + limits.timeout

            client.on_line = progress
            with idle:
                try:
                    await case.run(ctx)
                except CaseFailed as exc:
                    status, detail = "fail", str(exc)
                except NotApplicable as exc:
                    status, detail = "n/a", str(exc)
                except (AgentExited, LineTooLong) as exc:
                    status, detail = "fail", f"{exc}; {client.where()}"
            if idle.cancelled_caught:
                status = "fail"
                if not client.connected.is_set():
                    detail = f"the client did not start its agent in {limits.start_timeout:g} s (--start-timeout); is {AGENT_PLACEHOLDER} in its command line?"
                elif not client.last_received:
                    detail = f"the client wrote nothing to its agent in {limits.start_timeout:g} s (--start-timeout); {client.where()}"
                else:
                    detail = f"nothing either way for {limits.timeout:g} s (--timeout): the client stopped reading or answering; {client.where()}"
        if overall.cancelled_caught:
            status = "fail"
            detail = f"the case took over {limits.case_limit:g} s (--case-limit); {client.where()}"
        if status == "fail":
            client.note(detail)
        client.budget_note()
        client.done()
        await client.stop(CASE_GRACE)
        nursery.cancel_scope.cancel()
    return status, detail


def _skipped(case: ClientCase, why: str) -> CaseResult:
    return CaseResult(case, "skip", why, 0.0, [], [], "", 1, step="turn", peer=CLIENT)


async def run_check_client(
    command: Sequence[str],
    *,
    limits: ClientLimits | None = None,
    settle: float = DEFAULT_SETTLE,
    oversized_bytes: int = DEFAULT_OVERSIZED,
    cases: Sequence[ClientCase] = CLIENT_CASES,
    jobs: int = DEFAULT_JOBS,
    budget: Budget | None = None,
    stdin: bytes = b"",
) -> CheckReport:
    """Run ``cases`` (default: all), each against a fresh client started
    with ``command`` (``{agent}`` in it: the scripted agent), up to ``jobs``
    at a time.  ``prompt.turn`` runs first whether asked for or not: the
    client's exit status after a normal turn is what the other cases compare
    with; when it fails, the other cases are skipped (one summary line)."""
    limits = limits or ClientLimits()
    report = CheckReport(list(command), 1, peer="client")
    by_key = {c.key: c for c in CLIENT_CASES}
    results: dict[str, CaseResult] = {}

    async def one(case: ClientCase, baseline: int | None = None) -> CaseResult:
        return await run_client_case(
            case,
            command,
            limits=limits,
            settle=settle,
            oversized_bytes=oversized_bytes,
            baseline=baseline,
            budget=budget,
            stdin=stdin,
        )

    setup = await one(by_key["prompt.turn"])
    results["prompt.turn"] = setup
    baseline = setup.exit_code
    limiter = trio.CapacityLimiter(max(1, jobs))

    async def queued(case: ClientCase) -> None:
        async with limiter:
            results[case.key] = await one(case, baseline)

    async with trio.open_nursery() as nursery:
        for case in cases:
            if case.key in results:
                continue
            if setup.status != "pass":
                results[case.key] = _skipped(case, "the setup failed (see prompt.turn)")
            else:
                nursery.start_soon(queued, case)
    report.results = [results[c.key] for c in cases if c.key in results]
    if by_key["prompt.turn"] not in cases and setup.status != "pass":
        report.results.insert(0, setup)
    return report
