"""The teaching proxies in a chain in front of a real agent from npm: writes the
results section of docs/proxies.md.

    python tools/real_agent_chain.py [--cache DIR] [--agent NAME ...] [--timeout S]

Not part of the test suite (it downloads the agents). Each agent is installed
as ``tools/inspect_real_agents.py`` installs it (same table, same pinned
versions, same cache) and run offline: ``HOME`` in a temporary directory, none
of the user's credentials, its model endpoint pointed at
``tools/model_standin.py`` on 127.0.0.1, which speaks the Anthropic Messages
API, records every request and plays one turn: it asks the agent's ``Read``
tool for a file of the project holding :data:`TOOL_SECRET`, then answers
:data:`REPLY` (a text holding two more secrets). A small scripted client (every byte it reads kept)
drives one turn through ``python -m acp_conductor`` twice:

- ``notes + redaction``: ``examples/proxy_context_injection.py NOTES.md`` then
  ``examples/proxy_redaction.py`` (``ACP_REDACT`` naming the second secret);
- ``notes only``: the same without the redaction proxy, to show the secrets do
  come back when nothing masks them.

It checks that the notes reach the model stand-in (in the recorded request
body, before the prompt), that the agent ran the tool, that no secret is in any
byte the client read through the redaction proxy (nor in the streamed text
joined) while each reaches the client without it, that each turn ends
``end_turn``, and that no process of the run is left once the conductor exits.
The section between the markers of docs/proxies.md is rewritten with what was
seen, pass or fail.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspect_real_agents import SCRUB, Agent, agents, install
from model_standin import ModelStandIn, Script, ToolUse

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "proxies.md"
BEGIN = "<!-- real-agent-chain: begin (written by tools/real_agent_chain.py) -->"
END = "<!-- real-agent-chain: end -->"
EXAMPLES = ROOT / "examples"

SECRET = "sk-live0123456789abcdefXYZ"  # caught by the redaction proxy's pattern
LITERAL = "hunter2-standin"  # caught only because ACP_REDACT names it
REPLY = f"Here is the key {SECRET} and the password {LITERAL}, as asked."
#: In a file of the project the model asks the agent to read (Claude Code's
#: ``Read`` tool): the secret comes back in the tool's output, not the model's text.
TOOL_SECRET = "AKIAABCDEFGHIJKLMNOP"
NOTES_MARK = "NOTES-7f3a"
NOTES = f"{NOTES_MARK}: this project's tests run with nox; keys live in the vault."
PROMPT = "PROMPT-51c2: say hello."
#: Agents whose model API the stand-in speaks.
ANTHROPIC_AGENTS = ("claude-code-acp", "claude-agent-acp")
#: Bytes of the client's reading kept in memory at most.
MAX_READ_BYTES = 16 << 20


@dataclass(frozen=True)
class Turn:
    """One turn driven through one chain."""

    label: str
    read: bytes  # every byte the client read
    stop_reason: str | None
    failure: str | None  # why the turn did not end, if it did not
    seconds: float
    running: list[str]  # processes of the run alive when the turn ended
    exit_status: int | None  # the conductor's, after its input closed
    left_behind: list[str]  # processes of the run alive after the conductor exited
    failed_handlers: list[str]  # "handler failed" lines of the chain's stderr


@dataclass(frozen=True)
class Check:
    what: str
    passed: bool
    evidence: str


def _reader(stream: Any, lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(b"")


def _alive_with(mark: str) -> list[str]:
    """Processes (not zombies) whose environment holds ``ACP_CHAIN_RUN=mark``."""
    found = []
    needle = f"ACP_CHAIN_RUN={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            found.append(f"{entry.name} {cmd[:120]}")
        except OSError:
            continue
    return found


def drive(
    label: str, command: list[str], env: dict[str, str], cwd: Path, timeout: float
) -> Turn:
    """initialize, session/new, one session/prompt; a permission asked is
    allowed once, any other request of the agent's refused."""
    mark = uuid.uuid4().hex
    env = {**env, "ACP_CHAIN_RUN": mark}
    started = time.monotonic()
    errors = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    read = bytearray()
    deadline = started + timeout

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def call(n: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        send({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        while True:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if not line:
                raise EOFError("the conductor closed its output")
            if len(read) + len(line) <= MAX_READ_BYTES:
                read.extend(line)
            message = json.loads(line)
            if message.get("method") == "session/request_permission":
                options = message["params"].get("options") or []
                chosen = next(
                    (o for o in options if o.get("kind") == "allow_once"),
                    options[0] if options else {"optionId": "none"},
                )
                outcome = {"outcome": "selected", "optionId": chosen["optionId"]}
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"outcome": outcome},
                    }
                )
            elif "method" in message and "id" in message:
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not offered"},
                    }
                )
            elif message.get("id") == n and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {json.dumps(message['error'])}")
                result: dict[str, Any] = message["result"]
                return result

    stop_reason = failure = None
    try:
        call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = call(2, "session/new", {"cwd": str(cwd), "mcpServers": []})
        prompt = [{"type": "text", "text": PROMPT}]
        answer = call(
            3,
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": prompt},
        )
        stop_reason = answer.get("stopReason")
    except queue.Empty:
        failure = f"no answer within {timeout:.0f} s"
    except (EOFError, RuntimeError, ValueError) as error:
        failure = str(error)[:500]
    seconds = time.monotonic() - started
    running = _alive_with(mark)
    proc.stdin.close()
    try:
        exit_status: int | None = proc.wait(60)
    except subprocess.TimeoutExpired:
        exit_status = None
    left = _alive_with(mark)
    if exit_status is None or left:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        proc.wait(10)
    errors.seek(0)
    failed = [
        line.decode(errors="replace").strip()
        for line in errors.read(MAX_READ_BYTES).splitlines()
        if b"handler failed" in line or line.startswith(b"msgspec.")
    ]
    errors.close()
    return Turn(
        label,
        bytes(read),
        stop_reason,
        failure,
        seconds,
        running,
        exit_status,
        left,
        failed[:6],
    )


def _programs(processes: list[str]) -> str:
    """Short names of ``processes`` ("pid cmdline" each)."""
    names = []
    for process in processes:
        words = process.split()[1:]
        script = next((w for w in words[1:] if w.endswith((".py", ".js"))), "")
        module = words[words.index("-m") + 1] if "-m" in words[:-1] else ""
        names.append(Path(module or script or words[0]).name if words else "?")
    return ", ".join(names)


def _messages(read: bytes) -> list[dict[str, Any]]:
    """The JSON objects among the lines the client read."""
    found = []
    for line in read.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            found.append(message)
    return found


def _times(n: int) -> str:
    return {0: "0 times", 1: "once"}.get(n, f"{n} times")


def said(read: bytes) -> str:
    """The agent's streamed text as the client shows it: every
    ``agent_message_chunk`` and ``agent_thought_chunk`` text joined."""
    text = []
    for message in _messages(read):
        params = message.get("params") or {}
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict) and update.get("sessionUpdate") in (
            "agent_message_chunk",
            "agent_thought_chunk",
        ):
            content = update.get("content") or {}
            text.append(str(content.get("text", "")))
    return "".join(text)


def _holding(read: bytes, secret: str) -> list[dict[str, Any]]:
    """The messages the client read that hold ``secret`` in a string once
    decoded (JSON escapes undone)."""
    return [m for m in _messages(read) if secret in json.dumps(m, ensure_ascii=False)]


def carriers(read: bytes, secret: str) -> list[str]:
    """The kinds of message that hold ``secret`` whole: the session update's
    kind, or the method."""
    kinds: dict[str, None] = {}
    for message in _holding(read, secret):
        update = (message.get("params") or {}).get("update") or {}
        kind = update.get("sessionUpdate") or message.get("method") or "answer"
        kinds[str(kind)] = None
    return list(kinds)


def checks(
    with_redaction: Turn, without: Turn, bodies: list[bytes], unknown: list[str]
) -> list[Check]:
    """What the two turns and the stand-in's records show."""
    found = []
    for turn in (with_redaction, without):
        found.append(
            Check(
                f"`{turn.label}`: the turn ends `end_turn`",
                turn.stop_reason == "end_turn",
                f"stopReason {turn.stop_reason!r} after {turn.seconds:.1f} s"
                + (f"; {turn.failure}" if turn.failure else ""),
            )
        )
    first = next((b for b in bodies if NOTES_MARK.encode() in b), None)
    found.append(
        Check(
            "the notes reach the model stand-in, before the prompt",
            first is not None
            and PROMPT.encode() in first
            and first.index(NOTES_MARK.encode()) < first.index(PROMPT.encode()),
            f"{sum(NOTES_MARK.encode() in b for b in bodies)} of {len(bodies)} "
            "`POST /v1/messages` bodies hold the notes"
            + (
                f" (notes at byte {first.index(NOTES_MARK.encode())}, prompt at "
                f"{first.index(PROMPT.encode())})"
                if first is not None and PROMPT.encode() in first
                else ""
            ),
        )
    )
    said_with, said_without = said(with_redaction.read), said(without.read)
    results = [b for b in bodies if b"tool_result" in b]
    found.append(
        Check(
            "the agent runs the model's `Read` call and sends its output back",
            any(TOOL_SECRET.encode() in b for b in results),
            f"{len(results)} of {len(bodies)} `POST /v1/messages` bodies hold a "
            f"tool result, {sum(TOOL_SECRET.encode() in b for b in results)} "
            f"of them `{TOOL_SECRET}` (the file's content)",
        )
    )
    for secret in (SECRET, LITERAL, TOOL_SECRET):
        got = with_redaction.read.count(secret.encode())
        decoded = len(_holding(with_redaction.read, secret))
        shown = said_with.count(secret)
        found.append(
            Check(
                f"`{with_redaction.label}`: `{secret}` is in no byte the client read, "
                "no message once decoded, nor the text it shows (the chunks joined)",
                got == 0
                and decoded == 0
                and shown == 0
                and with_redaction.stop_reason == "end_turn",
                f"{_times(got)} in {len(with_redaction.read)} bytes, in "
                f"{decoded} of {len(_messages(with_redaction.read))} messages, "
                f"{_times(shown)} in {len(said_with)} characters of text, which reads "
                f"{json.dumps(said_with[:200])}",
            )
        )
        seen = without.read.count(secret.encode())
        shown = said_without.count(secret)
        where = carriers(without.read, secret)  # whole in a decoded message
        found.append(
            Check(
                f"`{without.label}`: `{secret}` reaches the client",
                shown > 0 or bool(where),
                f"{_times(shown)} in the text the client shows, {_times(seen)} whole "
                f"in its bytes"
                + (f" (in {', '.join(f'`{w}`' for w in where)})" if where else "")
                + (
                    f"; the text reads {json.dumps(said_without[:200])}"
                    if shown
                    else ""
                )
                + (
                    " (the agent streams the text cut across chunks)"
                    if shown and not seen
                    else ""
                ),
            )
        )
    for turn in (with_redaction, without):
        found.append(
            Check(
                f"`{turn.label}`: the conductor exits once its input closes, leaving no process",
                turn.exit_status is not None and not turn.left_behind,
                f"{len(turn.running)} processes of the run when the turn ended "
                f"({_programs(turn.running)}); exit status {turn.exit_status}"
                + (
                    f"; left: {'; '.join(turn.left_behind)}" if turn.left_behind else ""
                ),
            )
        )
    for turn in (with_redaction, without):
        found.append(
            Check(
                f"`{turn.label}`: every proxy handler decoded what it was given",
                not turn.failed_handlers,
                "; ".join(f"`{x}`" for x in turn.failed_handlers)
                or "no handler failed (the chain's stderr)",
            )
        )
    found.append(
        Check(
            "the agent called no path the stand-in does not speak",
            not unknown,
            "; ".join(unknown) if unknown else "none",
        )
    )
    return found


def run_agent(name: str, binary: Path, timeout: float) -> tuple[list[Check], list[str]]:
    """Both turns in front of the agent ``name``; the checks and the stand-in's
    request log."""
    with tempfile.TemporaryDirectory(prefix="real-agent-chain-") as tmp:
        home = Path(tmp) / "home"
        project = Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        notes = project / "NOTES.md"
        notes.write_text(NOTES, encoding="utf-8")
        secrets = project / "deploy.env"
        secrets.write_text(f"AWS_ACCESS_KEY_ID={TOOL_SECRET}\n", encoding="utf-8")
        read = ToolUse("Read", {"file_path": str(secrets)})
        with ModelStandIn(Script(reply=REPLY, tool=read)) as standin:
            agent = next(a for a in agents(standin.url) if a.name == name)
            env = {
                k: v
                for k, v in os.environ.items()
                if not any(s in k.upper() for s in SCRUB)
            }
            env.update(agent.env)
            env.update(
                HOME=str(home),
                ACP_REDACT=LITERAL,
                PYTHONPATH=os.pathsep.join(
                    [str(ROOT / "runtime"), str(ROOT / "generated")]
                ),
                # Claude Code refuses to run as root unless told it is in a sandbox
                # (this one is: a temporary HOME, no network but loopback).
                IS_SANDBOX="1",
                # and it reaches for hosts other than the model's without these
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                DISABLE_TELEMETRY="1",
                DISABLE_AUTOUPDATER="1",
                DISABLE_ERROR_REPORTING="1",
            )
            notes_proxy = (
                f"{sys.executable} {EXAMPLES / 'proxy_context_injection.py'} {notes}"
            )
            redaction_proxy = f"{sys.executable} {EXAMPLES / 'proxy_redaction.py'}"
            base = [
                sys.executable,
                "-m",
                "acp_conductor",
                "--initialize-timeout",
                str(timeout),
            ]
            agent_cmd = ["--", str(binary), *agent.command[1:]]
            turns = []
            for label, proxies in (
                ("notes + redaction", [notes_proxy, redaction_proxy]),
                ("notes only", [notes_proxy]),
            ):
                command = [*base]
                for proxy in proxies:
                    command += ["--proxy", proxy]
                print(f"{agent.name}: {label}", file=sys.stderr)
                turns.append(
                    drive(label, [*command, *agent_cmd], env, project, timeout)
                )
            records = standin.records()
    bodies = [
        r.body for r in records if r.known and r.path.split("?")[0] == "/v1/messages"
    ]
    unknown = [f"{r.method} {r.path}" for r in records if not r.known]
    log = [f"{r.method} {r.path} ({len(r.body)} bytes)" for r in records]
    return checks(turns[0], turns[1], bodies, unknown), log


def section(
    results: dict[str, tuple[Agent, list[Check], list[str]]], missing: dict[str, str]
) -> str:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        BEGIN,
        "",
        f"Last run {now} by `python tools/real_agent_chain.py` (not part of the",
        "test suite: it downloads the agents). Each agent from npm at the version",
        "named, `HOME` in a temporary directory, no credential, its model endpoint",
        "pointed at `tools/model_standin.py` on 127.0.0.1 (the Anthropic Messages",
        "API, streamed; every request recorded), which first calls the agent's `Read`",
        f"tool on a file of the project holding `{TOOL_SECRET}`, then answers",
        f'"{REPLY}". One turn (`{PROMPT}`) through',
        "`python -m acp_conductor` with both example proxies",
        "(`ACP_REDACT` naming the second secret), and again with the notes proxy",
        "alone. The client is a scripted one that keeps every byte it reads.",
        "",
    ]
    for name, (agent, found, log) in results.items():
        passed = sum(c.passed for c in found)
        lines += [
            f"#### {name} (`{agent.package}`): {passed} of {len(found)} checks pass",
            "",
            "| check | result | what was seen |",
            "|---|---|---|",
        ]
        lines += [
            f"| {c.what} | {'pass' if c.passed else '**FAIL**'} | {c.evidence.replace('|', '/')} |"
            for c in found
        ]
        shown = log[:12]
        lines += [
            "",
            f"Requests the stand-in received ({len(log)}): "
            + "; ".join(f"`{x}`" for x in shown)
            + ("; ..." if len(log) > len(shown) else "")
            + ".",
            "",
        ]
    for name, why in missing.items():
        lines += [f"#### {name}", "", f"Not run: {why}.", ""]
    lines.append(END)
    return "\n".join(lines)


def write_section(text: str) -> None:
    page = PAGE.read_text(encoding="utf-8")
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{PAGE}: the markers of the results section are missing")
    head, rest = page.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    PAGE.write_text(head + text + tail, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "acp-inspect-agents"
    )
    parser.add_argument(
        "--agent",
        action="append",
        choices=ANTHROPIC_AGENTS,
        help="run in front of this agent (repeatable; default: all)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds for each turn, start to end",
    )
    args = parser.parse_args()
    wanted = args.agent or list(ANTHROPIC_AGENTS)
    results: dict[str, tuple[Agent, list[Check], list[str]]] = {}
    missing: dict[str, str] = {}
    for agent in agents("http://127.0.0.1"):
        if agent.name not in wanted:
            continue
        binary = install(agent, args.cache)
        if binary is None:
            missing[agent.name] = f"`npm install {agent.package}` failed"
            continue
        found, log = run_agent(agent.name, binary, args.timeout)
        results[agent.name] = (agent, found, log)
        for c in found:
            print(
                f"{'pass' if c.passed else 'FAIL'}: {c.what}: {c.evidence}",
                file=sys.stderr,
            )
    write_section(section(results, missing))
    print(PAGE)
    failed = any(not c.passed for _, found, _ in results.values() for c in found)
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
