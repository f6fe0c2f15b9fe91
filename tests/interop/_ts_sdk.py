"""The published TypeScript SDK (``@agentclientprotocol/sdk``), installed by
the tests themselves with npm.

``ts_sdk()`` installs the package once per machine and version into a
cache folder (``$ACP_TS_SDK_CACHE``, else ``~/.cache/acp-msgspec/ts-sdk``)
under a file lock, so that pytest-xdist workers (and concurrent runs)
share one install: the first takes the lock and runs ``npm install``, the
others wait for it and find the ``installed`` marker. The answer says where
the package is and how to run a script that imports it::

    sdk = ts_sdk()
    subprocess.run([sdk.node, str(script)], cwd=sdk.root, ...)

A script placed under ``sdk.root`` resolves ``@agentclientprotocol/sdk``
(and its entry points ``/unstable``, ``/experimental/v2``, ...) from
``sdk.root/node_modules``. ``ts_sdk(extras=("ws@8.18.0",))`` installs the
SDK with other packages beside it (the WebSocket server the SDK's
``experimental/node`` upgrade handler takes), in a folder of its own. No node or npm, or an install that fails: the
test fails with npm's own reason (node and npm are on every machine this
suite runs on, the npm registry reachable).
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _upstream import SDK_VERSION

PACKAGE = "@agentclientprotocol/sdk"
#: the version spec/v1 and spec/v2 come from (spec/v1/UPSTREAM.json)
VERSION: str = SDK_VERSION
#: npm install timeout (seconds): generous, a cold cache on a slow network
INSTALL_TIMEOUT = 600
#: how much of npm's output a failure quotes
MAX_OUTPUT = 2000


@dataclasses.dataclass(frozen=True)
class TsSdk:
    """One installed version of the SDK."""

    #: a folder with ``node_modules/@agentclientprotocol/sdk``; put scripts here
    root: Path
    version: str
    node: str

    @property
    def package(self) -> Path:
        return self.root / "node_modules" / PACKAGE


def cache_root() -> Path:
    """Where installs live: ``$ACP_TS_SDK_CACHE`` or ``~/.cache/acp-msgspec/ts-sdk``."""
    configured = os.environ.get("ACP_TS_SDK_CACHE")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "acp-msgspec" / "ts-sdk"


def ts_sdk(version: str = VERSION, extras: tuple[str, ...] = ()) -> TsSdk:
    """``PACKAGE@version`` (and ``extras``, npm specs) installed once, shared under a lock."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed for the TypeScript interop tests")
    root = cache_root() / "+".join([version, *(e.replace("/", "_") for e in extras)])
    root.mkdir(parents=True, exist_ok=True)
    marker = root / "installed"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not marker.is_file():
            _install(npm, root, [f"{PACKAGE}@{version}", *extras])
            marker.write_text(f"{PACKAGE}@{version} {' '.join(extras)}\n")
    return TsSdk(root=root, version=version, node=node)


def _install(npm: str, root: Path, packages: list[str]) -> None:
    (root / "package.json").write_text(
        '{"name": "acp-msgspec-ts-interop", "private": true, "type": "module"}\n'
    )
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                *packages,
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm install {' '.join(packages)}: timed out")
    installed = root / "node_modules" / PACKAGE / "package.json"
    if done.returncode != 0 or not installed.is_file():
        output = (done.stderr or done.stdout)[-MAX_OUTPUT:]
        pytest.fail(f"npm install {' '.join(packages)} failed:\n{output}")
