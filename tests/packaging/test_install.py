"""Packaging: what each install of the built wheel gives, in fresh virtual environments.

- ``pip install acp-msgspec``: the models (``acp_schema``) and the protocol
  engine (``acp_core``) with msgspec alone;
- ``acp-msgspec[trio]``: the trio runtime too;
- ``acp-msgspec`` or ``acp-msgspec[asyncio]``: the asyncio runtime
  (``acp_asyncio``), which needs nothing more, and runs without trio;
- ``acp-msgspec[codegen]``: the generator (``python -m acp_codegen``);
- ``acp-msgspec[testing]``: pytest, and the plugin through its entry point;
and ``pip check`` is clean after each.  Real builds and installs, no mocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _run(
    *args: str | Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def _ok(*args: str | Path) -> str:
    done = _run(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _ok(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, ROOT)
    (built,) = out.glob("acp_msgspec-*.whl")
    return built


def _fresh_env(tmp_path: Path) -> Path:
    venv.create(tmp_path / "env", with_pip=True)
    return tmp_path / "env" / "bin" / "python"


def _install(python: Path, spec: str) -> None:
    _ok(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec)
    _ok(python, "-m", "pip", "check")


def test_the_models_install_with_msgspec_alone(wheel: Path, tmp_path: Path) -> None:
    python = _fresh_env(tmp_path)
    _install(python, str(wheel))
    installed = _ok(python, "-m", "pip", "list", "--format=freeze")
    assert "msgspec==" in installed
    assert "trio==" not in installed
    assert "jinja2" not in installed.lower()
    _ok(
        python,
        "-c",
        "from acp_schema import v1; v1.decode(b'{\"protocolVersion\": 1}', v1.InitializeRequest)",
    )
    _ok(
        python,
        "-c",
        "import sys, acp_core; assert acp_core.Limits().max_batch_members;"
        " assert not {'trio', 'asyncio'} & set(sys.modules), sorted(sys.modules)",
    )
    # the asyncio runtime comes with the base install, without trio
    _ok(
        python,
        "-c",
        "import sys, acp_asyncio; assert 'trio' not in sys.modules, sorted(sys.modules)",
    )
    refused = _run(python, "-c", "import acp_trio")
    assert refused.returncode != 0
    assert "pip install 'acp-msgspec[trio]'" in refused.stderr
    # the inspector's library imports without trio; its command says what to install
    _ok(python, "-c", "import acp_inspect; acp_inspect.Inspector()")
    hint = _run(python, "-m", "acp_inspect", "view", "trace.jsonl")
    assert hint.returncode == 2
    assert hint.stderr == "acp_inspect needs trio: pip install 'acp-msgspec[trio]'\n"


# An asyncio client starts the example asyncio agent over pipes and gets its
# initialize and session/new answers: the adapter runs, not only imports.
_ASYNCIO_ROUND_TRIP = """
import asyncio, sys
import acp_asyncio
from acp_schema import v1

class Client:
    def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
        pass

async def main() -> None:
    agent = [sys.executable, sys.argv[1]]
    async with acp_asyncio.spawn_agent(agent, client=Client) as conn:
        init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        new = await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        print(init.agent_info.name, new.session_id)

asyncio.run(main())
assert "trio" not in sys.modules, "acp_asyncio imported trio"
"""


def test_the_asyncio_extra_gives_a_runtime_that_runs_without_trio(
    wheel: Path, tmp_path: Path
) -> None:
    python = _fresh_env(tmp_path)
    _install(python, f"{wheel}[asyncio]")
    installed = _ok(python, "-m", "pip", "list", "--format=freeze")
    assert "trio==" not in installed
    agent = ROOT / "examples" / "asyncio_echo_agent.py"
    # the installed wheel's packages, not this tree's (PYTHONPATH is dropped)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(python), "-c", _ASYNCIO_ROUND_TRIP, str(agent)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["acp-msgspec-asyncio-echo-agent", "sess_1"]


def test_the_trio_and_client_extras_give_the_runtime_and_the_commands(
    wheel: Path, tmp_path: Path
) -> None:
    python = _fresh_env(tmp_path)
    _install(python, f"{wheel}[trio,client]")
    version = _ok(python, "-c", "import acp_trio; print(acp_trio.__version__)")
    assert (
        version.strip()
        == _ok(
            python,
            "-c",
            "import importlib.metadata as m; print(m.version('acp-msgspec'))",
        ).strip()
    )
    # the console scripts: acp-client runs a turn of acp-echo-agent
    bin_dir = python.parent
    # the installed wheel's packages, not this tree's (PYTHONPATH is dropped)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [
            bin_dir / "acp-client",
            "--yes",
            "--prompt",
            "hello",
            "--",
            bin_dir / "acp-echo-agent",
            "--chunk-delay",
            "0",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # no terminal: --yes answers
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agent: acp-msgspec-echo-agent" in done.stdout
    assert done.stdout.splitlines()[-1] == "stop reason: end_turn"


_USES_THE_PLUGIN = """
import acp_core
from acp_pytest import FakeAgent, FakeClient, assert_transcript, prompt, start_session

async def test_a_turn(acp_in_memory):
    client = FakeClient()
    agent = FakeAgent([acp_core.agent_text("hi", message_id="m1")])
    conn = await acp_in_memory.connect(agent, client)
    assert await prompt(conn, await start_session(conn), "go") == "end_turn"
    assert_transcript(client.transcript(), "agent: hi")
"""


def test_the_testing_extra_gives_the_pytest_plugin_through_its_entry_point(
    wheel: Path, tmp_path: Path
) -> None:
    python = _fresh_env(tmp_path)
    _install(python, f"{wheel}[testing]")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_uses_it.py").write_text(_USES_THE_PLUGIN)
    # the installed wheel's packages, not this tree's (PYTHONPATH is dropped)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    done = subprocess.run(
        [str(python), "-m", "pytest", "-v", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tests,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_a_turn[trio] PASSED" in done.stdout
    assert "test_a_turn[asyncio] PASSED" in done.stdout


def test_the_codegen_extra_gives_a_working_generator(
    wheel: Path, tmp_path: Path
) -> None:
    python = _fresh_env(tmp_path)
    _install(python, f"{wheel}[codegen]")
    out = tmp_path / "acp_schema"
    _ok(python, "-m", "acp_codegen", ROOT / "spec", out)
    assert (out / "v1.py").read_text() == (
        ROOT / "generated" / "acp_schema" / "v1.py"
    ).read_text()


def test_the_license_ships_in_the_wheel(wheel: Path) -> None:
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith("licenses/LICENSE") for n in names), names
    assert "Apache License" in (ROOT / "LICENSE").read_text()


def test_version_is_the_distributions(wheel: Path) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" in declared["dynamic"]
    assert wheel.name.startswith("acp_msgspec-")
    version = wheel.name.split("-")[1]
    namespace: dict[str, str] = {}
    exec((ROOT / "runtime" / "acp_core" / "_version.py").read_text(), namespace)
    assert namespace["__version__"] == version
