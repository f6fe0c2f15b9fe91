"""A chain of pass-through proxies in front of acp_echo is the agent, as far
as a client can tell: the same ``acp_inspect check`` verdicts, the same bytes
(but for ``mcpCapabilities.acp`` in the ``initialize`` answer, which the
conductor adds: it bridges MCP-over-ACP for an agent without it)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from chain_support import AGENT, PROXIES, PY, advertised, chain, scripted_client


def _verdicts(command: list[str], report: Path) -> dict[str, str]:
    subprocess.run(
        [
            PY,
            "-m",
            "acp_inspect",
            "check",
            "--jobs",
            "2",
            "--json",
            str(report),
            "--",
            *command,
        ],
        capture_output=True,
        timeout=300,
        check=False,
    )
    cases = json.loads(report.read_text())["cases"]
    return {case["case"]: case["status"] for case in cases}


def messages_of(data: bytes) -> list[object]:
    """The messages of ``data``, the ids of requests to the client blanked: the
    raw proxy re-encodes with Python's json (5.7e-05 for 0.000057) and numbers
    its own requests, so it passes the same messages, not the same bytes."""
    out = []
    for line in data.splitlines():
        message = json.loads(line)
        if "method" in message and "id" in message:
            message["id"] = "ID"
        out.append(message)
    return out


def test_two_pass_through_proxies_give_the_agents_check_verdicts(
    tmp_path: Path,
) -> None:
    alone = _verdicts(AGENT, tmp_path / "alone.json")
    assert list(alone.values()).count("pass") >= 15
    assert _verdicts(chain("trio", "raw"), tmp_path / "trio-raw.json") == alone
    assert _verdicts(chain("asyncio", "raw"), tmp_path / "asyncio-raw.json") == alone


@pytest.mark.parametrize("proxies", [("trio", "asyncio"), ("asyncio", "trio")])
def test_the_client_reads_the_agents_bytes_through_library_proxies(
    proxies: tuple[str, str],
) -> None:
    assert scripted_client(chain(*proxies)) == advertised(scripted_client(AGENT))


def test_the_client_reads_the_agents_bytes_through_a_conductor_alone() -> None:
    assert scripted_client(chain()) == advertised(scripted_client(AGENT))


def test_without_the_mcp_bridge_the_client_reads_the_agents_bytes_exactly() -> None:
    command = chain("trio", "asyncio", options=("--no-mcp-bridge",))
    assert scripted_client(command) == scripted_client(AGENT)


def test_a_proxy_from_the_schema_alone_changes_only_its_own_encoding() -> None:
    assert messages_of(scripted_client(chain("raw", "raw"))) == messages_of(
        advertised(scripted_client(AGENT))
    )


def test_a_conductor_in_proxy_mode_nests_inside_another() -> None:
    inner = shlex.join([PY, "-m", "acp_conductor", "--proxy", PROXIES["trio"]])
    outer = chain("asyncio", inner, "raw")
    assert messages_of(scripted_client(outer)) == messages_of(
        advertised(scripted_client(AGENT))
    )


def test_trace_records_every_hop_of_the_chain(tmp_path: Path) -> None:
    seen = scripted_client(chain("trio", "asyncio", options=("--trace", str(tmp_path))))
    assert messages_of(seen) == messages_of(advertised(scripted_client(AGENT)))
    hops = sorted(p.name for p in tmp_path.iterdir())
    assert [h.split("-")[1] for h in hops] == ["0", "1", "2"]
    for hop in hops:
        text = (tmp_path / hop).read_text()
        # every hop saw the turn: the prompt going in, its answer coming out
        assert "session/prompt" in text and "end_turn" in text, hop
