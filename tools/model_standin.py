"""A loopback stand-in for a model API that answers a scripted turn.

    python tools/model_standin.py --reply "TEXT" [--port N]

It speaks enough of the Anthropic Messages API for an agent built on Claude
Code to run a turn offline: ``POST /v1/messages`` (streamed as server-sent
events ``message_start``, ``content_block_start``, ``content_block_delta``...,
``content_block_stop``, ``message_delta``, ``message_stop``, or one JSON
message when the request does not ask for ``stream``) and ``POST
/v1/messages/count_tokens``, and ``HEAD /`` (200: Claude Code probes its
endpoint). Every request is recorded (method, path, body); any other path is
recorded as unknown and answered 404 with an API-shaped JSON error, so a client
reads a clear "not here" rather than a hang.

The turn it plays (:class:`Script`): a text, or first one tool call (while the
request offers that tool and holds no tool result yet) and then the text.

It listens on 127.0.0.1 only. Used by ``tools/real_agent_chain.py`` (in front
of a real agent from npm) and tested by ``tests/conductor/test_model_standin.py``
with a real HTTP client.
"""

from __future__ import annotations

import argparse
import http.server
import json
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

#: Requests recorded at most; past it the oldest are dropped (``dropped`` counts them).
MAX_RECORDS = 256
#: Bytes of a request body read and recorded at most; a longer body is answered 413.
MAX_BODY_BYTES = 8 << 20
#: How often the serving thread looks whether it is asked to stop.
POLL_SECONDS = 0.05
#: Characters of the reply per ``content_block_delta`` event.
DELTA_CHARS = 7


#: What the stand-in speaks (the query string aside): the Messages API, and
#: ``HEAD /``, which Claude Code sends to see whether its endpoint is up.
KNOWN = {
    ("POST", "/v1/messages"),
    ("POST", "/v1/messages/count_tokens"),
    ("HEAD", ""),
}


@dataclass(frozen=True)
class Recorded:
    """One request the stand-in received."""

    method: str
    path: str
    body: bytes
    known: bool  # a path the stand-in speaks


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model makes before answering its text."""

    name: str
    input: dict[str, Any]
    ident: str = "toolu_standin_1"


@dataclass
class Script:
    """What the stand-in answers, and what it saw (shared with its handler threads)."""

    reply: str
    tool: ToolUse | None = None  # called first, when the request offers it
    model: str = "claude-stand-in"
    max_records: int = MAX_RECORDS
    max_body_bytes: int = MAX_BODY_BYTES
    records: list[Recorded] = field(default_factory=list[Recorded])
    dropped: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, item: Recorded) -> None:
        with self.lock:
            self.records.append(item)
            if len(self.records) > self.max_records:
                del self.records[0]
                self.dropped += 1


def _usage(output_tokens: int) -> dict[str, int]:
    """A usage object with every count the real API sends (agents add them up)."""
    return {
        "input_tokens": 10,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _pieces(text: str) -> list[str]:
    return [text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)] or [""]


def sse_events(
    answer: str | ToolUse, model: str, message_id: str
) -> list[tuple[str, Any]]:
    """The Messages API's stream for one answer (a text, or one tool call, its
    input streamed as JSON in pieces): ``(event, data)`` pairs."""
    if isinstance(answer, ToolUse):
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": answer.ident,
            "name": answer.name,
            "input": {},
        }
        pieces = _pieces(json.dumps(answer.input))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        stop_reason = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        pieces = _pieces(answer)
        deltas = [{"type": "text_delta", "text": p} for p in pieces]
        stop_reason = "end_turn"
    events: list[tuple[str, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _usage(output_tokens=1),
                },
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("ping", {"type": "ping"}),
    ]
    events += [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": delta},
        )
        for delta in deltas
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": _usage(output_tokens=len(pieces)),
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def message(answer: str | ToolUse, model: str, message_id: str) -> dict[str, Any]:
    """The Messages API's answer when not streamed."""
    if isinstance(answer, ToolUse):
        content: dict[str, Any] = {
            "type": "tool_use",
            "id": answer.ident,
            "name": answer.name,
            "input": answer.input,
        }
        stop_reason = "tool_use"
    else:
        content = {"type": "text", "text": answer}
        stop_reason = "end_turn"
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [content],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(output_tokens=10),
    }


def answer_to(request: dict[str, Any], script: Script) -> str | ToolUse:
    """The script's tool call while the request offers that tool and holds no
    tool result yet; its text otherwise."""
    tool = script.tool
    if tool is None:
        return script.reply
    offered = {t.get("name") for t in request.get("tools") or [] if isinstance(t, dict)}
    if tool.name not in offered:
        return script.reply
    for turn in request.get("messages") or []:
        content = turn.get("content") if isinstance(turn, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return script.reply
    return tool


class _Handler(http.server.BaseHTTPRequestHandler):
    script: Script  # set on the subclass made by ModelStandIn

    def _json(self, status: int, value: Any) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, kind: str, text: str) -> None:
        self._json(status, {"type": "error", "error": {"type": kind, "message": text}})

    def _answer(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.script.max_body_bytes:
            self.script.record(Recorded(self.command, self.path, b"", False))
            self._error(413, "request_too_large", "stand-in: body too large")
            return
        body = self.rfile.read(length) if length else b""
        known = (self.command, path) in KNOWN
        self.script.record(Recorded(self.command, self.path, body, known))
        if self.command == "HEAD" and known:  # a reachability probe
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if not known:
            self._error(404, "not_found_error", f"stand-in: no {self.command} {path}")
            return
        try:
            request: Any = json.loads(body or b"{}")
        except ValueError:
            self._error(400, "invalid_request_error", "stand-in: body is not JSON")
            return
        if not isinstance(request, dict):
            self._error(400, "invalid_request_error", "stand-in: body is no object")
            return
        if path.endswith("count_tokens"):
            self._json(200, {"input_tokens": max(1, len(body) // 4)})
            return
        with self.script.lock:
            message_id = f"msg_standin_{len(self.script.records) + self.script.dropped}"
        answer = answer_to(request, self.script)
        if not request.get("stream"):
            self._json(200, message(answer, self.script.model, message_id))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event, data in sse_events(answer, self.script.model, message_id):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ModelStandIn:
    """The stand-in, serving in a thread while the ``with`` block runs."""

    def __init__(self, script: Script, port: int = 0) -> None:
        self.script = script
        handler = type("Handler", (_Handler,), {"script": script})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, args=(POLL_SECONDS,), daemon=True
        )

    def __enter__(self) -> ModelStandIn:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()

    def records(self) -> list[Recorded]:
        with self.script.lock:
            return list(self.script.records)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--reply", default="Hello from the stand-in.")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with ModelStandIn(Script(reply=args.reply), args.port) as standin:
        print(standin.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
