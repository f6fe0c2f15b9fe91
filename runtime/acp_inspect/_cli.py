"""The command line: ``proxy``, ``check``, ``check-client``, ``view``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Protocol, TypeVar

import msgspec
import trio

from ._cases import CASES
from ._check import (
    DEFAULT_CASE_LIMIT,
    DEFAULT_EOF_GRACE,
    DEFAULT_JOBS,
    DEFAULT_START_TIMEOUT,
    DEFAULT_STREAMING,
    DEFAULT_TIMEOUT,
    CheckReport,
    Limits,
    run_check,
)
from ._check_client import DEFAULT_GRACE as CLIENT_GRACE
from ._check_client import ClientLimits, run_check_client
from ._client_cases import CLIENT_CASES
from ._client_driver import AGENT_PLACEHOLDER
from ._driver import Budget
from ._html import check_html, trace_html
from ._inspector import DEFAULT_MAX_LINE
from ._observer import DEFAULT_MAX_REPORTS
from ._proxy import DEFAULT_GRACE, DEFAULT_KILL_AFTER, DEFAULT_MAX_BACKLOG, run_proxy
from ._trace import DEFAULT_MAX_TRACE_BYTES, read_traces

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m acp_inspect", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    proxy = sub.add_parser(
        "proxy", help="forward to an agent, record and check every line"
    )
    proxy.add_argument("--trace", type=Path, help="append a JSONL trace to this file")
    proxy.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE,
        help=f"seconds the agent has to exit after its stdin closed, then SIGTERM (default {DEFAULT_GRACE:g})",
    )
    proxy.add_argument(
        "--kill-after",
        type=float,
        default=DEFAULT_KILL_AFTER,
        help=f"seconds from SIGTERM to SIGKILL of the agent's group (default {DEFAULT_KILL_AFTER:g})",
    )
    proxy.add_argument(
        "--max-trace-bytes",
        type=int,
        default=DEFAULT_MAX_TRACE_BYTES,
        help=f"bytes of trace per run, then a closing record (default {DEFAULT_MAX_TRACE_BYTES})",
    )
    proxy.add_argument(
        "--max-reports",
        type=int,
        default=DEFAULT_MAX_REPORTS,
        help="findings written to stderr at most",
    )
    proxy.add_argument(
        "--max-backlog",
        type=int,
        default=DEFAULT_MAX_BACKLOG,
        help="bytes forwarded but not yet checked before forwarding waits for the checks",
    )
    proxy.add_argument(
        "--max-line",
        type=int,
        default=DEFAULT_MAX_LINE,
        help=f"longest line checked, in bytes; a longer one is forwarded, discarded from the check while it streams (default {DEFAULT_MAX_LINE})",
    )
    proxy.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD ...")
    check = sub.add_parser("check", help="run the conformance suite against an agent")
    check.add_argument("--protocol", type=int, choices=(1, 2), default=1)
    check.add_argument("--json", type=Path, help="write the JSON report here")
    check.add_argument("--html", type=Path, help="write the HTML report here")
    check.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds without a byte from the agent before a case fails (default {DEFAULT_TIMEOUT:g})",
    )
    check.add_argument(
        "--start-timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT,
        help=f"seconds the agent has to write its first byte (default {DEFAULT_START_TIMEOUT:g})",
    )
    check.add_argument(
        "--case-limit",
        type=float,
        default=DEFAULT_CASE_LIMIT,
        help=f"seconds a case may take in all (default {DEFAULT_CASE_LIMIT:g})",
    )
    check.add_argument(
        "--eof-grace",
        type=float,
        default=DEFAULT_EOF_GRACE,
        help=f"seconds the agent has to exit after its stdin closed (default {DEFAULT_EOF_GRACE:g})",
    )
    check.add_argument(
        "--streaming",
        type=float,
        default=DEFAULT_STREAMING,
        help=f"seconds of streaming before the mid-turn cancel (default {DEFAULT_STREAMING:g})",
    )
    check.add_argument(
        "--max-line",
        type=int,
        default=Budget().max_line,
        help=f"longest line from the agent parsed, in bytes (default {Budget().max_line})",
    )
    check.add_argument(
        "--auth",
        metavar="ID",
        help="authenticate with this method after initialize (as acp-client does)",
    )
    check.add_argument(
        "--case", action="append", help="run only this case (repeatable)"
    )
    check.add_argument(
        "--jobs", type=int, default=DEFAULT_JOBS, help="cases run at once"
    )
    check.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD ...")
    client = sub.add_parser(
        "check-client",
        help="be a scripted agent that a client launches: its conformance suite",
        description=f"Run the client once per case; {AGENT_PLACEHOLDER} in its command line is the agent.",
    )
    client.add_argument("--json", type=Path, help="write the JSON report here")
    client.add_argument("--html", type=Path, help="write the HTML report here")
    client.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds without a byte either way before a case fails (default {DEFAULT_TIMEOUT:g})",
    )
    client.add_argument(
        "--start-timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT,
        help=f"seconds the client has to start its agent and write to it (default {DEFAULT_START_TIMEOUT:g})",
    )
    client.add_argument(
        "--case-limit",
        type=float,
        default=DEFAULT_CASE_LIMIT,
        help=f"seconds a case may take in all (default {DEFAULT_CASE_LIMIT:g})",
    )
    client.add_argument(
        "--grace",
        type=float,
        default=CLIENT_GRACE,
        help=f"seconds the client has to act on its own: exit once its agent left, cancel after SIGINT, end a released command (default {CLIENT_GRACE:g})",
    )
    client.add_argument(
        "--stdin",
        default="",
        help="text written to the client's stdin (then end of file)",
    )
    client.add_argument(
        "--max-line",
        type=int,
        default=Budget().max_line,
        help=f"longest line from the client parsed, in bytes (default {Budget().max_line})",
    )
    client.add_argument(
        "--case", action="append", help="run only this case (repeatable)"
    )
    client.add_argument(
        "--jobs", type=int, default=DEFAULT_JOBS, help="cases run at once"
    )
    client.add_argument(
        "client",
        nargs=argparse.REMAINDER,
        help=f"-- CLIENT_CMD ... {AGENT_PLACEHOLDER} ...",
    )
    view = sub.add_parser("view", help="render a proxy trace as an HTML timeline")
    view.add_argument("trace", type=Path)
    view.add_argument("--html", type=Path, help="output file (default: TRACE.html)")
    return parser


def _agent(parser: argparse.ArgumentParser, rest: list[str]) -> list[str]:
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        parser.error("give the command after --")
    return rest


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "proxy":
        command = _agent(parser, args.agent)
        return trio.run(
            partial(
                run_proxy,
                command,
                trace=args.trace,
                grace_period=args.grace,
                kill_after=args.kill_after,
                max_trace_bytes=args.max_trace_bytes,
                max_reports=args.max_reports,
                max_backlog=args.max_backlog,
                max_line=args.max_line,
            )
        )
    if args.command == "check":
        command = _agent(parser, args.agent)
        cases = _chosen(parser, CASES, args.case)
        report = trio.run(
            partial(
                run_check,
                command,
                protocol=args.protocol,
                limits=Limits(
                    timeout=args.timeout,
                    start_timeout=args.start_timeout,
                    case_limit=args.case_limit,
                    eof_grace=args.eof_grace,
                    streaming=args.streaming,
                ),
                jobs=args.jobs,
                cases=cases,
                auth=args.auth,
                budget=Budget(max_line=args.max_line),
            )
        )
        return _reported(report, args)
    if args.command == "check-client":
        return _check_client(parser, args)
    trace: Path = args.trace
    out: Path = args.html or trace.with_suffix(trace.suffix + ".html")
    out.write_text(trace_html(read_traces(trace), str(trace)), encoding="utf-8")
    print(out)
    return 0


def _line(text: str) -> bytes:
    """``--stdin``'s text as a line (nothing when empty)."""
    if not text or text.endswith("\n"):
        return text.encode()
    return (text + "\n").encode()


def _check_client(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    command = _agent(parser, args.client)
    if not any(AGENT_PLACEHOLDER in arg for arg in command):
        parser.error(
            f"the client's command line must name the agent as {AGENT_PLACEHOLDER}"
        )
    cases = _chosen(parser, CLIENT_CASES, args.case)
    report = trio.run(
        partial(
            run_check_client,
            command,
            limits=ClientLimits(
                timeout=args.timeout,
                start_timeout=args.start_timeout,
                case_limit=args.case_limit,
                grace=args.grace,
            ),
            cases=cases,
            jobs=args.jobs,
            budget=Budget(max_line=args.max_line),
            stdin=_line(args.stdin),
        )
    )
    return _reported(report, args)


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


CaseT = TypeVar("CaseT", bound=_Keyed)


def _chosen(
    parser: argparse.ArgumentParser, cases: tuple[CaseT, ...], keys: list[str] | None
) -> tuple[CaseT, ...]:
    """The cases ``--case`` names (all without it); an unknown name is a usage error."""
    if not keys:
        return cases
    unknown = set(keys) - {c.key for c in cases}
    if unknown:
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    return tuple(c for c in cases if c.key in keys)


def _reported(report: CheckReport, args: argparse.Namespace) -> int:
    """The summary printed, ``--json`` / ``--html`` written; the exit status."""
    print(report.summary())
    if args.json:
        args.json.write_bytes(
            msgspec.json.format(msgspec.json.encode(report.to_json()))
        )
    if args.html:
        args.html.write_text(check_html(report), encoding="utf-8")
    return 1 if report.must_failed else 0


if __name__ == "__main__":
    sys.exit(main())
