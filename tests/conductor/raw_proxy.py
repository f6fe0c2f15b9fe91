"""A pass-through ACP proxy written from the schema alone: JSON lines, no library.

What schema 2.4.0 says of a proxy (``proxy/initialize``, ``proxy/successor``):
it is initialized with ``proxy/initialize`` and forwards ``initialize`` to its
successor inside ``proxy/successor``; what it sends its successor goes in
``proxy/successor``, what comes from its successor arrives in it; the answer
of a wrapped request is the wrapped request's, unchanged; cancellation is
hop-local.  Messages to and from its predecessor are plain.

Run by tests/conductor (``python raw_proxy.py``); stdlib only.
"""

import json
import sys

out = sys.stdout.buffer
pending = {}  # our request id -> the id to answer with
forwarded = {}  # the id we were asked with -> our id (for $/cancel_request)
next_id = 0


def send(message):
    out.write(
        json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    )
    out.flush()


def request(method, params, answer_to):
    global next_id
    next_id += 1
    message = {"jsonrpc": "2.0", "id": next_id, "method": method}
    if params is not None:
        message["params"] = params
    pending[next_id] = answer_to
    forwarded[answer_to] = next_id
    send(message)


def notify(method, params):
    message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    send(message)


def wrapped(method, params):
    inner = {"method": method}
    if params is not None:
        inner["params"] = params
    return inner


def handle(msg):
    """One message from the conductor."""
    method, ident, params = msg.get("method"), msg.get("id"), msg.get("params")
    if method is None:  # an answer to one of ours: back under the id we were asked with
        answer_to = pending.pop(ident)
        forwarded.pop(answer_to, None)
        reply = {"jsonrpc": "2.0", "id": answer_to}
        reply.update({k: msg[k] for k in ("result", "error") if k in msg})
        send(reply)
    elif method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {
                    "code": -32600,
                    "message": "a proxy needs a successor (proxy/initialize)",
                },
            }
        )
    elif method == "$/cancel_request":
        ours = forwarded.get(params["requestId"])
        if ours is not None:
            notify("$/cancel_request", {"requestId": ours})
    elif (
        method == "proxy/successor"
    ):  # from our successor: on to our predecessor, plain
        if "id" in msg:
            request(params["method"], params.get("params"), ident)
        else:
            notify(params["method"], params.get("params"))
    else:  # from our predecessor: on to our successor, wrapped
        if method == "proxy/initialize":
            method = "initialize"
        if "id" in msg:
            request("proxy/successor", wrapped(method, params), ident)
        else:
            notify("proxy/successor", wrapped(method, params))


def main(on_message=handle):
    for line in sys.stdin.buffer:
        if line.strip():
            on_message(json.loads(line))


if __name__ == "__main__":
    main()
