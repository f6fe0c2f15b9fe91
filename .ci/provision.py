"""Install the system programs the tests need (as root on Debian), or say in one line
what is missing.

``.ci/run`` and ``nox -s tests`` both run it before the tests. Stdlib only: it runs
before any virtualenv exists. Add a program the tests need to ``NEEDS`` (one row:
the file the tests run, the Debian package that provides it, who needs it).

    python3 .ci/provision.py          # install what is missing (root + apt-get), else exit 1
    python3 .ci/provision.py --check  # only say what is missing
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys


@dataclasses.dataclass(frozen=True)
class Need:
    """A program the tests run: its path, the Debian package, and why."""

    path: str
    debian: str
    why: str


#: What the tests need beyond Python packages (those come from pyproject's extras).
NEEDS: tuple[Need, ...] = (
    Need(
        path="/usr/bin/chromium",
        debian="chromium",
        why="tests/inspect renders the HTML report in a headless browser",
    ),
    Need(
        path="/usr/sbin/nginx",
        debian="nginx",
        why="tests/http/test_nginx.py balances two ACP HTTP workers with cookie affinity",
    ),
)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to do: the Debian packages to install, or the one line saying what is
    missing and why it cannot be installed here (``None`` when nothing is)."""

    install: tuple[str, ...]
    missing: str | None


def plan(needs: tuple[Need, ...], *, present: set[str], root: bool, apt: bool) -> Plan:
    """The rule, without touching the machine: install the missing packages when
    root with apt-get, else one line naming them."""
    absent = [need for need in needs if need.path not in present]
    if not absent:
        return Plan(install=(), missing=None)
    packages = tuple(dict.fromkeys(need.debian for need in absent))
    if root and apt:
        return Plan(install=packages, missing=None)
    why = "; ".join(f"{need.path}: {need.why}" for need in absent)
    how = "run as root on Debian" if apt else "no apt-get here: install them yourself"
    return Plan(
        install=(),
        missing=(
            f"missing for the tests: {', '.join(packages)} ({why}); "
            f"`apt-get install {' '.join(packages)}` ({how})"
        ),
    )


def _present(needs: tuple[Need, ...]) -> set[str]:
    return {need.path for need in needs if os.access(need.path, os.X_OK)}


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    apt = shutil.which("apt-get") is not None
    todo = plan(NEEDS, present=_present(NEEDS), root=root and not check_only, apt=apt)
    if todo.missing is not None:
        print(todo.missing, file=sys.stderr)
        return 1
    if todo.install:
        print(f"provision: apt-get install {' '.join(todo.install)}", file=sys.stderr)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", *todo.install],
        ):
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["?"])[-1][:200]
                print(f"provision: {' '.join(command)} failed: {tail}", file=sys.stderr)
                return 1
        left = plan(NEEDS, present=_present(NEEDS), root=False, apt=apt)
        if left.missing is not None:
            print(left.missing, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
