"""``acp_inspect check`` against the ACP agents people run, from npm: writes docs/inspect-agents.md.

    python tools/inspect_real_agents.py [--cache DIR] [--only NAME ...] [--timeout S]

Not part of the test suite (it downloads the agents; it takes minutes).
Each agent is installed with npm at a pinned version into ``--cache``
(default ``~/.cache/acp-inspect-agents``) and checked offline: each case
has a temporary HOME (``check`` gives every case its own), no credential
of the user's reaches it, and the model endpoints the agents read from the
environment point at a loopback stand-in on 127.0.0.1 that answers every
request ``503`` (a model that is down).  So the protocol cases (JSON-RPC
hygiene, initialize, sessions, cancellation of a turn that fails) say what
the agent does; the prompt cases say how it handles a model that answers
with an error, not how it runs a real turn.  An agent that requires
authentication before ``session/new`` has its session cases reported not
applicable (the spec allows it).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "inspect-agents.md"


@dataclass(frozen=True)
class Agent:
    name: str
    package: str  # npm name@version
    command: list[str]  # the bin and its arguments
    env: dict[str, str] = field(default_factory=dict[str, str])


def agents(model: str) -> list[Agent]:
    """The agents, their model endpoints pointed at ``model`` (the stand-in)."""
    anthropic = {"ANTHROPIC_BASE_URL": model, "ANTHROPIC_API_KEY": "stand-in"}
    return [
        Agent(
            "codex-acp",
            "@zed-industries/codex-acp@0.16.0",
            ["codex-acp"],
            {"OPENAI_BASE_URL": model + "/v1"},
        ),
        Agent(
            "claude-agent-acp",
            "@zed-industries/claude-agent-acp@0.23.1",
            ["claude-agent-acp"],
            anthropic,
        ),
        Agent(
            "claude-code-acp",
            "@zed-industries/claude-code-acp@0.16.2",
            ["claude-code-acp"],
            anthropic,
        ),
        Agent(
            "gemini-cli",
            "@google/gemini-cli@0.61.0",
            ["gemini", "--experimental-acp"],
            {"GEMINI_API_KEY": "stand-in", "GOOGLE_GEMINI_BASE_URL": model},
        ),
        Agent("opencode", "opencode-ai@1.18.33", ["opencode", "acp"]),
        Agent("pi-acp", "pi-acp@0.0.34", ["pi-acp"]),
    ]


#: Asked for, not found on npm under that name (reported as such).
NOT_FOUND = {"cursor-agent-acp": "no npm package of that name (npm view: E404)"}

#: What the last run (2026-12-01, a shared 2-core machine at a load average
#: of 20-26) showed of the run itself rather than of the agent.
NOTES = {
    "claude-agent-acp": "session/new failing -32603 'Query closed before response received' is the agent's Claude process ending against the model stand-in (no model, no login)",
    "claude-code-acp": "the start and no-progress timeouts may be the machine's load (its first answer came 32 s after initialize was sent)",
    "gemini-cli": "the cases where it wrote nothing in 60 s are its cold start under the machine's load (it took 35-49 s to answer initialize in others); re-run on a quiet machine with `--start-timeout` raised",
    "opencode": "it wrote nothing in 60 s on this loaded machine (its first run migrates its database in the temporary HOME): re-run with `--start-timeout` raised before reading anything into it",
    "pi-acp": "session/new failing is this run's doing: pi-acp drives the `pi` executable, which was not installed; the initialize cases are the adapter's own",
}

#: Variables of the user's that must not reach an agent (credentials, config).
SCRUB = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "ANTHROPIC",
    "OPENAI",
    "GEMINI",
    "GOOGLE",
)


class _Down(http.server.BaseHTTPRequestHandler):
    """The model stand-in: every request answered 503 with a JSON error."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(min(length, 1 << 24))
        body = (
            b'{"error": {"type": "overloaded_error", "message": "stand-in: no model"}}'
        )
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


def install(agent: Agent, cache: Path) -> Path | None:
    """The agent's bin, installed under ``cache`` (once)."""
    prefix = cache / agent.name
    binary = prefix / "node_modules" / ".bin" / agent.command[0]
    if not binary.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(prefix),
                "--no-audit",
                "--no-fund",
                agent.package,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if done.returncode != 0:
            print(
                f"{agent.name}: npm install failed: {done.stderr[-500:]}",
                file=sys.stderr,
            )
            return None
    return binary


def run(agent: Agent, binary: Path, out: Path, timeout: float) -> dict[str, Any]:
    env = {
        k: v for k, v in os.environ.items() if not any(s in k.upper() for s in SCRUB)
    }
    env.update(agent.env)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "runtime"), str(ROOT / "generated")]
    )
    report = out / f"{agent.name}.json"
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_inspect",
            "check",
            "--jobs",
            "2",
            "--timeout",
            str(timeout),
            "--json",
            str(report),
            "--",
            str(binary),
            *agent.command[1:],
        ],
        env=env,
        capture_output=True,
        timeout=3600,
        check=False,
    )
    data: dict[str, Any] = json.loads(report.read_text()) if report.exists() else {}
    data["wall"] = time.monotonic() - started
    return data


def _cell(text: str, limit: int = 220) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def page(
    results: dict[str, tuple[Agent, dict[str, Any]]], missing: dict[str, str]
) -> str:
    lines = [
        "# `check` against the agents people run",
        "",
        "Produced by `python tools/inspect_real_agents.py` (not part of the test suite):",
        "each agent from npm at the version named, checked offline with `python -m",
        "acp_inspect check --jobs 2` (each case with a temporary HOME, no credential,",
        "the model endpoints pointed at a loopback stand-in answering every request",
        "503). The protocol cases say what the agent does; the prompt cases say how it",
        "handles a model that fails, not how it runs a real turn. Each row gives the",
        "case's detail and the kinds of finding the agent's lines broke (see the JSON",
        "report the script writes for every line of evidence). Re-run it to refresh.",
        "",
        "The run below was made on a shared 2-core machine at a load average of 20-26:",
        "a case that failed on `--start-timeout` or `--timeout` may be the load, not the",
        "agent (each agent's note says which). The findings and the answers quoted are",
        "what the agents sent.",
        "",
    ]
    for name, (agent, data) in results.items():
        summary = data.get("summary", {})
        lines += [f"## {name} (`{agent.package}`)", ""]
        if name in NOTES:
            lines += [f"Note on this run: {NOTES[name]}.", ""]
        if not summary:
            lines += ["The check did not produce a report.", ""]
            continue
        lines += [
            f"`{' '.join(agent.command)}`: {summary.get('pass')} passed, {summary.get('fail')} failed, "
            f"{summary.get('n/a')} not applicable, {summary.get('skip', 0)} skipped"
            + ("; MUST violations found" if summary.get("must_failed") else "")
            + (f" ({data['wall']:.0f} s)." if data.get("wall") else "."),
            "",
            "| case | status | detail | findings |",
            "|---|---|---|---|",
        ]
        for case in data.get("cases", []):
            kinds = sorted(
                {
                    f"{f['level']} {f['cite']} [{f['rule']}]"
                    for f in case["findings"]
                    if f["dir"] == "from_agent"
                }
            )
            lines.append(
                f"| `{case['case']}` | {case['status']} | {_cell(case['detail'])} | {_cell('; '.join(kinds))} |"
            )
        lines.append("")
    for name, why in missing.items():
        lines += [f"## {name}", "", f"Not run: {why}.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "acp-inspect-agents"
    )
    parser.add_argument("--only", action="append", help="only this agent (repeatable)")
    parser.add_argument("--timeout", type=float, default=30.0, help="check --timeout")
    parser.add_argument(
        "--render",
        action="store_true",
        help="only write the page from the last reports",
    )
    args = parser.parse_args()
    if args.render:
        reports = args.cache / "reports"
        done: dict[str, tuple[Agent, dict[str, Any]]] = {}
        for agent in agents("http://127.0.0.1"):
            report = reports / f"{agent.name}.json"
            if report.exists():
                data = json.loads(report.read_text())
                data["wall"] = 0.0
                done[agent.name] = (agent, data)
        PAGE.write_text(page(done, dict(NOT_FOUND)), encoding="utf-8")
        print(PAGE)
        return 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Down)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    model = f"http://127.0.0.1:{server.server_address[1]}"
    out = args.cache / "reports"
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, tuple[Agent, dict[str, Any]]] = {}
    missing = dict(NOT_FOUND)
    for agent in agents(model):
        if args.only and agent.name not in args.only:
            continue
        binary = install(agent, args.cache)
        if binary is None:
            missing[agent.name] = f"`npm install {agent.package}` failed"
            continue
        print(f"{agent.name}: checking", file=sys.stderr)
        results[agent.name] = (agent, run(agent, binary, out, args.timeout))
    server.shutdown()
    PAGE.write_text(page(results, missing), encoding="utf-8")
    print(PAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
