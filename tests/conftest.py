"""The whole suite runs with plain ``pytest`` from the project root.

The project is not installed for its tests: ``pyproject.toml``'s pytest
``pythonpath`` puts ``generated/``, ``runtime/`` and ``codegen/`` on this
process's path, and ``PYTHONPATH`` is set here so that the processes the
tests start (agents, clients, the generator) import the same tree.

No test depends on the machine's speed: hypothesis runs under the ``acp`` profile
(no per-example deadline, no "too slow" health check, both wall-clock rules that
fail on a loaded machine).  Connections check what they send against the schema
(``ACP_CHECK_OUTGOING=1``, inherited by the programs the tests start).

The pytest plugin of ``acp_pytest`` is loaded from this tree by
``pytest_plugins`` (installed, its ``pytest11`` entry point has the same name:
one plugin either way).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

#: hypothesis without wall-clock rules; loaded for the whole suite.
settings.register_profile(
    "acp", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("acp")

#: acp_pytest's fixtures (acp_in_memory, acp_spawn), without installing the project;
#: pytester runs the tests of that plugin (tests/pytest_plugin); _skips fails a
#: skipped case.
pytest_plugins = ["acp_pytest.plugin", "pytester", "_skips"]

ROOT = Path(__file__).resolve().parents[1]
PATHS = [str(ROOT / part) for part in ("generated", "runtime", "codegen")]

# Every typed message a connection sends is checked against the schema
# (acp_core._outgoing), in this process and the ones the tests start.
os.environ.setdefault("ACP_CHECK_OUTGOING", "1")

_inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*PATHS, *_inherited]))
