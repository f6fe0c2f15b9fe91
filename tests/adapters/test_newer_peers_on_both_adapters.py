"""A peer on a newer spec is surfaced, not dropped, on both adapters (the test
plays the agent; docs/guide.md, "Peers on a newer spec").

The agent sends a ``session/update`` whose ``sessionUpdate`` kind v1's
closed union lacks: the codec calls it invalid for v1, and the runtime gives
it to the client's ``unknown_variant`` as an ``UnknownVariant``.
"""

from __future__ import annotations

import json
from typing import Any

from _raw_peer import RULE_CLIENT, RawPeer

INIT_RESULT = {"protocolVersion": 1, "agentCapabilities": {}}
#: a newer kind, written with odd spacing and key order: kept byte for byte
NEWER = b'{ "update" : {"sessionUpdate":"future_kind", "x":[1, 2]},"sessionId":"s2"}'


def client(adapter: str, *scenario: str) -> RawPeer:
    peer = RawPeer(adapter, *scenario, script=RULE_CLIENT)
    peer.answer(peer.receive(), INIT_RESULT)
    return peer


def update(session_id: str, kind: str = "available_commands_update") -> bytes:
    body: dict[str, Any] = {"sessionUpdate": kind}
    if kind == "available_commands_update":
        body["availableCommands"] = []
    params = {"sessionId": session_id, "update": body}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    return json.dumps(message).encode()


def raw_update(params: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","method":"session/update","params":%b}' % params


def test_an_unknown_variant_reaches_unknown_variant_in_its_place(adapter: str) -> None:
    peer = client(adapter, "newer", "3")
    peer.send(update("s1") + b"\n" + raw_update(NEWER) + b"\n" + update("s3"))
    report = peer.report()
    assert report["order"] == ["s1", "unknown:future_kind", "s3"]
    assert report["variants"] == [
        {
            "method": "session/update",
            "where": "notification",
            "params": NEWER.decode(),
            "path": "$.update.sessionUpdate",
            "tag": "future_kind",
            "sessionId": "s2",
            "knowsAgentMessageChunk": True,
        }
    ]


def test_a_forwarded_unknown_variant_is_sent_on_byte_for_byte(adapter: str) -> None:
    peer = client(adapter, "newer", "1")
    peer.send(raw_update(NEWER))
    forwarded = peer.report()["forwarded"]
    assert forwarded.encode() == raw_update(NEWER) + b"\n"


def test_each_unknown_kind_is_logged_once(adapter: str) -> None:
    peer = client(adapter, "newer", "5")
    other = NEWER.replace(b"future_kind", b"other_kind")
    peer.send(b"\n".join(raw_update(p) for p in (NEWER, NEWER, other, NEWER, other)))
    assert len(peer.report()["variants"]) == 5
    logged = [line for line in peer.stderr_text.splitlines() if "newer spec" in line]
    assert len(logged) == 2, logged
    assert "'future_kind' at $.update.sessionUpdate" in logged[0]
    assert "'other_kind'" in logged[1]


def test_without_unknown_variant_an_unknown_variant_is_dropped_and_logged(
    adapter: str,
) -> None:
    peer = client(adapter, "newer-plain", "2")
    peer.send(update("s1") + b"\n" + raw_update(NEWER) + b"\n" + update("s3"))
    assert peer.report()["order"] == ["s1", "s3"]
    assert "a peer on a newer spec: notification session/update" in peer.stderr_text


def test_a_request_with_an_unknown_variant_is_answered_invalid_params_naming_it(
    peer: RawPeer,
) -> None:
    peer.initialize()
    sid = peer.session()
    prompt = [{"type": "text", "text": "hi"}, {"type": "hologram", "depth": 3}]
    answer = peer.answer_of(
        peer.request("session/prompt", {"sessionId": sid, "prompt": prompt})
    )
    assert answer["error"]["code"] == -32602
    data = answer["error"]["data"]
    assert data["path"] == "$.params.prompt[1].type"
    assert data["unknownVariant"]["tag"] == "hologram"
    assert "text" in data["unknownVariant"]["known"]


def test_a_result_with_an_unknown_variant_raises_unknown_variant_error_with_its_bytes(
    peer: RawPeer,
) -> None:
    peer.initialize()
    sid = peer.session()
    ident = peer.prompt(sid, "ask")
    asked = peer.receive()
    assert asked["method"] == "session/request_permission"
    result = b'{"outcome": {"outcome": "deferred", "until": 3}}'
    peer.send(b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (asked["id"], result))
    seen: list[dict[str, Any]] = []
    assert "result" in peer.answer_of(ident, seen)
    said = seen[-1]["params"]["update"]["content"]["text"]
    assert said == f"newer deferred $.outcome.outcome result {result.decode()}"
