"""The code in README.md and docs/ is made of complete programs that run.

Each document's ``python`` blocks are written to a fresh folder (rules in
``_code_blocks.py``): the files its console blocks run (``$ python client.py``,
which starts ``agent.py`` as a subprocess over real pipes) must print the
output shown; every other program must run alone, with stdin closed, and exit
0. Every block passes ``mypy --strict``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import acp_schema
import acp_trio
import pytest
from _code_blocks import CodeBlock, code_blocks, runs

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda p: str(p.relative_to(ROOT)),
)
TIMEOUT = 60


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _python_blocks(path: Path) -> list[CodeBlock]:
    return [b for b in code_blocks(path, ROOT) if b.language == "python"]


def _env() -> dict[str, str]:
    """Our environment, with the folders this process imports acp_* from."""
    env = dict(os.environ)
    paths = [
        str(Path(acp_schema.__file__).resolve().parents[1]),
        str(Path(acp_trio.__file__).resolve().parents[1]),
    ]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def _run(
    folder: Path, file: str, args: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable if a == "python" else a for a in args]
    return subprocess.run(
        [sys.executable, file, *argv],
        cwd=folder,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _write_programs(path: Path, folder: Path) -> list[str]:
    """Write the document's python blocks into ``folder``; their file names."""
    files: list[str] = []
    for block in _python_blocks(path):
        file = block.title or f"block_at_line_{block.line}.py"
        assert file.endswith(".py"), f"{_name(path)}:{block.line}: title {file!r}"
        assert file not in files, f"{_name(path)}:{block.line}: {file} twice"
        (folder / file).write_text(block.text, encoding="utf-8")
        files.append(file)
    return files


DOCUMENTS_WITH_CODE = [p for p in DOCUMENTS if _python_blocks(p)]


@pytest.mark.parametrize("path", DOCUMENTS_WITH_CODE, ids=_name)
def test_documented_programs_run_and_print_what_the_document_shows(
    path: Path, tmp_path: Path
) -> None:
    files = _write_programs(path, tmp_path)
    commands = [
        run
        for b in code_blocks(path, ROOT)
        if b.language == "console"
        for run in runs(b)
    ]
    for run in commands:
        assert run.file in files, f"{_name(path)}:{run.line}: no block {run.file}"
        proc = _run(tmp_path, run.file, run.args)
        where = f"{_name(path)}:{run.line}: python {run.file}"
        assert proc.returncode == 0, f"{where} failed:\n{proc.stderr}"
        printed = [line.rstrip() for line in proc.stdout.rstrip("\n").split("\n")]
        assert printed == run.expected, f"{where} printed:\n{proc.stdout}"
    for file in files:
        if any(run.file == file for run in commands):
            continue
        proc = _run(tmp_path, file)
        assert proc.returncode == 0, f"{_name(path)}: {file} failed:\n{proc.stderr}"


def test_readme_and_quick_start_each_show_an_agent_driven_by_a_client() -> None:
    for path in (ROOT / "README.md", ROOT / "docs" / "quickstart.md"):
        blocks = {b.title: b.text for b in _python_blocks(path)}
        assert "serve_agent_stdio" in blocks.get("agent.py", ""), _name(path)
        assert '"agent.py"' in blocks.get("client.py", ""), _name(path)
        console = [
            r
            for b in code_blocks(path, ROOT)
            if b.language == "console"
            for r in runs(b)
        ]
        assert [r.file for r in console] == ["client.py"], _name(path)


# What the docs say subclassing a generated Protocol buys: mypy compares each
# handler with the Protocol's signature.
WRONG_HANDLER = """\
import acp_trio
from acp_schema import v1


class Agent(v1.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def session_prompt(self, params: v1.NewSessionRequest) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")
"""


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy --strict over every documented block and WRONG_HANDLER, in one run:
    the error lines of each file."""
    pytest.importorskip("mypy")
    folder = tmp_path_factory.mktemp("mypy")
    files = {"wrong_handler.py": WRONG_HANDLER}
    for number, path in enumerate(DOCUMENTS_WITH_CODE):
        for block in _python_blocks(path):
            # one folder, unique module names: mypy checks them in one run
            name = f"doc{number}_{block.title or f'line{block.line}.py'}"
            files[name] = block.text
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    env = _env()
    env["MYPYPATH"] = env["PYTHONPATH"]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--show-error-codes",
            "--no-pretty",
            "--cache-dir",
            str(folder / ".mypy_cache"),
            *files,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert not proc.stderr, proc.stderr
    report: dict[str, list[str]] = {name: [] for name in files}
    for line in proc.stdout.splitlines():
        if ": error: " in line:
            report[line.split(":", 1)[0]].append(line)
    return report


def test_documented_programs_pass_mypy_strict(
    mypy_report: dict[str, list[str]],
) -> None:
    errors = [
        e
        for name, lines in mypy_report.items()
        if name != "wrong_handler.py"
        for e in lines
    ]
    assert not errors, "\n".join(errors)


def test_a_handler_of_a_protocol_subclass_with_the_wrong_params_type_fails_mypy(
    mypy_report: dict[str, list[str]],
) -> None:
    errors = mypy_report["wrong_handler.py"]
    assert len(errors) == 1, errors
    assert ":9: error: " in errors[0] and errors[0].endswith("[override]"), errors
