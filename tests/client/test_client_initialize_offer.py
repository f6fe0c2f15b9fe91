"""Every version ``acp-client`` offers is honoured: its one ``initialize``
(v1 and v2 by default) is valid under the JSON Schema of each offered
version in ``spec/`` (v2 in both drafts kept there), checked with
``jsonschema`` on the bytes the real program writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: an agent that writes the first line it reads to the file it is given
RECORDER = "import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.readline())"


def _validator(folder: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "spec" / folder / "schema.json").read_text())
    root = {"$ref": "#/$defs/InitializeRequest", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(root)


def _sent_initialize(tmp_path: Path, *options: str) -> dict[str, Any]:
    record = tmp_path / "initialize.json"
    agent = [sys.executable, "-c", RECORDER, str(record)]
    subprocess.run(
        [sys.executable, "-m", "acp_client", *options, "--prompt", "hi", "--", *agent],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )
    line: dict[str, Any] = json.loads(record.read_bytes())
    assert line["method"] == "initialize"
    params: dict[str, Any] = line["params"]
    return params


@pytest.mark.parametrize("folder", ["v1", "v2", "v2_alpha0"])
def test_the_default_offer_is_valid_under_each_offered_versions_schema(
    tmp_path: Path, folder: str
) -> None:
    params = _sent_initialize(tmp_path)
    assert params["protocolVersion"] == 2
    errors = [e.message for e in _validator(folder).iter_errors(params)]
    assert errors == []
