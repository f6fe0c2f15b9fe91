"""The command line: ``python -m acp_conductor [--proxy CMD]... [-- AGENT_CMD ...]``.

Each ``--proxy CMD`` is one string, split as a shell would, in chain order
from the client's side.  With an agent command the conductor is a terminal
agent to its client (it expects ``initialize``); without one it is a proxy
(it expects ``proxy/initialize``) and nests inside another conductor.
``--trace DIR`` records every hop with ``acp_inspect proxy`` (its trace and
rules): ``DIR/hop-N-NAME.jsonl``, N in chain order.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import trio
from acp_core import Limits
from acp_host import protocol_stdio

from ._components import CommandComponent
from ._conductor import DEFAULT_INITIALIZE_TIMEOUT, DEFAULT_STALL_TIMEOUT, run_chain

__all__ = ["build_components", "main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m acp_conductor",
        description="Run ACP proxies in front of an agent, as one agent on stdin/stdout.",
    )
    parser.add_argument(
        "--proxy",
        action="append",
        default=[],
        metavar="CMD",
        help="a proxy's command (one string, split as a shell would); repeat, in order from the client",
    )
    parser.add_argument(
        "--trace", metavar="DIR", help="record every hop with acp_inspect into DIR"
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=2.0,
        help="seconds a component has to exit after its stdin closed, then SIGTERM (default 2)",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=1.0,
        help="seconds from SIGTERM to SIGKILL of a component's group (default 1)",
    )
    parser.add_argument(
        "--stall-timeout",
        type=float,
        default=DEFAULT_STALL_TIMEOUT,
        help="seconds a component may leave its input unread while its buffer is full (default %(default)g)",
    )
    parser.add_argument(
        "--initialize-timeout",
        type=float,
        default=DEFAULT_INITIALIZE_TIMEOUT,
        help="seconds the chain has to answer initialize (default %(default)g)",
    )
    parser.add_argument(
        "--max-message-size",
        type=int,
        default=Limits().max_message_size,
        help="bytes of one message on any hop (default %(default)d)",
    )
    parser.add_argument(
        "--no-mcp-bridge",
        action="store_true",
        help="pass the agent's initialize answer unchanged: no mcpCapabilities.acp "
        'advertised, no "type": "acp" MCP server bridged to stdio for an agent without it',
    )
    parser.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD ...")
    return parser


def build_components(
    proxies: Sequence[str],
    agent: Sequence[str],
    *,
    trace: str | None = None,
    grace: float = 2.0,
    kill_after: float = 1.0,
) -> list[CommandComponent]:
    """The chain's components from the command line's commands."""
    commands = [shlex.split(p) for p in proxies]
    if agent:
        commands.append(list(agent))
    components: list[CommandComponent] = []
    for n, argv in enumerate(commands):
        if not argv:
            raise ValueError("an empty component command")
        name = f"{os.path.basename(argv[0])}#{n}"
        if trace is not None:
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(argv[-1]))[:40]
            path = Path(trace) / f"hop-{n}-{slug}.jsonl"
            argv = [
                sys.executable,
                "-m",
                "acp_inspect",
                "proxy",
                "--trace",
                str(path),
                "--",
                *argv,
            ]
        components.append(
            CommandComponent(argv, name, grace_period=grace, kill_after=kill_after)
        )
    return components


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    agent: list[str] = list(args.agent)
    if agent[:1] == ["--"]:
        del agent[0]
    if not agent and not args.proxy:
        _parser().error("give an agent command (after --) or at least one --proxy")
    if args.trace is not None:
        Path(args.trace).mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.WARNING, format="acp_conductor: %(message)s")
    components = build_components(
        args.proxy,
        agent,
        trace=args.trace,
        grace=args.grace,
        kill_after=args.kill_after,
    )
    limits = Limits(max_message_size=args.max_message_size)

    async def run() -> int:
        with protocol_stdio() as fds:
            client = trio.StapledStream(
                trio.lowlevel.FdStream(fds.output), trio.lowlevel.FdStream(fds.input)
            )
            ended = await run_chain(
                client,
                components,
                has_agent=bool(agent),
                limits=limits,
                stall_timeout=args.stall_timeout,
                initialize_timeout=args.initialize_timeout,
                mcp_bridge=not args.no_mcp_bridge,
            )
        if ended.failure is not None:
            print(f"acp_conductor: {ended.failure}", file=sys.stderr)
            return 1
        return 0

    return trio.run(run)
