"""``acp_inspect check-client`` against real clients: writes docs/check-client-clients.md.

    python tools/check_real_clients.py [--cache DIR] [--jobs N] [--json-dir DIR]

Not part of the test suite (it downloads the clients).  The clients:

- ``acp-client`` (this repository), as it starts by default (it offers
  protocol versions 1 and 2) and with ``--protocol 1``; ``--yes`` and
  ``--prompt hi`` (no user at a terminal);
- the official Python SDK's example client, ``examples/client.py`` of
  ``agent-client-protocol`` 0.12.1 (taken from the sdist on PyPI with ``pip
  download``: the wheel has no examples), run with the SDK installed here,
  given ``hi`` on stdin (its prompt), then end of file (it exits);
- the TypeScript SDK's example client on ``@agentclientprotocol/sdk`` 2.4.0
  from npm: ``tools/client_examples/ts_sdk_example_client.mjs``, the
  example's handlers and flow on the published package (which ships no
  examples; see the script's header for its two changes, both of its I/O).

Downloads go to ``--cache`` (default ``~/.cache/acp-msgspec/check-clients``).
Each client is checked with ``run_check_client`` (every case, ``--jobs``
at a time); the page is rewritten from the reports, never by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio
from acp_inspect._check import CheckReport
from acp_inspect._check_client import run_check_client
from acp_inspect._client_cases import CLIENT_CASES

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "check-client-clients.md"
PY_SDK = "agent-client-protocol==0.12.1"
TS_SDK = "@agentclientprotocol/sdk@2.4.0"
TS_CLIENT = ROOT / "tools" / "client_examples" / "ts_sdk_example_client.mjs"
#: characters of a case's detail on the page
DETAIL = 240
#: a case's temporary directory in a detail (a new name every run)
CASE_DIR = re.compile(r"/[^\s'\"]*/acp-check-client-[^/\s'\"]+")


@dataclass(frozen=True)
class Client:
    name: str
    #: where it comes from, for the page
    source: str
    command: list[str]
    stdin: bytes = b""
    notes: list[str] = field(default_factory=list[str])


def python_example(cache: Path) -> Path:
    """examples/client.py of the SDK's sdist, downloaded once."""
    target = cache / "python-sdk" / "client.py"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", PY_SDK, "--no-binary", ":all:",
         "--no-deps", "-d", str(target.parent)],
        check=True,
    )  # fmt: skip
    sdist = next(target.parent.glob("agent_client_protocol-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        member = next(
            m for m in tar.getmembers() if m.name.endswith("/examples/client.py")
        )
        source = tar.extractfile(member)
        assert source is not None
        target.write_bytes(source.read())
    return target


def ts_example(cache: Path) -> list[str]:
    """The TS example client beside the SDK installed with npm, once."""
    root = cache / "ts-sdk"
    if not (root / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        (root / "package.json").write_text('{"private": true}\n')
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed for the TypeScript SDK's client"
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", TS_SDK], cwd=root, check=True
        )
    script = root / TS_CLIENT.name  # beside node_modules: it imports the SDK
    shutil.copyfile(TS_CLIENT, script)
    node = shutil.which("node")
    assert node is not None
    return [node, str(script), "{agent}"]


def clients(cache: Path) -> list[Client]:
    acp_client = [sys.executable, "-m", "acp_client", "--yes", "--prompt", "hi"]
    return [
        Client(
            "acp-client",
            "this repository",
            [*acp_client, "--", "{agent}"],
            notes=[
                "By default acp-client offers protocol versions 1 and 2 in one `initialize`: its v1"
                " fields and those of both v2 drafts (2.0.0-alpha.0 and the 2.4.0 SDK's), merged"
                " (`acp_core.merge_initialize`, which checks the message against every offered"
                " version's schema); the check's agent answers v1.",
            ],
        ),
        Client(
            "acp-client --protocol 1",
            "this repository",
            [*acp_client, "--protocol", "1", "--", "{agent}"],
        ),
        Client(
            "Python SDK example",
            f"`examples/client.py` of `{PY_SDK}` (sdist, PyPI)",
            [sys.executable, str(python_example(cache)), "{agent}"],
            stdin=b"hi\n",
        ),
        Client(
            "TypeScript SDK example",
            f"`tools/client_examples/{TS_CLIENT.name}` on `{TS_SDK}` (npm)",
            ts_example(cache),
        ),
    ]


def page(runs: list[tuple[Client, CheckReport]]) -> str:
    lines = [
        "# `check-client` against real clients",
        "",
        "Produced by `python tools/check_real_clients.py` (not part of the test suite; it",
        "downloads the SDKs): `python -m acp_inspect check-client` run on each client below,",
        "every case against a fresh client process. Re-run it to refresh this page; it is",
        "never edited by hand. What each case checks, and the client under test's command",
        "line, are in [inspecting agents and clients](inspect.md#check-client-a-conformance-suite-for-clients).",
        "`CASE` in a detail stands for the case's temporary directory.",
        "",
        "| client | from | command |",
        "|---|---|---|",
    ]
    for client, _ in runs:
        shown = " ".join(
            Path(a).name if a.startswith("/") else a for a in client.command
        )
        stdin = f" (stdin: `{client.stdin.decode().strip()}`)" if client.stdin else ""
        lines.append(f"| {client.name} | {client.source} | `{shown}`{stdin} |")
    lines += ["", "## Results", ""]
    header = "| case | cites | " + " | ".join(c.name for c, _ in runs) + " |"
    lines += [header, "|---|---|" + "---|" * len(runs)]
    for case in CLIENT_CASES:
        row = [f"`{case.key}`", case.spec.cite()]
        for _, report in runs:
            result = next((r for r in report.results if r.case.key == case.key), None)
            row.append("-" if result is None else result.status.upper())
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## What failed, and why not applicable", ""]
    for client, report in runs:
        data = report.to_json()["summary"]
        lines += [
            f"### {client.name}",
            "",
            f"{data['pass']} passed, {data['fail']} failed, {data['n/a']} not applicable,"
            f" {data['skip']} skipped"
            + ("; MUST violations found." if report.must_failed else "."),
            "",
        ]
        lines += [f"{note}\n" for note in client.notes]
        skipped = [r for r in report.results if r.status == "skip"]
        if skipped:
            lines.append(f"- {len(skipped)} cases skipped: {skipped[0].detail}")
        for result in report.results:
            if result.status in ("pass", "skip"):
                continue
            detail = CASE_DIR.sub("CASE", result.detail)
            detail = detail.replace("|", "\\|").replace("\n", " ")[:DETAIL]
            lines.append(f"- `{result.case.key}` ({result.status}): {detail}")
            kinds = {f.rule: f for f in result.findings if f.direction == result.peer}
            for f in kinds.values():
                text = CASE_DIR.sub("CASE", f.text).replace("|", "\\|")[:DETAIL]
                lines.append(f"  - {f.level} {f.cite} [{f.rule}]: {text}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "acp-msgspec" / "check-clients",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--json-dir", type=Path, help="also write each client's JSON report here"
    )
    args = parser.parse_args()
    runs: list[tuple[Client, CheckReport]] = []
    for client in clients(args.cache):
        print(f"== {client.name}", file=sys.stderr)
        report = trio.run(
            partial(
                run_check_client, client.command, jobs=args.jobs, stdin=client.stdin
            )
        )
        print(report.summary(), file=sys.stderr)
        runs.append((client, report))
        if args.json_dir:
            args.json_dir.mkdir(parents=True, exist_ok=True)
            name = client.name.replace(" ", "-").replace("/", "")
            (args.json_dir / f"{name}.json").write_text(
                json.dumps(report.to_json(), indent=1)
            )
    PAGE.write_text(page(runs), encoding="utf-8")
    print(PAGE, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
