"""Running ``acp-client`` (``python -m acp_client``) and ``acp_echo`` (the reference agent) as processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import acp_schema
import acp_trio
import trio

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
CLIENT = [PYTHON, "-m", "acp_client"]
ECHO_AGENT = [PYTHON, "-m", "acp_echo"]
HOSTILE_AGENT = str(Path(__file__).with_name("hostile_agent.py"))
SIMPLE_AGENT = str(ROOT / "examples" / "simple_agent.py")
SIMPLE_CLIENT = str(ROOT / "examples" / "simple_client.py")
SDK_TOOL_AGENT = str(Path(__file__).with_name("sdk_tool_agent.py"))
REPEAT_AGENT = str(Path(__file__).with_name("repeat_agent.py"))
OFFICIAL_AGENT = str(ROOT / "tests" / "interop" / "official_agent.py")
TIMEOUT = 30


def child_env() -> dict[str, str]:
    """Our environment, with the paths this process imports acp_* from."""
    env = dict(os.environ)
    paths = [
        str(Path(acp_schema.__file__).resolve().parents[1]),
        str(Path(acp_trio.__file__).resolve().parents[1]),
    ]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.pop("ECHO_AGENT_LOG", None)
    return env


def agent_command(*args: str) -> list[str]:
    return [*ECHO_AGENT, "--chunk-delay", "0", *args]


async def run_client(
    *options: str,
    agent: list[str] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """``acp-client OPTIONS -- AGENT`` to completion: (status, stdout, stderr);
    ``env`` is added to the environment."""
    command = [*CLIENT, *options, "--", *(agent or agent_command())]
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            command,
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=child_env() | (env or {}),
            cwd=cwd,
            start_new_session=True,  # no controlling terminal: /dev/tty cannot open
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def session_id_of(output: str) -> str:
    for line in output.splitlines():
        if line.startswith("session: "):
            return line.split()[1]
    raise AssertionError(f"no session line in:\n{output}")


async def read_until(
    stream: trio.abc.ReceiveStream, buffer: bytearray, marker: bytes
) -> None:
    """Read ``stream`` into ``buffer`` until ``marker`` is in it."""
    while marker not in buffer:
        data = await stream.receive_some()
        if not data:
            raise AssertionError(f"EOF before {marker!r}: {bytes(buffer)!r}")
        buffer += data
