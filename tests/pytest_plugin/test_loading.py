"""How the plugin is loaded: by its ``pytest11`` entry point once installed, by
``pytest_plugins`` from this tree, one plugin either way; and loading it costs a
project that does not use it nothing (no event loop, no protocol module imported)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "acp_pytest.plugin"
TIMEOUT = 120


def pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def entry_points() -> dict[str, str]:
    project = pyproject()["project"]
    assert isinstance(project, dict)
    found: dict[str, str] = project["entry-points"]["pytest11"]
    return found


def test_the_entry_point_is_named_after_the_module_the_source_tree_loads() -> None:
    # the same name both ways: pytest registers one plugin, never the module twice
    assert entry_points() == {PLUGIN: PLUGIN}
    conftest = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    assert f'pytest_plugins = ["{PLUGIN}"' in conftest


def test_the_testing_extra_brings_pytest_and_the_wheel_holds_the_package() -> None:
    data = pyproject()
    project = data["project"]
    assert isinstance(project, dict)
    extra: list[str] = project["optional-dependencies"]["testing"]
    assert {r.split(">")[0] for r in extra} >= {"pytest", "trio"}
    wheel: list[str] = data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]  # type: ignore[index]
    assert "runtime/acp_pytest" in wheel


USES_THE_FIXTURE = """
from acp_pytest import FakeAgent, FakeClient, prompt, start_session

async def test_through_the_entry_point(acp_in_memory):
    conn = await acp_in_memory.connect(FakeAgent(), FakeClient())
    assert await prompt(conn, await start_session(conn), "go") == "end_turn"
"""


def _installed_metadata(into: Path) -> None:
    """What ``pip install`` writes for this project's entry points: a
    ``.dist-info`` with ``entry_points.txt`` made from pyproject.toml."""
    info = into / "acp_msgspec_plugin_check-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acp-msgspec-plugin-check\nVersion: 0\n"
    )
    lines = ["[pytest11]", *(f"{k} = {v}" for k, v in entry_points().items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def _pytest(folder: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    return f"{done.returncode}\n{done.stdout}{done.stderr}"


def _installed_project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder of tests using the fixture, and an environment where the
    project's entry point is installed (and acp_* importable)."""
    site = tmp_path / "site"
    site.mkdir()
    _installed_metadata(site)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_uses_it.py").write_text(USES_THE_FIXTURE)
    env = dict(os.environ)
    paths = [str(site), *(str(ROOT / p) for p in ("generated", "runtime"))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    return tests, env


def test_an_installed_project_loads_the_plugin_through_its_entry_point(
    tmp_path: Path,
) -> None:
    tests, env = _installed_project(tmp_path)
    out = _pytest(tests, env)
    assert out.startswith("0\n") and "2 passed" in out, out
    # without loading entry points, the fixture is unknown: an entry point did
    # it (this metadata's, or an installed acp-msgspec's, made from the same
    # pyproject.toml: nox's environment has one)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    out = _pytest(tests, env)
    assert "fixture 'acp_in_memory' not found" in out, out


def test_naming_the_plugin_beside_its_entry_point_registers_it_once(
    tmp_path: Path,
) -> None:
    # -p, as pytest_plugins, with the same name: not "Plugin already registered"
    tests, env = _installed_project(tmp_path)
    out = _pytest(tests, env, "-p", PLUGIN)
    assert out.startswith("0\n") and "2 passed" in out, out


def test_loading_the_plugin_imports_no_event_loop_and_no_protocol_module() -> None:
    # pytest loads it in every run of a project that has acp-msgspec installed
    unused = "{'trio', 'asyncio', 'acp_trio', 'acp_asyncio', 'acp_core', 'acp_schema'}"
    code = (
        "import sys, acp_pytest.plugin;"
        f" loaded = {unused} & set(sys.modules);"
        " assert not loaded, loaded"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
