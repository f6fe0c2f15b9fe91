"""Not an agent: copies its stdin to its stdout byte for byte (os.read /
os.write) and to the file named by its argument, for the proxy's
byte-for-byte test."""

from __future__ import annotations

import os
import sys

with open(sys.argv[1], "wb") as log:
    while data := os.read(0, 65536):
        log.write(data)
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]
