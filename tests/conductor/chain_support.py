"""What the conductor tests share: the commands of chains, a scripted client."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
AGENT = [PY, "-m", "acp_echo"]
PROXIES = {
    "trio": f"{PY} {HERE / 'trio_proxy.py'}",
    "asyncio": f"{PY} {HERE / 'asyncio_proxy.py'}",
    "raw": f"{PY} {HERE / 'raw_proxy.py'}",
}


def chain(
    *proxies: str, agent: list[str] | None = None, options: tuple[str, ...] = ()
) -> list[str]:
    """``python -m acp_conductor --proxy ... -- AGENT``."""
    argv = [PY, "-m", "acp_conductor", *options]
    for proxy in proxies:
        argv += ["--proxy", PROXIES.get(proxy, proxy)]
    return [*argv, "--", *(agent or AGENT)]


SCRIPT = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}, "_meta": {"x": 1}},
    },
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "session/new",
        "params": {"cwd": "/tmp", "mcpServers": [], "unknownField": [1, 2]},
    },
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {
            "sessionId": "$SID",
            "prompt": [{"type": "text", "text": "hello \u00e9 world"}],
        },
    },
]


def prompts_script(*texts: str) -> list[dict[str, object]]:
    """:data:`SCRIPT` with one ``session/prompt`` per text instead of its own."""
    prompts = [
        {
            "jsonrpc": "2.0",
            "id": 3 + n,
            "method": "session/prompt",
            "params": {"sessionId": "$SID", "prompt": [{"type": "text", "text": t}]},
        }
        for n, t in enumerate(texts)
    ]
    return [*SCRIPT[:2], *prompts]


def scripted_client(
    command: list[str],
    timeout: float = 30,
    script: list[dict[str, object]] | None = None,
) -> bytes:
    """Run ``script`` (:data:`SCRIPT`) against ``command`` one request at a
    time; every byte the client read, up to the last answer."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    seen = bytearray()
    sid = None
    try:
        for message in script or SCRIPT:
            text = json.dumps(message).replace("$SID", sid or "")
            proc.stdin.write(text.encode() + b"\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                assert line, (
                    f"the agent closed its output; read so far: {bytes(seen)!r}"
                )
                seen += line
                reply = json.loads(line)
                if "method" in reply and "id" in reply:  # the agent asks: allow
                    options = reply["params"].get("options") or [{"optionId": "x"}]
                    result = {
                        "outcome": {
                            "outcome": "selected",
                            "optionId": options[0]["optionId"],
                        }
                    }
                    answer = {"jsonrpc": "2.0", "id": reply["id"], "result": result}
                    proc.stdin.write(json.dumps(answer).encode() + b"\n")
                    proc.stdin.flush()
                    continue
                if reply.get("id") == message["id"] and "method" not in reply:
                    if message["method"] == "session/new":
                        sid = reply["result"]["sessionId"]
                    break
        return _normalized(bytes(seen))
    finally:
        proc.stdin.close()
        proc.wait(timeout)


def _normalized(data: bytes) -> bytes:
    """``data`` with what differs run to run (acp_echo's random session and
    message ids) replaced by placeholders numbered in order of appearance."""
    names: dict[bytes, bytes] = {}

    def name(match: re.Match[bytes]) -> bytes:
        return names.setdefault(match.group(), b"ID%d" % len(names))

    return re.sub(rb"(?:sess|msg)_[0-9a-f]{12,}", name, data)


class LineClient:
    """A client of a command, line by line, with a deadline on every read;
    the command runs in a session of its own, so what it leaves behind can be found."""

    def __init__(
        self,
        command: list[str],
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
            env=env,
            cwd=cwd,
        )
        self.session = self.proc.pid
        self._buffer = b""

    def send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float) -> dict[str, object] | None:
        """The next message, or ``None`` at the end of output; fails past ``timeout``."""
        import os
        import select
        import time

        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = end - time.monotonic()
            assert left > 0, f"nothing read within {timeout} s"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def answer_to(self, ident: int, timeout: float) -> dict[str, object]:
        """The answer to request ``ident`` (what comes before it is skipped)."""
        while True:
            message = self.read(timeout)
            assert message is not None, f"the output ended before the answer to {ident}"
            if message.get("id") == ident and "method" not in message:
                return message

    def close(self, timeout: float = 10) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout)


def session_members(session: int) -> list[int]:
    """Live (non-zombie) processes of ``session``: what a run left behind."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == session:
            found.append(int(entry))
    return found


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}
SESSION_NEW = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "session/new",
    "params": {"cwd": "/tmp", "mcpServers": []},
}


def advertised(data: bytes) -> bytes:
    """The agent's bytes as a conductor shows them to its client: its
    ``initialize`` answer (the first line) says ``mcpCapabilities.acp``, since
    the conductor serves ``"type": "acp"`` MCP servers for every agent."""
    first, rest = data.split(b"\n", 1)
    answer = json.loads(first)
    caps = answer["result"].setdefault("agentCapabilities", {})
    caps.setdefault("mcpCapabilities", {})["acp"] = True
    line = json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()
    return line + b"\n" + rest
