"""A loopback stand-in for the Anthropic Messages API, for a real agent's model.

``python model_standin.py PORT_FILE LOG_FILE TOOL``: listens on 127.0.0.1 (a
free port, written to PORT_FILE), answers every ``POST /v1/messages`` with a
streamed (server-sent events) message, and logs each request's body as one
JSON line to LOG_FILE.  The script of the conversation:

- a request whose tools include TOOL and whose last message carries no
  ``tool_result``: call TOOL with ``{"text": "one two three"}``;
- a request whose last message carries a ``tool_result``: say
  ``the tool said: RESULT``;
- anything else (titles, summaries): say ``ok``.

Standard library only.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 8 * 1024 * 1024


def _events(content: list[dict[str, Any]], stop: str) -> bytes:
    out: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_standin",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-standin",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(content):
        if block["type"] == "text":
            out.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            out.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
            )
            delta = {
                "type": "input_json_delta",
                "partial_json": json.dumps(block["input"]),
            }
        out.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        out.append(
            ("content_block_stop", {"type": "content_block_stop", "index": index})
        )
    out.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        )
    )
    out.append(("message_stop", {"type": "message_stop"}))
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in out
    )


def _tool_result(body: dict[str, Any]) -> str | None:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content")
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                return " ".join(
                    str(b.get("text", "")) for b in inner if isinstance(b, dict)
                )
            return str(inner)
    return None


def main(port_file: str, log_file: str, tool: str) -> None:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = min(int(self.headers.get("content-length") or 0), MAX_BODY)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            with open(log_file, "a") as log:
                log.write(json.dumps({"path": self.path, "body": body}) + "\n")
            if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                payload = json.dumps({"input_tokens": 1}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            names = [
                t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
            ]
            result = _tool_result(body)
            if result is not None:
                content = [{"type": "text", "text": f"the tool said: {result}"}]
                stop = "end_turn"
            elif tool in names:
                content = [
                    {
                        "type": "tool_use",
                        "id": "toolu_standin",
                        "name": tool,
                        "input": {"text": "one two three"},
                    }
                ]
                stop = "tool_use"
            else:
                content = [{"type": "text", "text": "ok"}]
                stop = "end_turn"
            data = _events(content, stop)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
