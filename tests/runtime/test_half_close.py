"""End of input: the peer half-closed (it may still read) or is gone.

A client that closes its end of the agent's stdin, having sent its last
requests, may still read the agent's stdout: the requests already received
are handled and answered, for up to ``HANDLER_GRACE`` seconds, then what is
left is cancelled (answered -32800) and the connection ends.  A peer known
to be dead gets no grace: its handlers are cancelled at once (issue 3's
"peer gone" rule).  Real pipes throughout.
"""

from __future__ import annotations

from typing import Any

import acp_trio
import msgspec
import trio
import trio.testing
from _acp_helpers import EchoAgent, RawPeer, chunk, pipe_pair
from acp_schema import v1
from acp_trio._connection import HANDLER_GRACE

PROMPT = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


class SlowAgent(EchoAgent):
    """Answers a prompt after an update and a pause; sessions never end."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        super().__init__(conn)
        self.cancelled = trio.Event()
        self.late_call: BaseException | None = None

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        await trio.sleep(0.1)  # the client half-closes meanwhile
        await self.client.session_update(chunk(params.session_id, "still here"))
        try:  # a request now could never be answered: it fails at once
            await self.client.session_request_permission(
                v1.RequestPermissionRequest(
                    session_id=params.session_id,
                    tool_call=v1.ToolCallUpdate(tool_call_id="t"),
                    options=[],
                )
            )
        except acp_trio.ConnectionClosed as exc:
            self.late_call = exc
        return v1.PromptResponse(stop_reason="end_turn")

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        try:
            await trio.sleep_forever()
        finally:
            self.cancelled.set()
        raise AssertionError("unreachable")


async def _serve_and_half_close(
    requests: list[dict[str, Any]],
) -> tuple[acp_trio.AgentSideConnection[Any], list[Any], float]:
    """Serve SlowAgent over pipes; the client sends ``requests``, closes its
    writing end, then reads until the agent closes.  Returns the connection,
    what the client read after initialize, and how long the agent took to end
    after the half-close."""
    ours, theirs = pipe_pair()
    received: list[Any] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            conn = await nursery.start(acp_trio.serve_agent, ours, SlowAgent)
            peer = RawPeer(theirs)
            assert "result" in await peer.initialize()
            for request in requests:
                await peer.send(request)
            await trio.testing.wait_all_tasks_blocked()
            await theirs.send_stream.aclose()  # half-close: we still read
            closed_at = trio.current_time()
            while (line := await peer.reader.receive_line()) is not None:
                assert isinstance(line, bytes)
                received.append(msgspec.json.decode(line))
            await conn.closed.wait()
            took = trio.current_time() - closed_at
        await theirs.aclose()
    return conn, received, took


async def test_requests_in_flight_at_a_half_close_are_answered() -> None:
    conn, received, took = await _serve_and_half_close(
        [{"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT}]
    )
    assert [m.get("method") for m in received] == ["session/update", None]
    assert received[0]["params"]["update"]["content"]["text"] == "still here"
    assert received[1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"stopReason": "end_turn"},
    }
    assert (
        took < HANDLER_GRACE
    )  # ended when the last handler was done, not at the grace
    agent = conn.agent
    assert isinstance(agent, SlowAgent)
    assert isinstance(agent.late_call, acp_trio.ConnectionClosed)


async def test_a_handler_stuck_after_a_half_close_is_cancelled_after_the_grace() -> (
    None
):
    conn, received, took = await _serve_and_half_close(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            },
        ]
    )
    by_id = {m["id"]: m for m in received if "id" in m}
    assert by_id[1]["result"] == {"stopReason": "end_turn"}  # the quick one answered
    assert by_id[2]["error"] == {"code": -32800, "message": "Request cancelled"}
    agent = conn.agent
    assert isinstance(agent, SlowAgent) and agent.cancelled.is_set()
    assert HANDLER_GRACE - 0.05 <= took < HANDLER_GRACE + 1.5  # bounded: nothing hangs


async def test_a_dead_peer_gets_no_grace_handlers_are_cancelled_at_once() -> None:
    ours, theirs = pipe_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            conn = await nursery.start(acp_trio.serve_agent, ours, SlowAgent)
            peer = RawPeer(theirs)
            await peer.initialize()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/new",
                    "params": {"cwd": "/", "mcpServers": []},
                }
            )
            await trio.testing.wait_all_tasks_blocked()
            # the client process is gone: the kernel closes its fds in order,
            # the read end of our output (its stdin, fd 0) before the rest
            await theirs.receive_stream.aclose()
            await theirs.send_stream.aclose()
            start = trio.current_time()
            await conn.closed.wait()
    assert trio.current_time() - start < HANDLER_GRACE / 2
    agent = conn.agent
    assert isinstance(agent, SlowAgent) and agent.cancelled.is_set()
