"""What a case keeps of the agent's messages while nobody takes them: bounded
in count and bytes, and nothing once the case is over (no event loop: lines
are handed to the reader's per-line step directly)."""

from __future__ import annotations

import json

import trio
from acp_inspect._driver import AgentUnderTest, Budget


def update_line(text: str) -> bytes:
    update = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": text},
    }
    params = {"sessionId": "s", "update": update}
    return json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": params}
    ).encode()


def test_waiting_messages_are_bounded_in_bytes_not_only_in_count() -> None:
    agent = AgentUnderTest(["true"], budget=Budget(pending=1000, pending_bytes=1 << 20))
    answer = json.dumps(
        {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}}
    )
    agent._line(0.0, answer.encode())
    line = update_line("y" * 65536)
    for _ in range(100):  # 6.5 MB of updates, 100 messages: under the count
        agent._line(0.0, line)
    waiting = agent.received()
    assert waiting[0].id == 7  # a response is never dropped
    assert len(waiting) - 1 <= (1 << 20) // len(line)
    assert agent.dropped_pending == 101 - len(waiting)
    # the case reads params and result: no raw bytes keep the line alive
    assert all(m.raw is None for m in waiting)


def test_a_flood_of_requests_is_bounded_too_oldest_first() -> None:
    """Requests wait to be answered, but a peer that sends them faster than
    the case takes them does not make the case keep them all: past the
    budget the oldest go (counted, never answered); responses stay."""
    agent = AgentUnderTest(["true"], budget=Budget(pending=100))
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}}
    agent._line(0.0, json.dumps(answer).encode())
    for i in range(1000):
        request = {"jsonrpc": "2.0", "id": f"r{i}", "method": "_flood", "params": {}}
        agent._line(0.0, json.dumps(request).encode())
    waiting = agent.received()
    assert len(waiting) == 100 and waiting[0].id == 7
    assert [m.id for m in waiting[1:3]] == ["r901", "r902"]
    assert waiting[-1].id == "r999" and agent.dropped_requests == 901


def test_the_newest_message_is_kept_however_big() -> None:
    agent = AgentUnderTest(["true"], budget=Budget(pending_bytes=1024))
    agent._line(0.0, update_line("z" * 4096))
    assert len(agent.received()) == 1


def test_nothing_is_kept_for_a_case_that_is_done() -> None:
    agent = AgentUnderTest(["true"])
    agent._line(0.0, update_line("a"))
    agent.done()
    assert agent.received() == []
    for _ in range(10):
        agent._line(0.0, update_line("b" * 65536))
    assert agent.received() == []
    assert agent.lines_received == 11  # still read and checked


def test_a_response_read_before_the_one_waited_for_is_kept_for_its_own_wait() -> None:
    # An agent may answer a cancelled prompt and the session/close that
    # cancelled it in one write, the prompt first: waiting for the close's
    # answer must not throw the prompt's away.
    agent = AgentUnderTest(["true"])
    for rid in (3, 4):
        agent._line(
            0.0, json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode()
        )
    agent._line(0.0, update_line("after"))

    async def close_answer() -> int | str | None:
        return (await agent.response(4)).id

    assert trio.run(close_answer) == 4
    assert [m.id for m in agent.received() if m.kind == "response"] == [3]
