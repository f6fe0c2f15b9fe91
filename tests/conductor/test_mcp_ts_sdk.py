"""MCP over ACP against an implementation we did not write: the TypeScript SDK
2.4.0's ``McpOverAcpCaller`` (an agent) and ``McpOverAcpProvider`` (a client)
at the ends of a chain (``ts_mcp.mjs``; the SDK installed by npm into the cache
``tests/interop/_ts_sdk.py`` keeps)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from chain_support import HERE, PY, chain
from test_mcp_over_acp import EXAMPLE, LineClient, _turn

sys.path.insert(0, str(HERE.parent / "interop"))
from _ts_sdk import TsSdk, ts_sdk

TIMEOUT = 60


@pytest.fixture(scope="module")
def sdk() -> TsSdk:
    installed = ts_sdk()
    shutil.copy(HERE / "ts_mcp.mjs", installed.root / "acp_msgspec_ts_mcp.mjs")
    return installed


def test_a_ts_sdk_agent_calls_the_tool_our_proxy_offers(sdk: TsSdk) -> None:
    agent = [sdk.node, str(sdk.root / "acp_msgspec_ts_mcp.mjs"), "agent"]
    client = LineClient(chain(EXAMPLE, agent=agent))
    assert _turn(client, "count these four words") == [
        "project-tools/word_count: 4 words\n"
    ]


def test_our_agent_calls_the_tool_a_ts_sdk_client_offers(sdk: TsSdk) -> None:
    done = subprocess.run(
        [
            sdk.node,
            str(sdk.root / "acp_msgspec_ts_mcp.mjs"),
            "client",
            *chain(agent=[PY, str(HERE / "mcp_agent.py"), "acp"]),
        ],
        cwd=sdk.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "stopReason": "end_turn",
        "said": ["ts-tools/shout: HELLO THERE\n"],
    }
