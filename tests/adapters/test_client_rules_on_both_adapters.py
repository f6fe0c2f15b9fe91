"""The client side's rules hold on both adapters (the test plays the agent).

``rule_client.py`` runs a scenario as an ACP client on trio or asyncio over
its stdin/stdout (``connect_to_agent`` over a stream: a trio
``StapledStream`` of ``FdStream``s, an asyncio ``StreamReader`` /
``StreamWriter`` pair); the test answers it with raw JSON and reads the
report it writes when done.
"""

from __future__ import annotations

import json

from _raw_peer import RULE_CLIENT, RawPeer

INIT_RESULT = {"protocolVersion": 1, "agentCapabilities": {}}


def client(adapter: str, *scenario: str) -> RawPeer:
    return RawPeer(adapter, *scenario, script=RULE_CLIENT)


def test_agent_requests_before_the_initialize_answer_are_refused(adapter: str) -> None:
    peer = client(adapter, "initialize")
    init = peer.receive()
    assert init["method"] == "initialize"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 100,
            "method": "fs/read_text_file",
            "params": {"sessionId": "s1", "path": "/etc/hostname"},
        }
    )
    refused = peer.receive()
    assert refused["id"] == 100 and refused["error"]["code"] == -32600
    assert refused["error"]["data"] == {"method": "fs/read_text_file"}
    peer.answer(init, INIT_RESULT)
    assert peer.report() == {"protocolVersion": 1}


def test_caller_resumes_before_the_notification_written_after_its_response(
    adapter: str,
) -> None:
    runs = 20
    peer = client(adapter, "order", str(runs))
    peer.answer(peer.receive(), INIT_RESULT)
    for run in range(runs):
        request = peer.receive()
        assert request["method"] == "session/new"
        sid = f"sess_{run}"
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"sessionId": sid}}
        update = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": sid,
                "update": {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [],
                },
            },
        }
        # one write: the answer and the update for its session arrive in one chunk
        peer.send(json.dumps(answer).encode() + b"\n" + json.dumps(update).encode())
    # the caller of session_new knew each session before its update was handled
    assert peer.report()["seen"] == [True] * runs


def test_the_notification_consumer_lets_other_tasks_run_during_a_burst(
    adapter: str,
) -> None:
    # Handlers that never wait: the consumer still yields every
    # NOTIFICATION_BURST of them, so a woken task runs before the burst ends.
    updates = 300
    peer = client(adapter, "burst", str(updates))
    peer.answer(peer.receive(), INIT_RESULT)
    update = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [],
            },
        },
    }
    peer.send(b"\n".join(json.dumps(update).encode() for _ in range(updates)))
    report = peer.report()
    assert len(report["seen"]) == updates
    assert report["handled"] < updates


def test_session_cancel_answers_the_pending_permission_request_cancelled(
    adapter: str,
) -> None:
    peer = client(adapter, "cancel-permission")
    peer.answer(peer.receive(), INIT_RESULT)
    peer.answer(peer.receive(), {"sessionId": "s1"})
    prompt = peer.receive()
    assert prompt["method"] == "session/prompt"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s1",
                "toolCall": {"toolCallId": "c1"},
                "options": [{"optionId": "y", "name": "Y", "kind": "allow_once"}],
            },
        }
    )
    cancel = peer.receive()
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "s1"},
    }
    assert peer.receive() == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"outcome": {"outcome": "cancelled"}},
    }
    peer.answer(prompt, {"stopReason": "cancelled"})
    assert peer.report() == {"protocolVersion": 1, "stopReason": "cancelled"}


def test_an_initialize_answered_in_a_version_not_offered_fails(adapter: str) -> None:
    peer = client(adapter, "version")
    peer.answer(peer.receive(), {"protocolVersion": 2, "agentCapabilities": {}})
    assert peer.report() == {"error": "ProtocolVersionError"}
