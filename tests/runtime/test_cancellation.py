"""Cancellation (seed 000): session/cancel, session/close, $/cancel_request, peer gone."""

from __future__ import annotations

import acp_trio
import pytest
import trio
import trio.testing
from _acp_helpers import (
    INIT_V1,
    EchoAgent,
    RawPeer,
    RecordingClient,
    chunk,
    connected,
    raw_agent_of,
    raw_client_of,
    text_prompt,
)
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


class StuckAgent(EchoAgent):
    """Sends one update, then works forever (until cancelled)."""

    capabilities = v1.AgentCapabilities(
        session_capabilities=v1.SessionCapabilities(close=v1.SessionCloseCapabilities())
    )
    mode = "plain"

    def __init__(self, conn: acp_trio.AgentSideConnection) -> None:
        super().__init__(conn)
        self.closed: list[str] = []

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        await self.client.session_update(chunk(params.session_id, "working"))
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            if self.mode == "raise":  # an API library turning the abort into an error
                raise RuntimeError("stream aborted") from None
            raise
        raise AssertionError("unreachable")

    async def session_close(
        self, params: v1.CloseSessionRequest
    ) -> v1.CloseSessionResponse:
        self.closed.append(params.session_id)
        return v1.CloseSessionResponse()


class RaisingAgent(StuckAgent):
    mode = "raise"


class WaitingClient(RecordingClient):
    def __init__(self, conn: acp_trio.ClientSideConnection) -> None:
        super().__init__(conn)
        self.first_update = trio.Event()

    async def session_update(self, params: v1.SessionNotification) -> None:
        await super().session_update(params)
        self.first_update.set()


async def _prompt_then(
    conn: acp_trio.ClientSideConnection, action: str
) -> tuple[v1.PromptResponse, list[str]]:
    await conn.agent.initialize(INIT_V1)
    s = await conn.agent.session_new(NEW)
    result: list[v1.PromptResponse] = []

    async def prompt() -> None:
        result.append(await conn.agent.session_prompt(text_prompt(s.session_id)))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(prompt)
            await conn.client.first_update.wait()  # type: ignore[attr-defined]
            if action == "cancel":
                await conn.agent.session_cancel(
                    v1.CancelNotification(session_id=s.session_id)
                )
            else:
                await conn.agent.session_close(
                    v1.CloseSessionRequest(session_id=s.session_id)
                )
    return result[0], conn.client.texts()  # type: ignore[attr-defined]


async def test_session_cancel_cancels_the_running_prompt_answered_cancelled() -> None:
    async with connected(StuckAgent, WaitingClient) as (conn, _):
        result, texts = await _prompt_then(conn, "cancel")
        assert result.stop_reason == "cancelled"
        assert texts == ["working"]  # updates already sent stay sent


async def test_cancellation_surfacing_as_an_exception_is_still_answered_cancelled() -> (
    None
):
    async with connected(RaisingAgent, WaitingClient) as (conn, _):
        result, _texts = await _prompt_then(conn, "cancel")
        assert result.stop_reason == "cancelled"


async def test_session_close_cancels_the_prompt_then_releases_the_session() -> None:
    async with connected(StuckAgent, WaitingClient) as (conn, agent_conn):
        result, _texts = await _prompt_then(conn, "close")
        assert result.stop_reason == "cancelled"
        assert agent_conn.agent.closed == ["sess_1"]  # type: ignore[attr-defined]
        assert not agent_conn._prompts


class BlockedPermissionClient(RecordingClient):
    def __init__(self, conn: acp_trio.ClientSideConnection) -> None:
        super().__init__(conn)
        self.asked: list[str] = []
        self.waiting = trio.Event()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.asked.append(params.tool_call.tool_call_id)
        self.waiting.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")


def _permission(ident: int, session: str = "s1") -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "session/request_permission",
        "params": {
            "sessionId": session,
            "toolCall": {"toolCallId": f"call_{ident}"},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    }


async def _initialize(conn: acp_trio.ClientSideConnection, peer: object) -> None:
    async def answer() -> None:
        request = await peer.receive()  # type: ignore[attr-defined]
        await peer.send(  # type: ignore[attr-defined]
            {"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1}}
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer)
        await conn.agent.initialize(INIT_V1)


async def test_session_cancel_answers_pending_permission_requests_cancelled() -> None:
    async with raw_agent_of(BlockedPermissionClient) as (conn, peer):
        await _initialize(conn, peer)
        await peer.send(_permission(7))
        await conn.client.waiting.wait()  # type: ignore[attr-defined]
        await conn.agent.session_cancel(v1.CancelNotification(session_id="s1"))
        assert (await peer.receive())["method"] == "session/cancel"
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"outcome": {"outcome": "cancelled"}},
        }


async def test_a_cancel_racing_a_permission_request_answers_it_cancelled() -> None:
    async with raw_agent_of(BlockedPermissionClient) as (conn, peer):
        await _initialize(conn, peer)
        async with trio.open_nursery() as nursery:
            result: list[v1.PromptResponse] = []

            async def prompt() -> None:
                result.append(await conn.agent.session_prompt(text_prompt("s1")))

            nursery.start_soon(prompt)
            request = await peer.receive()
            assert request["method"] == "session/prompt"
            await conn.agent.session_cancel(v1.CancelNotification(session_id="s1"))
            assert (await peer.receive())["method"] == "session/cancel"
            # the agent had sent this before it saw the cancel:
            await peer.send(_permission(8))
            reply = await peer.receive()
            assert reply["id"] == 8 and reply["result"]["outcome"] == {
                "outcome": "cancelled"
            }
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"stopReason": "cancelled"},
                }
            )
        assert result[0].stop_reason == "cancelled"
        assert conn.client.asked == []  # type: ignore[attr-defined]
        # the turn is over: the next permission request reaches the handler again
        await peer.send(_permission(9))
        with trio.fail_after(5):
            await conn.client.waiting.wait()  # type: ignore[attr-defined]
        assert conn.client.asked == ["call_9"]  # type: ignore[attr-defined]


async def test_cancelling_the_caller_sends_cancel_request_and_stops_waiting() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        await _initialize(conn, peer)
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:

                async def cancel_when_sent() -> None:
                    assert (await peer.receive())["method"] == "session/new"
                    scope.cancel()

                nursery.start_soon(cancel_when_sent)
                await conn.agent.session_new(NEW)
        assert scope.cancelled_caught
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": 1},
        }


class V2Client:
    acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

    def __init__(self, conn: acp_trio.ClientSideConnection) -> None:
        pass


async def test_cancel_request_is_table_driven_absent_from_v2() -> None:
    async with raw_agent_of({2: V2Client}) as (conn, peer):

        async def answer() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"protocolVersion": 2},
                }
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
        with trio.move_on_after(0.05):
            await conn.agent.session_new(v2.NewSessionRequest(cwd="/", mcp_servers=[]))
        assert (await peer.receive())["method"] == "session/new"
        await conn.agent.ext_notification("_marker", {})
        assert (await peer.receive())[
            "method"
        ] == "_marker"  # no $/cancel_request between


class SleepyAgent(EchoAgent):
    def __init__(self, conn: acp_trio.AgentSideConnection) -> None:
        super().__init__(conn)
        self.cancelled = trio.Event()

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        try:
            await trio.sleep_forever()
        finally:
            self.cancelled.set()
        raise AssertionError("unreachable")


async def test_incoming_cancel_request_cancels_the_handler_answered_request_cancelled() -> (
    None
):
    async with raw_client_of(SleepyAgent) as peer:
        await peer.initialize()
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": "n1",
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            }
        )
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "$/cancel_request",
                "params": {"requestId": "n1"},
            }
        )
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "id": "n1",
            "error": {"code": -32800, "message": "Request cancelled"},
        }


async def test_peer_gone_fails_pending_requests_promptly() -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        async with trio.open_nursery() as nursery:

            async def vanish() -> None:
                await peer.receive()
                await peer.stream.aclose()

            nursery.start_soon(vanish)
            with trio.fail_after(2), pytest.raises(acp_trio.ConnectionClosed):
                await conn.agent.initialize(INIT_V1)
        with pytest.raises(acp_trio.ConnectionClosed):
            await conn.agent.session_new(NEW)


async def test_peer_gone_cancels_running_handlers() -> None:
    # In memory a dead peer looks like a half-close until a write fails: the
    # handler gets HANDLER_GRACE, then is cancelled (test_half_close.py has
    # the pipe cases, where a dead peer is seen at once).
    import trio.testing

    ours, theirs = trio.testing.memory_stream_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            conn = await nursery.start(acp_trio.serve_agent, ours, SleepyAgent)
            from _acp_helpers import RawPeer

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
            await theirs.aclose()
        # serve_agent returned by itself: nothing hangs
    assert conn.agent.cancelled.is_set()


# -- a handler that returns normally after its session was cancelled -----------------


class FinishingAgent(EchoAgent):
    """Finishes its step (shielded) after the cancel, then returns end_turn."""

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        super().__init__(conn)
        self.cancel_seen = trio.Event()

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        self.cancel_seen.set()

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        await self.client.session_update(chunk(params.session_id, "working"))
        with trio.CancelScope(shield=True):  # e.g. waiting for a tool to stop
            await self.cancel_seen.wait()
        return v1.PromptResponse(stop_reason="end_turn", meta={"usage": 7})


async def test_a_prompt_returning_normally_after_cancel_is_answered_cancelled() -> None:
    async with connected(FinishingAgent, WaitingClient) as (conn, _):
        result, texts = await _prompt_then(conn, "cancel")
        assert result.stop_reason == "cancelled"
        assert result.meta == {"usage": 7}  # the handler's other fields are kept
        assert texts == ["working"]


class GatedAgent(EchoAgent):
    """An extension notification handler that holds the notification queue."""

    gate: trio.Event

    async def ext_notification(self, method: str, params: object) -> None:
        await self.gate.wait()


async def test_a_prompt_cancelled_before_its_handler_started_is_answered_cancelled() -> (
    None
):
    GatedAgent.gate = trio.Event()
    async with trio.open_nursery() as nursery:
        a, b = acp_trio.memory_stream_pair()
        agent_conn = await nursery.start(acp_trio.serve_agent, a, GatedAgent)
        peer = RawPeer(b)
        await peer.initialize()
        await peer.send(
            b'{"jsonrpc":"2.0","method":"_hold","params":{}}\n'
            b'{"jsonrpc":"2.0","id":5,"method":"session/prompt",'
            b'"params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}\n'
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}'
        )
        await trio.testing.wait_all_tasks_blocked()
        GatedAgent.gate.set()  # the prompt, queued behind _hold, may start now
        reply = await peer.receive()
        assert reply == {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"stopReason": "cancelled"},
        }
        assert agent_conn.agent.seen == []  # the handler never ran
        nursery.cancel_scope.cancel()


class SignallingAgent(EchoAgent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        super().__init__(conn)
        self.returned = trio.Event()

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.returned.set()
        return v1.PromptResponse(stop_reason="end_turn")


async def test_a_prompt_that_returned_before_the_cancel_keeps_its_answer() -> None:
    async with trio.open_nursery() as nursery:
        a, b = acp_trio.memory_stream_pair()
        agent_conn = await nursery.start(acp_trio.serve_agent, a, SignallingAgent)
        peer = RawPeer(b)
        await peer.initialize()
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": []},
            }
        )
        await agent_conn.agent.returned.wait()
        await trio.testing.wait_all_tasks_blocked()
        # the answer is written, not yet read, when the cancel goes out
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "session/cancel",
                "params": {"sessionId": "s1"},
            }
        )
        reply = await peer.receive()
        assert reply["id"] == 5 and reply["result"] == {"stopReason": "end_turn"}
        nursery.cancel_scope.cancel()


class StubbornPermissionClient(RecordingClient):
    """Answers allow after the cancel (its UI finished a shielded step)."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        super().__init__(conn)
        self.waiting = trio.Event()
        self.release = trio.Event()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.waiting.set()
        with trio.CancelScope(shield=True):
            await self.release.wait()
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id="ok"), meta={"ui": "x"}
        )


async def test_a_permission_answered_normally_after_cancel_is_answered_cancelled() -> (
    None
):
    async with raw_agent_of(StubbornPermissionClient) as (conn, peer):
        await _initialize(conn, peer)
        await peer.send(_permission(7))
        await conn.client.waiting.wait()  # type: ignore[attr-defined]
        await conn.agent.session_cancel(v1.CancelNotification(session_id="s1"))
        assert (await peer.receive())["method"] == "session/cancel"
        conn.client.release.set()  # type: ignore[attr-defined]
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"outcome": {"outcome": "cancelled"}, "_meta": {"ui": "x"}},
        }
