"""``python -m acp_codegen SPEC_ROOT OUT_DIR``: spec/ -> generated/acp_schema/."""

from __future__ import annotations

import argparse
from pathlib import Path

from .parse import load_module
from .render import render_package


def generate(spec_root: Path, out_dir: Path) -> list[Path]:
    """Render every ``spec_root/vN`` folder into the package at `out_dir`.

    Each ``vN/`` folder gives module ``vN`` (the types of the unstable schema,
    a superset of the stable one, with both surfaces' method tables) and
    ``vN_unstable`` (the same classes, the unstable tables under the stable
    names).
    """
    modules = {}
    for folder in sorted(spec_root.iterdir()):
        if (folder / "schema.json").is_file():
            modules[folder.name] = load_module(folder)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, source in render_package(modules).items():
        path = out_dir / name
        path.write_text(source)
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "spec_root", type=Path, help="folder with one vN/ folder per version"
    )
    parser.add_argument(
        "out_dir", type=Path, help="the acp_schema package folder to write"
    )
    args = parser.parse_args()
    for path in generate(args.spec_root, args.out_dir):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
