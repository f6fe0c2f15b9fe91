"""Project tasks: `nox -s demo`, `generate`, `bump`, `check`, `tests`, `docs`, `lint`,
`typecheck`, `bench`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
SPEC = ROOT / "spec"
GENERATED = ROOT / "generated" / "acp_schema"
CODEGEN_ENV = {"PYTHONPATH": str(ROOT / "codegen")}
CODEGEN_DEPS = ["jinja2>=3.1", "msgspec>=0.19"]
#: Examples checked by mypy --strict and pyright's strict mode.
TYPED_EXAMPLES = [
    "examples/simple_agent.py",
    "examples/simple_client.py",
    "examples/asyncio_echo_agent.py",
    "examples/testing_in_memory.py",
]


def _generate(session: nox.Session, out: Path) -> None:
    session.run("python", "-m", "acp_codegen", str(SPEC), str(out), env=CODEGEN_ENV)


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/acp_schema from spec/ (run after a spec bump)."""
    session.install(*CODEGEN_DEPS)
    _generate(session, GENERATED)


@nox.session
def bump(session: nox.Session) -> None:
    """Spec bump from a published package: ``nox -s bump -- 2.4.0`` (npm pack
    ``@agentclientprotocol/sdk@2.4.0``) or ``nox -s bump -- --from DIR`` (an
    unpacked package): spec/ and generated/ updated, the summary printed
    (docs/spec-bump.md). Offline or a bad version: one line, spec/ unchanged."""
    session.install(*CODEGEN_DEPS)
    session.run("python", "-m", "acp_codegen.bump", *session.posargs, env=CODEGEN_ENV)


def _drift(session: nox.Session) -> None:
    """Fail, with a short ``--stat`` and the first lines of the diff (committed
    -> fresh), when generated/ is not what spec/ and the generator give."""
    session.run(
        "python",
        "-m",
        "acp_codegen",
        "--check",
        str(SPEC),
        str(GENERATED),
        env=CODEGEN_ENV,
    )


@nox.session
def check(session: nox.Session) -> None:
    """Drift check: regenerate into a temp dir; fail with a diff if generated/ differs."""
    session.install(*CODEGEN_DEPS)
    _drift(session)


def _provision(session: nox.Session) -> None:
    """The system programs the tests need (.ci/provision.py's table): installed when
    root on Debian, else the session stops with one line saying what is missing."""
    spec = importlib.util.spec_from_file_location(
        "provision", ROOT / ".ci" / "provision.py"
    )
    assert spec is not None and spec.loader is not None
    provision = importlib.util.module_from_spec(spec)
    sys.modules["provision"] = provision  # dataclasses look their module up
    spec.loader.exec_module(provision)
    if provision.main([]) != 0:
        session.error(
            "system programs missing for the tests (the line above says which)"
        )


@nox.session
def tests(session: nox.Session) -> None:
    """Install what the tests need (.ci/provision.py), the drift check, then the whole
    test suite, one worker per core (pytest-xdist; ``nox -s tests -- -n 0 -k name``
    for one test in-process)."""
    _provision(session)
    session.install("-e", ".[test]", "ruff")
    _drift(session)
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (mkdocs.yml, docs/) into build/site, warnings as errors.

    The API reference is read from the sources of generated/ and runtime/
    (griffe, no import, no network).
    """
    session.install("-e", ".[docs]")
    # Material's banner about MkDocs 2.0 is advice, not a build warning.
    env = {"NO_MKDOCS_2_WARNING": "1"}
    session.run("mkdocs", "build", "--strict", *session.posargs, env=env)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict and pyright's strict mode ([tool.pyright]) on generated/,
    runtime/ and examples/; mypy --strict on codegen/."""
    # pyright[nodejs]: Node.js from a wheel, not downloaded when first run
    session.install("-e", ".[test]", "mypy", "pyright[nodejs]", *CODEGEN_DEPS)
    session.run(
        "mypy",
        "--strict",
        "generated/acp_schema",
        "runtime/acp_core",
        "runtime/acp_host",
        "runtime/acp_trio",
        "runtime/acp_inspect",
        "runtime/acp_asyncio",
        "runtime/acp_http",
        "runtime/acp_conductor",
        "runtime/acp_mcp",
        "runtime/acp_client",
        "runtime/acp_echo",
        "runtime/acp_pytest",
    )
    session.run("mypy", "--strict", "examples", env={"MYPYPATH": "generated:runtime"})
    session.run("pyright")
    session.run("mypy", "--strict", "codegen/acp_codegen", env=CODEGEN_ENV)


@nox.session
def bench(session: nox.Session) -> None:
    """Codec and two-process runtime benchmarks vs the official SDK and untyped
    msgspec (prints ratios), the engine alone, the latency acp_inspect's proxy
    adds beside a direct connection, and ACP over HTTP (acp_http) against stdio and
    the official SDK's HTTP transport (bench/report.py runs them in turn).
    ``nox -s bench -- --quick`` for a short run; ``-- --write docs/benchmarks.md``
    writes the documentation's page (date, machine, versions, the tables)."""
    session.install("-e", ".[bench]")
    session.run("python", "bench/report.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: regenerate from spec/, then one prompt turn of ``acp-client``
    (runtime/acp_client) against the reference echo agent (runtime/acp_echo),
    printing the transcript as it streams.

    `nox -s demo -- "your prompt"` sends your own prompt.
    """
    session.install("-e", ".[trio]")
    session.install(*CODEGEN_DEPS)
    _generate(session, GENERATED)
    prompt = " ".join(session.posargs) or "Hello, agent! Please echo this back."
    session.run(
        "python",
        "-m",
        "acp_client",
        "--yes",
        "--prompt",
        prompt,
        "--",
        "python",
        "-m",
        "acp_echo",
    )
