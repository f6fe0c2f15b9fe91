"""The teaching proxies of ``examples/`` do what they say, in a chain in front of
``acp_echo`` (real processes) and in one process over the in-memory seam."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import acp_trio
import pytest
import trio
from acp_conductor import InProcessComponent, run_chain
from acp_schema import v1
from chain_support import HERE, PY, chain, prompts_script, scripted_client
from splitting_agent import PIECES, SECRET, SplittingAgent

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTES_PROXY = f"{PY} {EXAMPLES / 'proxy_context_injection.py'}"
REDACTION_PROXY = f"{PY} {EXAMPLES / 'proxy_redaction.py'}"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _agent_text(data: bytes) -> str:
    """The text of every agent message chunk the client read."""
    text = []
    for line in data.splitlines():
        message = json.loads(line)
        update = message.get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "agent_message_chunk":
            text.append(update["content"].get("text", ""))
    return "".join(text)


def test_the_context_proxy_puts_the_notes_before_every_prompt(tmp_path: Path) -> None:
    notes = tmp_path / "NOTES.md"
    notes.write_text("tests run with nox", encoding="utf-8")
    command = chain(f"{NOTES_PROXY} {notes}")
    seen = scripted_client(command, script=prompts_script("first", "second"))
    # acp_echo says back the prompt it received, notes first
    said = _agent_text(seen)
    assert said.count("You said: Project notes: tests run with nox first") == 1
    assert said.count("You said: Project notes: tests run with nox second") == 1


def test_the_redaction_proxy_keeps_secrets_from_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    literal = "hunter2-password"
    monkeypatch.setenv("ACP_REDACT", literal)
    prompt = f"my key is {SECRET} and my password {literal} ok"
    seen = scripted_client(chain(REDACTION_PROXY), script=prompts_script(prompt))
    alone = scripted_client(chain(), script=prompts_script(prompt))
    # acp_echo puts the prompt in its message and its tool call's input and
    # output: all of it passes the proxy
    assert alone.count(SECRET.encode()) >= 3
    assert SECRET.encode() not in seen
    assert literal.encode() not in seen
    assert seen.count(b"[REDACTED]") >= alone.count(SECRET.encode())
    assert "You said: my key is [REDACTED] and my password [REDACTED] ok" in (
        _agent_text(seen)
    )


class _Recorder(v1.Client):
    chunks: list[str] = []  # noqa: RUF012

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        pass

    async def session_update(self, params: v1.SessionNotification) -> None:
        content: Any = getattr(params.update, "content", None)
        self.chunks.append(content.text)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("not asked")


async def _one_turn_in_process(proxy: Any, serve_proxy: Any) -> list[str]:
    """One prompt through ``proxy`` (served by ``serve_proxy``) in front of
    :class:`SplittingAgent`, every component in this process; the chunks the
    client got."""
    _Recorder.chunks = []
    components = [
        InProcessComponent(lambda s: serve_proxy(s, proxy), name="proxy"),
        InProcessComponent(lambda s: acp_trio.serve_agent(s, SplittingAgent)),
    ]
    ours, chain_end = acp_trio.memory_stream_pair()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_chain, chain_end, components)
            async with acp_trio.connect_to_agent(ours, _Recorder) as conn:
                await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
                await conn.agent.session_new(
                    v1.NewSessionRequest(cwd="/", mcp_servers=[])
                )
                prompt: list[v1.ContentBlock] = [v1.TextContent(text="hi")]
                answer = await conn.agent.session_prompt(
                    v1.PromptRequest(session_id="s1", prompt=prompt)
                )
                assert answer.stop_reason == "end_turn"
    return _Recorder.chunks


async def test_a_chain_of_in_process_components_runs_over_the_seam() -> None:
    notes = _example("proxy_context_injection")
    SplittingAgent.seen = []
    chunks = await _one_turn_in_process(
        notes.ProjectNotes("use nox"), acp_trio.serve_proxy
    )
    assert chunks == list(PIECES)
    [prompt] = SplittingAgent.seen
    assert [getattr(b, "text", None) for b in prompt] == [
        "Project notes:\nuse nox",
        "hi",
    ]


def test_a_secret_cut_between_chunks_is_masked() -> None:
    command = chain(REDACTION_PROXY, agent=[PY, str(HERE / "splitting_agent.py")])
    seen = scripted_client(command, script=prompts_script("hi"))
    assert SECRET[:9].encode() not in seen
    assert SECRET[9:].encode() not in seen
    assert _agent_text(seen) == "the key: [REDACTED] done last"
