"""A raw JSON-RPC peer over real pipes, synchronous and adapter-neutral.

``RawPeer`` starts ``rule_agent.py`` (or ``rule_client.py``: then the test
plays the agent) on one runtime and talks bytes to it:
the tests say what goes on the wire and read what comes back, so the same
test holds whichever adapter serves the agent.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RULE_AGENT = str(HERE / "rule_agent.py")
RULE_CLIENT = str(HERE / "rule_client.py")
ADAPTERS = ["trio", "asyncio"]
#: Seconds a reply may take before the test fails (turns a hang into a failure).
TIMEOUT = 60.0  # a hang guard only: generous, as a loaded 2-core machine is slow


class RawPeer:
    """The client end of a pipe pair to ``rule_agent.py ADAPTER``."""

    def __init__(self, adapter: str, *args: str, script: str = RULE_AGENT) -> None:
        self.process = subprocess.Popen(
            [sys.executable, script, adapter, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.fd = self.process.stdout.fileno()
        self.buffer = b""
        self.next_id = 0

    def send(self, message: bytes | dict[str, Any]) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.stdin.write(data + b"\n")
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        ident = self.next_id
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return ident

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return json.loads(self.receive_raw(timeout))  # type: ignore[no-any-return]

    def receive_raw(self, timeout: float = TIMEOUT) -> bytes:
        """The next line as it came."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise AssertionError(f"no message within {timeout} s: {self.stderr()}")
            data = os.read(self.fd, 1 << 16)
            if not data:
                raise AssertionError(f"EOF from the agent: {self.stderr()}")
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def answer_of(
        self, ident: int, seen: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Read until the response to ``ident``; what came before goes to ``seen``."""
        while True:
            message = self.receive()
            if message.get("id") == ident and "method" not in message:
                return message
            if seen is not None:
                seen.append(message)

    def initialize(self, version: int = 1) -> dict[str, Any]:
        ident = self.request(
            "initialize", {"protocolVersion": version, "clientCapabilities": {}}
        )
        return self.answer_of(ident)

    def session(self) -> str:
        answer = self.answer_of(
            self.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        )
        return str(answer["result"]["sessionId"])

    def prompt(self, session_id: str, text: str) -> int:
        return self.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )

    def answer(self, request: dict[str, Any], result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def report(self) -> dict[str, Any]:
        """The ``REPORT`` line a rule_client.py wrote to stderr when it ended."""
        assert self.close() == 0, self.stderr()
        for line in self.stderr_text.splitlines():
            if line.startswith("REPORT "):
                return json.loads(line[7:])  # type: ignore[no-any-return]
        raise AssertionError(f"no report: {self.stderr_text}")

    def stderr(self) -> str:
        """The peer's stderr once it exited (for failure messages)."""
        if self.process.poll() is None:
            return "(still running)"
        stream = self.process.stderr
        if stream is not None and not stream.closed:
            self.stderr_text += stream.read().decode(errors="replace")
        return self.stderr_text[-2000:]

    stderr_text = ""

    def close(self) -> int:
        """Close the peer's stdin; its exit status (it must exit on EOF)."""
        if not self.stdin.closed:
            self.stdin.close()
        try:
            return self.process.wait(TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.stderr()
            for stream in (self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()


def update_text(message: dict[str, Any]) -> str:
    return str(message["params"]["update"]["content"]["text"])
