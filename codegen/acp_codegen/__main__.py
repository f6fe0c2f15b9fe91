"""``python -m acp_codegen SPEC_ROOT OUT_DIR``: spec/ -> generated/acp_schema/."""

from __future__ import annotations

import argparse
from pathlib import Path

from .parse import load_module
from .render import render_package


def generate(spec_root: Path, out_dir: Path) -> list[Path]:
    """Render every ``spec_root/vN`` folder into the package at `out_dir`.

    ``vN/schema.json`` gives module ``vN``; ``vN/schema.unstable.json``, when
    present, gives ``vN_unstable``.
    """
    modules = {}
    for folder in sorted(spec_root.iterdir()):
        if (folder / "schema.json").is_file():
            modules[folder.name] = load_module(folder)
        if (folder / "schema.unstable.json").is_file():
            modules[f"{folder.name}_unstable"] = load_module(folder, unstable=True)
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
