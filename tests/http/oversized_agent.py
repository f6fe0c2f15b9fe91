"""A raw stdio agent (JSON lines, no library) whose lines go over the server's
``max_body_bytes``: on ``session/new`` it writes an over-long notification, an
over-long request (``id: "big"``), tells what it was answered (``_seen``), then
answers ``session/new`` with an over-long result; the next ``session/new`` it
answers normally."""

import json
import sys

PAD = "x" * 100_000
turns = 0


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for raw in sys.stdin:
    message = json.loads(raw)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": 1}})
    elif method == "session/new" and turns == 0:
        turns += 1
        send({"jsonrpc": "2.0", "method": "_pad", "params": {"pad": PAD}})
        send({"jsonrpc": "2.0", "id": "big", "method": "_ask", "params": {"pad": PAD}})
        answer = json.loads(sys.stdin.readline())
        send({"jsonrpc": "2.0", "method": "_seen", "params": {"answer": answer}})
        send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "s1", "pad": PAD}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "s2"}})
