"""A raw stdio agent (JSON lines, no library) that writes JSON nested far deeper
than any bound (5,000 levels, as an agent copying a model's or tool's JSON into
``rawInput`` might): on ``session/new`` a notification whose ``rawInput`` is that
deep, then a request (``id: "deep"``) as deep, tells what it was answered
(``_seen``), then answers ``session/new`` (``sessionId`` ``s1``)."""

import json
import sys

DEEP = "[" * 5_000 + "]" * 5_000


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


for raw in sys.stdin:
    message = json.loads(raw)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send(
            json.dumps(
                {"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": 1}}
            )
        )
    elif method == "session/new":
        send(
            '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1",'
            '"update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"t",'
            '"rawInput":' + DEEP + "}}}"
        )
        send(
            '{"jsonrpc":"2.0","id":"deep","method":"_ask","params":{"x":' + DEEP + "}}"
        )
        answer = json.loads(sys.stdin.readline())
        send(
            json.dumps(
                {"jsonrpc": "2.0", "method": "_seen", "params": {"answer": answer}}
            )
        )
        send(json.dumps({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "s1"}}))
