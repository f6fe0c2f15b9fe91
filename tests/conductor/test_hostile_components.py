"""Faulty components: the chain ends or answers with an error within its bounds
(``--initialize-timeout``, ``--stall-timeout``, ``--grace``/``--kill-after``),
nothing is left running, memory stays bounded."""

from __future__ import annotations

import time

import pytest
from chain_support import (
    HERE,
    INITIALIZE,
    PY,
    SESSION_NEW,
    LineClient,
    chain,
    rss_kib,
    session_members,
)

BOUNDS = (
    "--initialize-timeout",
    "2",
    "--stall-timeout",
    "2",
    "--grace",
    "0.5",
    "--kill-after",
    "0.5",
)


def hostile(mode: str) -> str:
    return f"{PY} {HERE / 'hostile_proxy.py'} {mode}"


def _ends_clean(client: LineClient) -> None:
    """The conductor exits within its bounds and leaves no process behind."""
    status = client.proc.wait(10)
    assert status != 0
    deadline = time.monotonic() + 5
    while session_members(client.session) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session_members(client.session) == []


def test_a_proxy_that_never_forwards_ends_the_chain_at_the_initialize_timeout() -> None:
    client = LineClient(chain(hostile("silent"), "raw", options=BOUNDS))
    started = time.monotonic()
    client.send(INITIALIZE)
    answer = client.answer_to(1, timeout=10)
    assert "did not answer initialize within 2 s" in answer["error"]["message"]  # type: ignore[index]
    assert time.monotonic() - started < 8
    _ends_clean(client)


def test_a_proxy_that_floods_without_reading_ends_the_chain_with_memory_bounded() -> (
    None
):
    client = LineClient(chain(hostile("flood"), options=BOUNDS))
    client.send(INITIALIZE)
    assert "result" in client.answer_to(1, timeout=10)
    client.send(SESSION_NEW)
    time.sleep(
        1
    )  # the flood runs: the conductor answers -32700 to a proxy that does not read
    assert rss_kib(client.proc.pid) < 200 * 1024
    answer = client.answer_to(2, timeout=10)
    assert "read nothing for 2 s" in answer["error"]["message"]  # type: ignore[index]
    _ends_clean(client)


def test_a_proxy_that_exits_mid_turn_gets_the_client_an_error() -> None:
    client = LineClient(chain(hostile("exit"), "raw", options=BOUNDS))
    client.send(INITIALIZE)
    client.answer_to(1, timeout=10)
    client.send(SESSION_NEW)
    sid = client.answer_to(2, timeout=10)["result"]["sessionId"]  # type: ignore[index]
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]},
        }
    )
    answer = client.answer_to(3, timeout=10)
    assert "closed its output" in answer["error"]["message"]  # type: ignore[index]
    _ends_clean(client)


def test_a_garbage_answer_to_proxy_successor_fails_that_call_and_the_turn_ends() -> (
    None
):
    client = LineClient(chain("raw", hostile("garbage"), options=BOUNDS))
    client.send(INITIALIZE)
    client.answer_to(1, timeout=10)
    client.send(SESSION_NEW)
    sid = client.answer_to(2, timeout=10)["result"]["sessionId"]  # type: ignore[index]
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]},
        }
    )
    # acp_echo asks permission; the hostile proxy's answer is no JSON: the
    # conductor fails that call (the agent gets an error), the turn ends
    while True:
        message = client.read(timeout=10)
        assert message is not None
        if message.get("method") == "session/request_permission":
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
                }
            )
        if message.get("id") == 3 and "method" not in message:
            break
    assert client.close() == 0
    assert session_members(client.session) == []


def test_a_proxy_that_answers_proxy_initialize_without_its_successor_is_an_error() -> (
    None
):
    client = LineClient(chain(hostile("bad-init"), options=BOUNDS))
    client.send(INITIALIZE)
    answer = client.answer_to(1, timeout=10)
    assert "without initializing its successor" in answer["error"]["message"]  # type: ignore[index]
    assert client.close() == 0
    assert session_members(client.session) == []


@pytest.mark.parametrize("proxy", ["trio", "asyncio"])
def test_a_library_proxy_initialized_as_a_terminal_agent_says_it_needs_a_successor(
    proxy: str,
) -> None:
    from chain_support import PROXIES

    client = LineClient(PROXIES[proxy].split())
    client.send(INITIALIZE)
    answer = client.answer_to(1, timeout=10)
    assert answer["error"]["code"] == -32600  # type: ignore[index]
    assert "proxy/initialize" in answer["error"]["message"]  # type: ignore[index]
    assert client.close() == 0
