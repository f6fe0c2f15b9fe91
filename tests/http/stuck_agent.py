"""A raw stdio agent (JSON lines, no library) that will not end: it ignores
SIGTERM and the end of its input, and leaves a grandchild (deaf too) in its
process group.  It writes its pid and the grandchild's to the file named by its
argument (a folder: to the file named after its pid there), then answers
``initialize``."""

import json
import os
import signal
import subprocess
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen(
    [
        sys.executable,
        "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)",
    ]
)
target = sys.argv[1]
if os.path.isdir(target):
    target = os.path.join(target, f"{os.getpid()}.json")
with open(target + ".tmp", "w") as f:
    json.dump({"agent": os.getpid(), "grandchild": grandchild.pid}, f)
os.replace(target + ".tmp", target)
message = json.loads(sys.stdin.readline())
answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 1}}
sys.stdout.write(json.dumps(answer) + "\n")
sys.stdout.flush()
while True:  # deaf to its stdin's end
    time.sleep(60)
