"""An agent one spec ahead, raw JSON lines: its turn sends a ``session/update``
whose kind (``sessionUpdate``) our schema does not know, then a known one."""

import json
import sys


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result: dict[str, object] = {"protocolVersion": 1, "agentCapabilities": {}}
    elif method == "session/new":
        result = {"sessionId": "s1"}
    elif method == "session/prompt":
        for update in (
            {"sessionUpdate": "hologram_chunk", "frames": [1, 2, 3]},
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "still here"},
            },
        ):
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "s1", "update": update},
                }
            )
        result = {"stopReason": "end_turn"}
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {"code": -32601, "message": "Method not found"},
            }
        )
        continue
    send({"jsonrpc": "2.0", "id": ident, "result": result})
