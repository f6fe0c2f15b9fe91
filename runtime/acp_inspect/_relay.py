"""The agent a client under ``check-client`` launches: a relay to the check.

``check-client`` writes, per case, a small executable (``agent``) that runs
this file with the path of a Unix socket the check listens on; the client
starts it as its agent.  The relay copies its stdin to the socket and the
socket to its stdout, byte for byte, so the scripted agent runs inside the
check, where the case's whole record is kept.  It imports the standard
library only (it is run by path: nothing of the client's environment is
needed but a Python).

- the client closes the agent's stdin: the socket's write side is shut,
  the relay goes on copying to stdout until the check closes the socket;
- the check closes the socket (the case is over, or "the agent exits
  mid-turn"): the relay exits at once (status 0), whatever the client does;
- the client stops reading the agent's stdout: the relay's write blocks,
  so the check's writes block too (the case's bound then gives the verdict).
"""

from __future__ import annotations

import os
import socket
import sys
import threading

#: Bytes copied at a time, each way.
CHUNK = 65536


def _to_socket(sock: socket.socket) -> None:
    """stdin -> socket, until stdin's end of file (then the write side is shut)."""
    try:
        while data := os.read(0, CHUNK):
            sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main(path: str) -> int:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as exc:
        print(
            f"acp-inspect relay: cannot reach the check at {path}: {exc}",
            file=sys.stderr,
        )
        return 2
    threading.Thread(target=_to_socket, args=(sock,), daemon=True).start()
    try:
        while data := sock.recv(CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass
    # the check closed its end: this agent is gone, whatever still runs
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
