"""Faulty proxies for tests/conductor (``python hostile_proxy.py MODE``), on raw_proxy's rules.

- ``silent``: reads everything, writes nothing (never forwards);
- ``flood``: forwards until ``session/new``, then writes garbage lines as fast
  as it can and never reads again;
- ``exit``: forwards until ``session/prompt``, then exits mid-turn;
- ``garbage``: forwards, but answers what comes from its successor
  (``proxy/successor`` requests) with a line that is no JSON-RPC answer;
- ``bad-init``: answers ``proxy/initialize`` itself, its successor never initialized.
"""

import os
import sys

import raw_proxy

MODE = sys.argv[1]


def on_message(msg):
    method = msg.get("method")
    if MODE == "silent":
        return
    if MODE == "flood" and method == "session/new":
        junk = b"not json " * 1000 + b"\n"
        while True:
            raw_proxy.out.write(junk)
            raw_proxy.out.flush()
    if MODE == "exit" and method == "session/prompt":
        os._exit(3)
    if MODE == "garbage" and method == "proxy/successor" and "id" in msg:
        raw_proxy.out.write(
            b'{"jsonrpc":"2.0","id":%d,"result":{"outcome": garbage\n' % msg["id"]
        )
        raw_proxy.out.flush()
        return
    if MODE == "bad-init" and method == "proxy/initialize":
        raw_proxy.send(
            {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1}}
        )
        return
    raw_proxy.handle(msg)


raw_proxy.main(on_message)
