"""Run a stdio ACP peer and log every line crossing its stdin/stdout.

``python wiretap.py LOGFILE CMD ARGS...``: starts ``CMD``, copies our stdin to
its stdin and its stdout to our stdout, unchanged, and appends each line to
``LOGFILE`` prefixed with ``-> `` (to the peer) or ``<- `` (from the peer).
Its stderr is inherited. Exits with the peer's status.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO


def pump(
    src: IO[bytes], dst: IO[bytes], log: IO[bytes], arrow: bytes, lock: threading.Lock
) -> None:
    for line in iter(src.readline, b""):
        with lock:
            log.write(arrow + line if line.endswith(b"\n") else arrow + line + b"\n")
            log.flush()
        dst.write(line)
        dst.flush()
    dst.close()


def main() -> int:
    logfile, *command = sys.argv[1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(logfile, "ab") as log:
        up = threading.Thread(
            target=pump,
            args=(sys.stdin.buffer, child.stdin, log, b"-> ", lock),
            daemon=True,
        )
        up.start()
        pump(child.stdout, sys.stdout.buffer, log, b"<- ", lock)
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
