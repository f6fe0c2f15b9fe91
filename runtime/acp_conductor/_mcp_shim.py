"""The stdio end of the conductor's MCP bridge: ``python _mcp_shim.py SOCKET SERVER_ID``.

The conductor gives an agent that does not speak MCP-over-ACP this program
as a stdio MCP server in place of a ``"type": "acp"`` one.  It connects to
the conductor's bridge (a Unix socket in a directory only the conductor's
user can enter), names the server in one first line, then relays MCP lines
both ways until either side closes.  Standard library only, run by path, so
it starts fast and needs nothing on the agent's ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading


def _pump_in(sock: socket.socket) -> None:
    try:
        for line in sys.stdin.buffer:
            sock.sendall(line if line.endswith(b"\n") else line + b"\n")
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: _mcp_shim.py SOCKET SERVER_ID", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(argv[1])
    except OSError as exc:
        print(f"cannot reach the conductor's MCP bridge: {exc}", file=sys.stderr)
        return 1
    sock.sendall(json.dumps({"serverId": argv[2]}).encode() + b"\n")
    threading.Thread(target=_pump_in, args=(sock,), daemon=True).start()
    out = sys.stdout.buffer
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        out.write(chunk)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
