"""Proxy chains between implementations we did not write: the TypeScript SDK
2.4.0 as the client and as the agent at the ends of an ``acp_conductor``
chain of our proxies (trio, asyncio and the two teaching examples)."""

from __future__ import annotations

import shlex
import shutil

import pytest
from _interop_helpers import ECHO_AGENT, HERE, PYTHON, ROOT
from _ts_sdk import TsSdk, ts_sdk
from test_ts_sdk import run_ts_client

TRIO_PROXY = shlex.join([PYTHON, str(ROOT / "tests" / "conductor" / "trio_proxy.py")])
ASYNCIO_PROXY = shlex.join(
    [PYTHON, str(ROOT / "tests" / "conductor" / "asyncio_proxy.py")]
)
REDACTION_PROXY = shlex.join([PYTHON, str(ROOT / "examples" / "proxy_redaction.py")])


@pytest.fixture(scope="module")
def sdk() -> TsSdk:
    installed = ts_sdk()
    shutil.copy(HERE / "ts_stdio.mjs", installed.root / "acp_msgspec_ts_stdio.mjs")
    return installed


def chain(*proxies: str, agent: list[str]) -> list[str]:
    argv = [PYTHON, "-m", "acp_conductor"]
    for proxy in proxies:
        argv += ["--proxy", proxy]
    return [*argv, "--", *agent]


def ts_agent(sdk: TsSdk) -> list[str]:
    return [sdk.node, str(sdk.root / "acp_msgspec_ts_stdio.mjs"), "agent", "v1"]


def test_the_ts_client_sees_our_agent_through_a_chain_as_without_it(
    sdk: TsSdk,
) -> None:
    alone = run_ts_client(sdk, "v1", ECHO_AGENT)
    through = run_ts_client(
        sdk, "v1", chain(TRIO_PROXY, ASYNCIO_PROXY, agent=ECHO_AGENT)
    )
    assert through == alone
    assert through["first"] == {"stopReason": "end_turn"}
    assert through["second"] == {"stopReason": "cancelled"}


def test_the_ts_client_sees_the_ts_agent_through_our_chain_as_without_it(
    sdk: TsSdk,
) -> None:
    alone = run_ts_client(sdk, "v1", ts_agent(sdk))
    through = run_ts_client(
        sdk,
        "v1",
        chain(ASYNCIO_PROXY, REDACTION_PROXY, TRIO_PROXY, agent=ts_agent(sdk)),
    )
    assert through == alone
    assert through["agent"] == "ts-stdio-agent"
    assert through["second"] == {"stopReason": "cancelled"}  # the cancel went through
    assert through["permissions"] == ["t1"]
