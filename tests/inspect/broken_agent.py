"""A small raw ACP agent (v1, stdlib only) that passes every case of
``acp_inspect check``, or breaks exactly one rule: ``python broken_agent.py [FAULT]``.

Faults: ``end-turn-after-cancel`` (a cancelled prompt ends ``end_turn``),
``update-after-response`` (a chunk after the answer to a "hello" prompt),
``fs-without-capability`` (reads a file on "read ..." although the client did
not advertise ``fs``), ``ignore-eof`` (keeps running after stdin closes).

Hostile to the check itself (``python broken_agent.py FAULT [N]``): a "wait"
prompt streams a chunk every 0.1 s; ``end-turn-mid-turn`` /
``silent-mid-turn`` answer a cancel that comes after 3 chunks ``end_turn`` /
never (an early cancel correctly); ``always-trap`` asks permission on each
prompt with an ``allow_always`` option first and exits if it is chosen;
``auth-required`` serves ``session/new`` only after ``authenticate``
(method ``key``); ``no-protocol-version`` leaves it out of its initialize
answer; ``error-without-id`` answers ``session/new`` with an error without
an id; ``flood N`` streams N MB of chunks before answering a prompt;
``huge N`` pads every answer to N MB; ``late N`` starts reading N seconds
late; ``slow-eof N`` exits N seconds after its stdin closed;
``terminal-auth-required`` offers a ``terminal`` method only (``login``)
and refuses ``session/new`` (no login ever ran); ``batch-error-without-id``
answers a batch with one error without an id; ``tool-after-cancel`` asks
permission for a tool on ``session/cancel`` and runs it when allowed;
``elicitation-assumed`` elicits a form on an "elicit" prompt and fails the
turn unless it is accepted;
``slow-stream`` streams a "hello" turn for 2 s (a chunk every 0.2 s).  Its
initialize answer says its HOME and cwd in ``_meta``; it says its fault on
stderr.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time

FAULT = sys.argv[1] if len(sys.argv) > 1 else ""
N = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
STREAMING = FAULT in ("end-turn-mid-turn", "silent-mid-turn")
out = sys.stdout
streamed: dict[str, int] = {}  # session -> chunks streamed in its waiting turn
authenticated = False
sessions: list[str] = []
waiting: dict[str, object] = {}  # session -> id of the prompt waiting for cancel
initialized = False
pending_prompt: dict[int, tuple[str, object, str]] = {}  # permission id -> prompt


def send(obj: object) -> None:
    if FAULT == "huge" and isinstance(obj, dict) and "result" in obj:
        result = obj["result"]
        if isinstance(result, dict):
            result["_meta"] = {"pad": "x" * int(N * 1024 * 1024)}
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


def send_update(sid: str, update: dict[str, object]) -> None:
    params = {"sessionId": sid, "update": update}
    send({"jsonrpc": "2.0", "method": "session/update", "params": params})


def handle(msg: object) -> dict[str, object] | None:
    global initialized, authenticated
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return error(None, -32600, "Invalid Request")
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method is None:  # a response: to our permission request
        asked = pending_prompt.pop(mid, None) if isinstance(mid, int) else None
        if asked is not None:
            outcome = (msg.get("result") or {}).get("outcome") or {}
            if outcome.get("optionId") == "allow_always":
                sys.exit(3)  # a standing permission was granted: refuse to go on
            cancelled = outcome.get("outcome") == "cancelled"
            reason = "cancelled" if cancelled else "end_turn"
            if mid == 600:  # the elicitation: anything but accept fails the turn
                if (msg.get("result") or {}).get("action") == "accept":
                    send(
                        {
                            "jsonrpc": "2.0",
                            "id": asked[1],
                            "result": {"stopReason": "end_turn"},
                        }
                    )
                else:
                    send(error(asked[1], -32603, "the user did not fill in the form"))
                return None
            if mid == 700:  # the tool asked after session/cancel
                sys.stderr.write(f"late tool: {'not run' if cancelled else 'ran'}\n")
                if not cancelled:
                    run = {"sessionUpdate": "tool_call_update", "toolCallId": "late"}
                    send_update(asked[0], run | {"status": "in_progress"})
                    send_update(asked[0], run | {"status": "completed"})
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": asked[1],
                        "result": {"stopReason": "cancelled"},
                    }
                )
                return None
            chunk(asked[0], "you said: " + asked[2])
            send({"jsonrpc": "2.0", "id": asked[1], "result": {"stopReason": reason}})
        return None
    if "id" not in msg:  # notification
        if method == "session/cancel" and FAULT == "tool-after-cancel":
            sid = params.get("sessionId")
            if sid in waiting:  # asks to run a tool all the same
                ask = {"sessionId": sid, "toolCall": {"toolCallId": "late"}}
                ask["options"] = [
                    {"optionId": "yes", "name": "Yes", "kind": "allow_once"}
                ]
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": 700,
                        "method": "session/request_permission",
                        "params": ask,
                    }
                )
                pending_prompt[700] = (sid, waiting.pop(sid), "late tool")
            return None
        if method == "session/cancel" and params.get("sessionId") in waiting:
            sid = params["sessionId"]
            reason = "end_turn" if FAULT == "end-turn-after-cancel" else "cancelled"
            if streamed.pop(sid, 0) >= 3:  # mid-turn
                if FAULT == "silent-mid-turn":
                    waiting.pop(sid)
                    return None
                if FAULT == "end-turn-mid-turn":
                    reason = "end_turn"
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
        result: dict[str, object] = {"protocolVersion": 1, "agentCapabilities": {}}
        result["_meta"] = {"home": os.environ.get("HOME"), "cwd": os.getcwd()}
        if FAULT == "no-protocol-version":
            del result["protocolVersion"]
        if FAULT == "auth-required":
            result["authMethods"] = [{"id": "key", "name": "API key"}]
        if FAULT == "terminal-auth-required":
            login = {"id": "login", "name": "Log in", "type": "terminal"}
            result["authMethods"] = [login | {"args": ["--login"]}]
        return {"jsonrpc": "2.0", "id": mid, "result": result}
    if method == "authenticate" and params.get("methodId") == "key":
        authenticated = True
        return {"jsonrpc": "2.0", "id": mid, "result": {}}
    if not initialized:
        return error(mid, -32600, "not initialized")
    if method == "session/new" and FAULT == "terminal-auth-required":
        return error(mid, -32000, "Authentication required")
    if method == "session/new" and FAULT == "auth-required" and not authenticated:
        return error(mid, -32000, "Authentication required")
    if method == "session/new" and FAULT == "error-without-id":
        return {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
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
            streamed[sid] = 1
            return None
        if text == "elicit" and FAULT == "elicitation-assumed":
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            ask = {"sessionId": sid, "mode": "form", "message": "Name?"}
            ask["requestedSchema"] = schema
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 600,
                    "method": "elicitation/create",
                    "params": ask,
                }
            )
            pending_prompt[600] = (sid, mid, text)
            return None
        if FAULT == "always-trap":
            options = [
                {"optionId": k, "name": k, "kind": k}
                for k in ("allow_always", "allow_once", "reject_once")
            ]
            ask = {
                "sessionId": sid,
                "toolCall": {"toolCallId": "t1"},
                "options": options,
            }
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 800,
                    "method": "session/request_permission",
                    "params": ask,
                }
            )
            pending_prompt[800] = (sid, mid, text)
            return None
        if FAULT == "flood":  # half before the answer, half after
            piece = "y" * 65536
            for _ in range(int(N * 8)):
                chunk(sid, piece)
            send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
            for _ in range(int(N * 8)):
                chunk(sid, piece)
            return None
        if FAULT == "slow-stream":
            for _ in range(10):
                chunk(sid, "slowly")
                time.sleep(0.2)
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


def serve(raw: str) -> None:
    if not raw.strip():
        return
    try:
        value = json.loads(raw)
    except ValueError:
        send(error(None, -32700, "Parse error"))
        return
    if isinstance(value, list):
        if not value and FAULT == "batch-error-without-id":
            send(
                {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
            )
            return
        if not value:
            send(error(None, -32600, "Invalid Request"))
            return
        answers = [a for a in (handle(m) for m in value) if a is not None]
        if answers:
            send(answers)
        return
    answer = handle(value)
    if answer is not None:
        send(answer)


print(f"broken_agent: {FAULT or 'no fault'}", file=sys.stderr, flush=True)
if FAULT == "late":
    time.sleep(N)
parts: list[bytes] = []
while True:
    if STREAMING and waiting:
        ready, _, _ = select.select([0], [], [], 0.1)
        if not ready:  # a chunk every 0.1 s while a turn waits
            for sid in waiting:
                chunk(sid, "streaming")
                streamed[sid] = streamed.get(sid, 0) + 1
            continue
    data = os.read(0, 65536)
    if not data:
        break
    if b"\n" not in data:  # part of a long line: no rescan of what came before
        parts.append(data)
        continue
    buffer = b"".join([*parts, data])
    parts.clear()
    *lines, rest = buffer.split(b"\n")
    parts.append(rest)
    for line in lines:
        serve(line.decode("utf-8", "replace"))
if b"".join(parts):
    serve(b"".join(parts).decode("utf-8", "replace"))
if FAULT == "slow-eof":
    time.sleep(N)
if FAULT == "ignore-eof":
    time.sleep(100)
