"""``python -m acp_echo`` (or ``acp-echo-agent``): the echo agent on stdio."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from pathlib import Path

import acp_trio
import trio

from acp_echo.agent import (
    EchoAgentV1,
    EchoAgentV1Unstable,
)
from acp_echo.agent_v2 import EchoAgentV2, EchoAgentV2Unstable
from acp_echo.store import SETTINGS, Store


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="acp-echo-agent",
        description="An ACP agent that echoes its prompts (protocol v1 and v2).",
    )
    parser.add_argument(
        "--state-dir", type=Path, help="keep sessions in DIR (survive a restart)"
    )
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=0.02,
        help="seconds between streamed chunks (default 0.02)",
    )
    parser.add_argument(
        "--unstable",
        action="store_true",
        help="speak the schema's unstable surface (session/fork, ...)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("ECHO_AGENT_LOG", "WARNING"),
        stream=sys.stderr,
        format="echo_agent: %(message)s",
    )
    SETTINGS.store = Store(args.state_dir)
    SETTINGS.chunk_delay = args.chunk_delay
    if args.unstable:
        agents: acp_trio.Offer = {1: EchoAgentV1Unstable, 2: EchoAgentV2Unstable}
    else:
        agents = {1: EchoAgentV1, 2: EchoAgentV2}
    trio.run(
        functools.partial(acp_trio.serve_agent_stdio, agents, unstable=args.unstable)
    )


if __name__ == "__main__":
    main()
