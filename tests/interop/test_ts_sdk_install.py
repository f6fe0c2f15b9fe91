"""The TypeScript SDK helper: one npm install shared by every test and worker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from _ts_sdk import VERSION, ts_sdk


def test_the_ts_sdk_installs_once_and_its_entry_points_import(tmp_path: Path) -> None:
    sdk = ts_sdk()
    assert json.loads((sdk.package / "package.json").read_text())["version"] == VERSION
    assert ts_sdk().root == sdk.root  # the second call finds the install
    script = sdk.root / f"probe-{tmp_path.name}.mjs"
    script.write_text(
        'import * as v1 from "@agentclientprotocol/sdk";\n'
        'import * as v2 from "@agentclientprotocol/sdk/experimental/v2";\n'
        "console.log(JSON.stringify([v1.PROTOCOL_VERSION, v2.PROTOCOL_VERSION,"
        " typeof v1.AgentApp, typeof v2.ClientApp]));\n"
    )
    try:
        done = subprocess.run(
            [sdk.node, str(script)], capture_output=True, text=True, timeout=60
        )
    finally:
        script.unlink()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [1, 2, "function", "function"]
