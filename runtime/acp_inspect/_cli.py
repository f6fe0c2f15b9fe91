"""The command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import trio

from ._observer import DEFAULT_MAX_REPORTS
from ._proxy import DEFAULT_GRACE, run_proxy

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
        help="seconds the agent has to exit after EOF",
    )
    proxy.add_argument(
        "--max-reports",
        type=int,
        default=DEFAULT_MAX_REPORTS,
        help="findings written to stderr at most",
    )
    proxy.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD ...")
    return parser


def _agent(parser: argparse.ArgumentParser, rest: list[str]) -> list[str]:
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        parser.error("give the agent's command after --")
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
                max_reports=args.max_reports,
            )
        )
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
