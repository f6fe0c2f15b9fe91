"""A small raw ACP agent (v1, stdlib only) that passes every case of
``acp_inspect check``, or breaks exactly one rule: ``python broken_agent.py [FAULT]``.

Faults: ``end-turn-after-cancel`` (a cancelled prompt ends ``end_turn``),
``update-after-response`` (a chunk after the answer to a "hello" prompt),
``fs-without-capability`` (reads a file on "read ..." although the client did
not advertise ``fs``), ``ignore-eof`` (keeps running after stdin closes).
"""

from __future__ import annotations

import json
import sys
import time

FAULT = sys.argv[1] if len(sys.argv) > 1 else ""
out = sys.stdout
sessions: list[str] = []
waiting: dict[str, object] = {}  # session -> id of the prompt waiting for cancel
initialized = False


def send(obj: object) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


def error(mid: object, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


def chunk(sid: str, text: str) -> None:
    update = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": text},
    }
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": sid, "update": update},
        }
    )


def handle(msg: object) -> dict[str, object] | None:
    global initialized
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return error(None, -32600, "Invalid Request")
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method is None:
        return None  # a response: we sent no request
    if "id" not in msg:  # notification
        if method == "session/cancel" and params.get("sessionId") in waiting:
            sid = params["sessionId"]
            reason = "end_turn" if FAULT == "end-turn-after-cancel" else "cancelled"
            send(
                {
                    "jsonrpc": "2.0",
                    "id": waiting.pop(sid),
                    "result": {"stopReason": reason},
                }
            )
        return None
    if method == "initialize":
        initialized = True
        return {
            "jsonrpc": "2.0",
            "id": mid,
            "result": {"protocolVersion": 1, "agentCapabilities": {}},
        }
    if not initialized:
        return error(mid, -32600, "not initialized")
    if method == "session/new":
        sessions.append(f"s{len(sessions) + 1}")
        return {"jsonrpc": "2.0", "id": mid, "result": {"sessionId": sessions[-1]}}
    if method == "session/prompt":
        sid = params.get("sessionId")
        text = " ".join(b.get("text", "") for b in params.get("prompt", []))
        if sid not in sessions:
            return error(mid, -32602, "unknown session")
        if text == "wait":
            chunk(sid, "waiting")
            waiting[sid] = mid
            return None
        if text.startswith("read ") and FAULT == "fs-without-capability":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 900,
                    "method": "fs/read_text_file",
                    "params": {"sessionId": sid, "path": text[5:]},
                }
            )
        chunk(sid, "you said: " + text)
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
        if text == "hello" and FAULT == "update-after-response":
            chunk(sid, "one more thing")
        return None
    return error(mid, -32601, "Method not found")


for raw in sys.stdin:
    if not raw.strip():
        continue
    try:
        value = json.loads(raw)
    except ValueError:
        send(error(None, -32700, "Parse error"))
        continue
    if isinstance(value, list):
        if not value:
            send(error(None, -32600, "Invalid Request"))
            continue
        answers = [a for a in (handle(m) for m in value) if a is not None]
        if answers:
            send(answers)
        continue
    answer = handle(value)
    if answer is not None:
        send(answer)
if FAULT == "ignore-eof":
    time.sleep(100)
