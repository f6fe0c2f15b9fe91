"""The command line: ``acp-client [options] -- AGENT_CMD ...``."""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from collections.abc import Iterator
from typing import NoReturn

import trio

from acp_client.app import App, Ended, Options
from acp_client.calls import McpSpec
from acp_client.text import Failure, visible


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, no usage block: ``acp-client: error: ... (see --help)``."""
        self.exit(2, f"acp-client: error: {message} (see --help)\n")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a positive number of seconds"
        )
    return value


def directory(text: str) -> str:
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory")
    return os.path.abspath(text)


def mcp_server(text: str) -> McpSpec:
    name, sep, where = text.partition("=")
    if not sep or not name.strip() or not where.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=COMMAND or NAME=URL")
    if where.startswith(("http://", "https://")):
        return McpSpec(name=name, url=where)
    try:
        command, *args = shlex.split(where)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return McpSpec(name=name, command=command, args=tuple(args))


def parse(argv: list[str]) -> Options:
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    else:
        command = []
    parser = Parser(
        prog="acp-client",
        usage="%(prog)s [options] -- AGENT_CMD ...",
        description="A terminal ACP client: runs the agent, prints the session as it streams.",
    )
    parser.add_argument(
        "--protocol", type=int, choices=(1, 2), help="speak only v1 or v2"
    )
    parser.add_argument(
        "--yes", action="store_true", help="allow once whatever is asked (never always)"
    )
    parser.add_argument("--load", metavar="SESSION_ID", help="load (replay) a session")
    parser.add_argument("--prompt", metavar="TEXT", help="the prompt (default: stdin)")
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        type=directory,
        metavar="DIR",
        help="an additional workspace directory (repeatable)",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        type=mcp_server,
        metavar="NAME=COMMAND|URL",
        help="an MCP server for the session: a command (stdio) or an http(s) URL",
    )
    parser.add_argument("--auth", metavar="ID", help="authenticate with this method")
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="longest wait for each answer but the prompt turn's (default 60)",
    )
    args = parser.parse_args(argv)
    if not command:
        parser.error("the agent command is missing: ... -- AGENT_CMD ...")
    return Options(
        command=command,
        prompt="" if args.prompt is None else args.prompt,
        protocol=args.protocol,
        yes=args.yes,
        load=args.load,
        add_dir=args.add_dir,
        mcp=args.mcp,
        auth=args.auth,
        timeout=args.timeout,
    )


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups."""
    inner: object = getattr(exc, "exceptions", None)  # an exception group's
    if isinstance(inner, tuple):
        for child in inner:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(child, BaseException):
                yield from leaves(child)
    else:
        yield exc


def fail(failure: Failure) -> int:
    print(visible(f"acp-client: {failure}"), file=sys.stderr)
    for line in failure.details:
        print(visible(line), file=sys.stderr)
    return failure.status


def main(argv: list[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    if not options.prompt and not sys.stdin.isatty():
        options.prompt = sys.stdin.read()  # piped: one turn, as --prompt
    elif not options.prompt:
        options.interactive = True  # a person at a terminal: the prompt loop
    options.prompt = options.prompt.strip()
    if not options.prompt and not options.load and not options.interactive:
        return fail(Failure("empty prompt", status=2))
    app = App(options)
    try:
        status = trio.run(app.run)
        return status if app.ended is None else 128 + app.ended
    except BaseException as group:  # trio's nurseries raise exception groups
        errors = list(leaves(group))
        ended = [e for e in errors if isinstance(e, Ended)]
        if ended:  # SIGTERM, SIGHUP: the turn and the agent are ended
            return 128 + ended[0].signum
        if app.quit or any(isinstance(e, KeyboardInterrupt) for e in errors):
            app.screen.line("interrupted")
            return 130
        explained = [app.explain(e) for e in errors]
        known = [f for f in explained if f is not None]
        if len(known) < len(explained):
            raise  # a bug: the traceback is what helps
        app.screen.end_stream()
        return fail(known[0])


if __name__ == "__main__":
    sys.exit(main())
