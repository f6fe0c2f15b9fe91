"""The pytest plugin: fixtures, the backends' parameters, the runner of acp tests.

Loaded by the ``pytest11`` entry point ``acp_pytest.plugin`` once
acp-msgspec is installed (``pip install "acp-msgspec[testing]"`` brings
pytest and trio with it), or by ``-p acp_pytest.plugin`` /
``pytest_plugins = ["acp_pytest.plugin"]``.  It touches only the tests that
take its fixtures: importing it imports neither trio nor asyncio.

- ``acp_backend``: the event loop of the test (:class:`~acp_pytest.Backend`),
  a parameter: every test taking it (or a fixture below) runs once per name
  of the closest ``@pytest.mark.acp_backends("trio", "asyncio")`` marker,
  else of the ini option ``acp_backends`` (default both);
- ``acp_in_memory`` (:class:`~acp_pytest.InMemory`): an agent and a client
  joined in this process;
- ``acp_spawn`` (:class:`~acp_pytest.Spawn`): an agent command started,
  its stderr shown when the test fails.

Those tests are ``async def`` and the plugin runs them itself (before
pytest-trio or anyio would), on the backend's loop, bounded by the ini
option ``acp_timeout`` (seconds, default 60, teardown included).  When the
test's body ends, the connections it opened are closed in its loop; then
each :class:`~acp_pytest.FakeClient` given is checked for problems (script
answers it could not give): the test fails with them.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ._runner import (
    BACKENDS,
    DEFAULT_TIMEOUT,
    Backend,
    BackendName,
    TestScope,
    run_test,
)

__all__ = [
    "acp_backend",
    "acp_in_memory",
    "acp_spawn",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_itemcollected",
    "pytest_pyfunc_call",
    "pytest_runtest_makereport",
]

if TYPE_CHECKING:
    from ._fixtures import InMemory, Spawn

_SCOPE = pytest.StashKey[TestScope]()
_TEST = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "acp_backends",
        "event loops the acp fixtures' tests run on (default: trio asyncio)",
        type="args",
        default=list(BACKENDS),
    )
    parser.addini(
        "acp_timeout",
        f"seconds an acp test may take, teardown included (default {DEFAULT_TIMEOUT:g})",
        default=str(DEFAULT_TIMEOUT),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "acp_backends(*names): the event loops (trio, asyncio) this test runs on "
        "with the acp fixtures (default: the ini option acp_backends)",
    )


def _backend(name: object, where: str) -> BackendName:
    for known in BACKENDS:
        if name == known:
            return known
    raise pytest.UsageError(
        f"{where}: {name!r} is not an acp backend (one of: {', '.join(BACKENDS)})"
    )


def _backends(names: list[object], where: str) -> list[BackendName]:
    return [_backend(name, where) for name in names]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "acp_backend" not in metafunc.fixturenames:
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        if "acp_backend" in str(marker.args[0] if marker.args else ""):
            return  # the test chose its own
    chosen = metafunc.definition.get_closest_marker("acp_backends")
    if chosen is not None:
        names = _backends(
            list(chosen.args), f"{metafunc.definition.nodeid}: acp_backends"
        )
    else:
        names = _backends(metafunc.config.getini("acp_backends"), "ini acp_backends")
    metafunc.parametrize("acp_backend", names, indirect=True, ids=names)


@pytest.fixture
def acp_backend(request: pytest.FixtureRequest) -> Backend:
    """The event loop this test runs on (a parameter: see the plugin)."""
    name = _backend(getattr(request, "param", BACKENDS[0]), "acp_backend")
    if name == "trio":
        pytest.importorskip(
            "trio", reason="the trio backend needs trio (acp-msgspec[trio])"
        )
    return Backend(name)


def _scope_of(node: pytest.Item, backend: Backend) -> TestScope:
    """The test's scope (made once, by whichever of its fixtures or the runner asks)."""
    scope = node.stash.get(_SCOPE, None)
    if scope is None:
        timeout = float(node.config.getini("acp_timeout"))
        scope = node.stash[_SCOPE] = TestScope(backend, timeout)
    return scope


@pytest.fixture
def _acp_scope(request: pytest.FixtureRequest, acp_backend: Backend) -> TestScope:
    node = request.node
    assert isinstance(node, pytest.Item)
    return _scope_of(node, acp_backend)


@pytest.fixture
def acp_in_memory(_acp_scope: TestScope) -> InMemory:
    """An agent and a client joined in this process: ``await acp_in_memory.connect(agent, client)``."""
    from ._fixtures import InMemory

    return InMemory(_acp_scope)


@pytest.fixture
def acp_spawn(_acp_scope: TestScope) -> Spawn:
    """An agent command started: ``await acp_spawn.start(command, client)``."""
    from ._fixtures import Spawn

    return Spawn(_acp_scope)


def pytest_itemcollected(item: pytest.Item) -> None:
    # the test function itself, kept before another plugin (pytest-trio)
    # wraps it in a runner of its own
    if isinstance(item, pytest.Function) and "acp_backend" in item.fixturenames:
        item.stash[_TEST] = item.obj


def _problems(scope: TestScope) -> list[str]:
    from ._fake_client import FakeClient

    found: list[str] = []
    for offered in scope.offered:
        if isinstance(offered, FakeClient):
            found += offered.problems
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    test = pyfuncitem.stash.get(_TEST, None)
    backend = pyfuncitem.funcargs.get("acp_backend")
    if not isinstance(backend, Backend) or not inspect.iscoroutinefunction(test):
        return None
    __tracebackhide__ = True
    scope = _scope_of(pyfuncitem, backend)
    names = inspect.signature(test).parameters
    kwargs = {
        name: pyfuncitem.funcargs[name] for name in names if name in pyfuncitem.funcargs
    }
    run_test(scope, test, kwargs)
    problems = _problems(scope)
    if problems:
        raise AssertionError(
            "the fake client could not answer as scripted:\n  " + "\n  ".join(problems)
        )
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    scope = item.stash.get(_SCOPE, None)
    if scope is not None and report.when == "call" and report.failed:
        for section in scope.sections:
            shown = section()
            if shown is not None:
                report.sections.append(shown)
    return report
