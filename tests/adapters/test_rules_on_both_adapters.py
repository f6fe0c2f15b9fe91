"""The engine's rules hold on both adapters: the same bytes in, the same bytes out.

Each test runs twice (``adapter`` in trio, asyncio), against
``rule_agent.py`` served by ``acp_trio.serve_agent_stdio`` or
``acp_asyncio.serve_agent_stdio`` over real pipes; the peer is raw JSON
(``_raw_peer.RawPeer``).  These are the rules acp_core decides (framing,
initialization, negotiation, hostile input, batches, ordering,
cancellation, backpressure); their unit tests without I/O live with the
engine, the trio-specific ones in tests/runtime.
"""

from __future__ import annotations

import json
import time

from _raw_peer import RawPeer, update_text

# -- initialization and version negotiation -------------------------------------------


def test_requests_before_initialize_are_refused_invalid_request(peer: RawPeer) -> None:
    ident = peer.request("session/new", {"cwd": "/tmp", "mcpServers": []})
    error = peer.answer_of(ident)["error"]
    assert error["code"] == -32600
    assert error["data"] == {"method": "session/new"}
    assert peer.initialize()["result"]["protocolVersion"] == 1
    assert peer.session() == "s1"


def test_a_second_initialize_is_refused_and_does_not_renegotiate(peer: RawPeer) -> None:
    assert peer.initialize(1)["result"]["protocolVersion"] == 1
    again = peer.initialize(2)
    assert again["error"]["code"] == -32600
    assert "already initialized" in again["error"]["message"]
    # still v1: a v1-only field shape is served
    assert peer.session() == "s1"


def test_the_requested_version_is_chosen_if_offered_else_the_latest(
    adapter: str,
) -> None:
    for requested, chosen in ((1, 1), (2, 2), (7, 2), (0, 2)):
        peer = RawPeer(adapter)
        try:
            result = peer.initialize(requested)["result"]
            assert result["protocolVersion"] == chosen, requested
            assert result["agentInfo"]["name"] == f"rule-agent-{adapter}"
        finally:
            assert peer.close() == 0


def test_an_agent_object_that_cannot_be_built_fails_its_initialize_only(
    adapter: str,
) -> None:
    peer = RawPeer(adapter, "--broken-v2")
    try:
        failed = peer.initialize(2)
        # no handler object: -32603 and the factory's error in one line
        assert failed["error"]["code"] == -32603
        assert "raised RuntimeError" in failed["error"]["message"]
        # the connection goes on, and initialize may be retried
        assert peer.initialize(1)["result"]["protocolVersion"] == 1
        assert peer.session() == "s1"
    finally:
        assert peer.close() == 0


# -- hostile input ----------------------------------------------------------------------


def test_a_line_that_is_not_json_is_answered_parse_error_and_the_connection_goes_on(
    peer: RawPeer,
) -> None:
    peer.send(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    reply = peer.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert peer.initialize()["result"]["protocolVersion"] == 1


def test_request_nested_too_deep_is_answered_invalid_request_with_its_id(
    peer: RawPeer,
) -> None:
    deep = b"[" * 1200 + b"]" * 1200
    peer.send(
        b'{"jsonrpc":"2.0","id":41,"method":"initialize","params":{"x":%b}}' % deep
    )
    reply = peer.receive()
    assert reply["id"] == 41 and reply["error"]["code"] == -32600
    assert peer.initialize()["result"]["protocolVersion"] == 1


def test_a_message_nested_deeper_than_max_nesting_depth_is_refused_before_any_decoding(
    peer: RawPeer,
) -> None:
    # Limits.max_nesting_depth (128): the message's own object is level 1
    def nested(depth: int) -> bytes:
        inner = b"[" * (depth - 2) + b"]" * (depth - 2)
        return (
            b'{"jsonrpc":"2.0","id":41,"method":"initialize","params":{"protocolVersion":1,"x":%b}}'
            % inner
        )

    peer.send(nested(129))
    reply = peer.receive()
    assert reply["id"] == 41 and reply["error"]["code"] == -32600
    assert "nested deeper than 128" in reply["error"]["message"]
    peer.send(nested(128))  # at the bound: read as usual
    assert peer.receive()["result"]["protocolVersion"] == 1


def test_unknown_method_is_method_not_found_and_invalid_params_name_the_path(
    peer: RawPeer,
) -> None:
    peer.initialize()
    unknown = peer.answer_of(peer.request("session/frobnicate", {}))
    assert unknown["error"]["code"] == -32601
    bad = peer.answer_of(
        peer.request("session/prompt", {"sessionId": "s1", "prompt": [{"type": 1}]})
    )
    assert bad["error"]["code"] == -32602
    assert bad["error"]["data"]["path"].startswith("$.params.prompt[0]")


def test_batch_beyond_the_member_cap_is_answered_with_one_short_error(
    peer: RawPeer,
) -> None:
    peer.send(b"[" + b",".join([b"1"] * 200_000) + b"]")
    reply = peer.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert reply["error"]["data"] == {"maxBatchMembers": 128}
    assert peer.initialize()["result"]["protocolVersion"] == 1


def test_a_batch_is_answered_with_one_array(peer: RawPeer) -> None:
    peer.initialize()
    peer.send(
        b'[{"jsonrpc":"2.0","id":"a","method":"session/new",'
        b'"params":{"cwd":"/tmp","mcpServers":[]}},'
        b'{"jsonrpc":"2.0","id":"b","method":"nope"}, 7]'
    )
    line = peer.receive_raw()
    assert line.startswith(b"[")
    import json

    replies = {r["id"]: r for r in json.loads(line)}
    assert replies["a"]["result"]["sessionId"] == "s1"
    assert replies["b"]["error"]["code"] == -32601
    assert replies[None]["error"]["code"] == -32600


def test_oversized_request_is_answered_with_its_id_and_the_connection_goes_on(
    adapter: str,
) -> None:
    peer = RawPeer(adapter, "--max-message-size", "4096")
    try:
        peer.initialize()
        peer.send(
            b'{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"/%b"}}'
            % (b"x" * 100_000)
        )
        reply = peer.receive()
        assert reply["id"] == 9 and reply["error"]["code"] == -32600
        assert reply["error"]["data"] == {"maxMessageSize": 4096}
        assert peer.session() == "s1"
    finally:
        peer.close()


# -- ordering and cancellation -----------------------------------------------------------


def test_a_turn_s_updates_arrive_in_order_before_its_answer(peer: RawPeer) -> None:
    peer.initialize()
    sid = peer.session()
    seen: list[dict[str, object]] = []
    answer = peer.answer_of(peer.prompt(sid, "updates 500"), seen)
    assert answer["result"] == {"stopReason": "end_turn"}
    assert [update_text(m) for m in seen] == [str(i) for i in range(500)]


def test_session_cancel_of_a_waiting_prompt_is_answered_cancelled(
    peer: RawPeer,
) -> None:
    peer.initialize()
    sid = peer.session()
    ident = peer.prompt(sid, "wait")
    assert update_text(peer.receive()) == "waiting"
    peer.notify("session/cancel", {"sessionId": sid})
    assert peer.answer_of(ident)["result"] == {"stopReason": "cancelled"}
    # the session goes on
    seen: list[dict[str, object]] = []
    assert peer.answer_of(peer.prompt(sid, "updates 2"), seen)["result"] == {
        "stopReason": "end_turn"
    }


def test_cancel_sent_after_the_first_update_of_a_flood_is_answered_cancelled_promptly(
    peer: RawPeer,
) -> None:
    peer.initialize()
    sid = peer.session()
    ident = peer.prompt(sid, "flood")
    assert update_text(peer.receive()) == "0"
    peer.notify("session/cancel", {"sessionId": sid})
    seen: list[dict[str, object]] = []
    answer = peer.answer_of(ident, seen)
    assert answer["result"] == {"stopReason": "cancelled"}
    # the updates already written (the write budget, the pipe) and no more:
    # a handler that never waits still yields to read the cancel
    assert len(seen) < 100_000


def test_cancel_request_cancels_a_running_request_answered_request_cancelled(
    peer: RawPeer,
) -> None:
    peer.initialize()
    sid = peer.session()
    ident = peer.prompt(sid, "wait")
    assert update_text(peer.receive()) == "waiting"
    peer.notify("$/cancel_request", {"requestId": ident})
    assert peer.answer_of(ident)["error"]["code"] == -32800


def test_cancel_during_a_permission_request_withdraws_it_with_cancel_request(
    peer: RawPeer,
) -> None:
    peer.initialize()
    sid = peer.session()
    ident = peer.prompt(sid, "ask")
    asked = peer.receive()
    assert asked["method"] == "session/request_permission"
    peer.notify("session/cancel", {"sessionId": sid})
    seen: list[dict[str, object]] = []
    assert peer.answer_of(ident, seen)["result"] == {"stopReason": "cancelled"}
    assert {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": asked["id"]},
    } in seen


# -- backpressure ------------------------------------------------------------------------


def test_a_peer_that_reads_nothing_stops_the_flood_at_the_write_budget(
    adapter: str,
) -> None:
    peer = RawPeer(adapter, "--write-buffer", "16384")
    try:
        peer.initialize()
        sid = peer.session()
        ident = peer.prompt(sid, "flood")
        time.sleep(1.0)  # read nothing: the sender must wait on the budget
        peer.notify("session/cancel", {"sessionId": sid})
        seen: list[dict[str, object]] = []
        assert peer.answer_of(ident, seen)["result"] == {"stopReason": "cancelled"}
        # about 150 bytes an update: the pipe (64 KiB) + 16 KiB + one more
        # message, not a second's worth of an unbounded loop
        assert len(seen) < 1_500, len(seen)
        assert [update_text(m) for m in seen] == [str(i) for i in range(len(seen))]
    finally:
        peer.close()


def test_the_agent_exits_when_the_client_closes_its_stdin(peer: RawPeer) -> None:
    peer.initialize()
    assert peer.close() == 0


# -- control messages at the request bound (issue 18, item 5) ---------------------------


def test_at_the_request_bound_a_session_cancel_is_read_and_answered_cancelled(
    peer: RawPeer,
) -> None:
    # 200 sessions each in a running prompt: 128 (the default bound) run, the
    # rest wait; the cancel behind them is still read and acted on
    peer.initialize()
    prompts = [peer.prompt(f"s{n}", "wait") for n in range(200)]
    for _ in range(128):  # each running prompt says "waiting"
        assert update_text(peer.receive()) == "waiting"
    peer.notify("session/cancel", {"sessionId": "s0"})
    seen: list[dict[str, object]] = []
    assert peer.answer_of(prompts[0], seen)["result"] == {"stopReason": "cancelled"}
    # its slot went to the first waiting prompt
    while not seen:
        seen.append(peer.receive())
    assert seen[0]["params"]["sessionId"] == "s128"  # type: ignore[index]


def test_a_session_new_pipelined_behind_initialize_waits_for_its_answer(
    peer: RawPeer,
) -> None:
    init = {"protocolVersion": 1, "clientCapabilities": {}}
    new = {"cwd": "/tmp", "mcpServers": []}
    peer.send(
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":%s}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":%s}'
        % (json.dumps(init).encode(), json.dumps(new).encode())
    )  # one write: `agent < requests.jsonl`
    assert peer.answer_of(0)["result"]["protocolVersion"] == 1
    assert peer.answer_of(1)["result"] == {"sessionId": "s1"}
