"""``python -m acp_codegen SPEC_ROOT OUT_DIR``: spec/ -> generated/acp_schema/.

Prints what the new spec added, removed and renamed (types, methods) per
protocol version, compared with what ``OUT_DIR`` held. ``--check`` writes
nothing: it exits 1, with a short ``--stat`` and the first lines of the
diff (committed -> fresh), when ``OUT_DIR`` differs from what the spec
gives.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from .load import load_module
from .nodes import SchemaError
from .render import RUNTIME_PACKAGE, render_package
from .summary import changes, diff_report, snapshot

#: ``v1.py``, ``v2_alpha0.py`` (a draft of its own): not the ``_unstable`` views
_VERSION_MODULE = re.compile(r"v\d+(?:_(?!unstable\.)[a-z0-9]+)?\.py")


def render(spec_root: Path) -> dict[str, str]:
    """File name -> text of the whole package for the spec folders in `spec_root`.

    Each ``vN/`` folder gives module ``vN`` (the types of the unstable schema,
    a superset of the stable one, with both surfaces' method tables) and
    ``vN_unstable`` (the same classes, the unstable tables under the stable
    names).
    """
    modules = {}
    for folder in sorted(spec_root.iterdir()):
        if (folder / "schema.json").is_file():
            modules[folder.name] = load_module(folder)
    return render_package(modules)


def bump_report(old_dir: Path, files: dict[str, str]) -> list[str]:
    """What each version module of ``files`` changed relative to ``old_dir``."""
    lines: list[str] = []
    for name, text in sorted(files.items()):
        old = old_dir / name
        if _VERSION_MODULE.fullmatch(name) and old.is_file():
            found = changes(snapshot(old.read_text()), snapshot(text))
            lines += found.lines(name.removesuffix(".py"))
    return lines


def generate(
    spec_root: Path, out_dir: Path, *, report: Callable[[str], None] | None = None
) -> list[Path]:
    """Render every ``spec_root/vN`` folder into the package at `out_dir`;
    `report` gets the lines of `bump_report` first."""
    files = render(spec_root)
    if report is not None:
        for line in bump_report(out_dir, files):
            report(line)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, source in files.items():
        path = out_dir / name
        path.write_text(source)
        written.append(path)
    runtime = out_dir / RUNTIME_PACKAGE.name
    if not (runtime.exists() and runtime.samefile(RUNTIME_PACKAGE)):
        # a package written elsewhere: the hand-written subpackage as it is here
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.copytree(
            RUNTIME_PACKAGE, runtime, ignore=shutil.ignore_patterns("__pycache__")
        )
        written.append(runtime)
        # what an older generator copied: a single module, which it replaces
        (out_dir / f"{RUNTIME_PACKAGE.name}.py").unlink(missing_ok=True)
    return written


def check(spec_root: Path, out_dir: Path) -> list[str]:
    """The drift of `out_dir` from what `spec_root` gives (empty: none)."""
    fresh = render(spec_root)
    committed = {
        p.name: p.read_text()
        for p in sorted(out_dir.iterdir())
        if p.is_file()
        and p.suffix in (".py", ".typed")
        and p.name != f"{RUNTIME_PACKAGE.name}.py"  # written by hand (older copies)
    }
    return diff_report(committed, fresh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "spec_root", type=Path, help="folder with one vN/ folder per version"
    )
    parser.add_argument(
        "out_dir", type=Path, help="the acp_schema package folder to write"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 with a short diff if out_dir is stale",
    )
    args = parser.parse_args()
    try:
        _run(args)
    except SchemaError as error:
        sys.exit(f"acp_codegen: {error}")


def _run(args: argparse.Namespace) -> None:
    if args.check:
        drift = check(args.spec_root, args.out_dir)
        if drift:
            print("\n".join(drift))
            print(
                f"{args.out_dir} drifted from {args.spec_root}: run `nox -s generate`"
            )
            sys.exit(1)
        print(f"{args.out_dir} matches {args.spec_root} and the generator")
        return
    for path in generate(args.spec_root, args.out_dir, report=print):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
