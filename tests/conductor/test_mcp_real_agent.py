"""The MCP example in front of a real agent from npm: ``@zed-industries/claude-code-acp``
(HOME in a temp dir, its model a loopback stand-in, ``model_standin.py``).

The agent does not advertise ``mcpCapabilities.acp``, so the conductor gives it
the proxy's server as a stdio server (its bridge); Claude Code's own MCP
client (which opens with the ``initialize`` handshake) lists the tool, the
stand-in model calls it, the agent asks the client's permission, and the
proxy answers the call: the tool's answer reaches the model and the client.
The agent is installed by npm beside the TypeScript SDK, in the cache
``tests/interop/_ts_sdk.py`` keeps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from chain_support import HERE, PY, LineClient, chain, session_members
from test_mcp_over_acp import EXAMPLE

sys.path.insert(0, str(HERE.parent / "interop"))
from _ts_sdk import ts_sdk

AGENT = "@zed-industries/claude-code-acp"
VERSION = "0.16.2"
TOOL = "mcp__project-tools__word_count"


def _standin(tmp: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    port_file, log = tmp / "port", tmp / "model.jsonl"
    proc = subprocess.Popen(
        [PY, str(HERE / "model_standin.py"), str(port_file), str(log), TOOL]
    )
    deadline = time.monotonic() + 20
    while not (port_file.is_file() and port_file.read_text()):
        assert time.monotonic() < deadline, "the model stand-in did not start"
        time.sleep(0.05)
    return proc, int(port_file.read_text()), log


def test_a_real_agent_calls_the_proxys_tool_through_the_bridge(tmp_path: Path) -> None:
    sdk = ts_sdk(extras=(f"{AGENT}@{VERSION}",))
    entry = sdk.root / "node_modules" / AGENT / "dist" / "index.js"
    home = tmp_path / "home"
    home.mkdir()
    standin, port, log = _standin(tmp_path)
    env = {
        **os.environ,
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-standin",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",  # Claude Code refuses to run as root otherwise
    }
    client = LineClient(
        chain(EXAMPLE, agent=[sdk.node, str(entry)]), env=env, cwd=tmp_path
    )
    updates: list[dict[str, object]] = []
    try:
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        client.answer_to(1, timeout=120)
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(tmp_path), "mcpServers": []},
            }
        )
        sid = client.answer_to(2, timeout=120)["result"]["sessionId"]  # type: ignore[index]
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {
                    "sessionId": sid,
                    "prompt": [{"type": "text", "text": "count one two three"}],
                },
            }
        )
        while True:
            message = client.read(timeout=180)
            assert message is not None, "the chain ended before the turn did"
            if (
                "method" in message and "id" in message
            ):  # the tool's permission: allow once
                client.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {
                            "outcome": {"outcome": "selected", "optionId": "allow"}
                        },
                    }
                )
            elif message.get("method") == "session/update":
                updates.append(message["params"]["update"])  # type: ignore[index]
            elif message.get("id") == 3:
                assert message["result"]["stopReason"] == "end_turn"  # type: ignore[index]
                break
    finally:
        client.close(timeout=30)
        standin.kill()
        standin.wait()
    done = [
        u
        for u in updates
        if u.get("sessionUpdate") == "tool_call_update"
        and u.get("status") == "completed"
    ]
    assert done and "3 words" in json.dumps(done[-1]["rawOutput"])
    said = "".join(
        str(u["content"]["text"])  # type: ignore[index]
        for u in updates
        if u.get("sessionUpdate") == "agent_message_chunk"
    )
    assert "the tool said:" in said and "3 words" in said
    requests = [json.loads(line)["body"] for line in log.read_text().splitlines()]
    results = [
        block
        for body in requests
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results and "3 words" in json.dumps(results)
    deadline = time.monotonic() + 15  # the chain ends every process it started
    while session_members(client.session) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert session_members(client.session) == []
