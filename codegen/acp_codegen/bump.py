"""``python -m acp_codegen.bump VERSION``: spec/ from a published npm package.

Fetches ``@agentclientprotocol/sdk@VERSION`` with ``npm pack`` (or reads an
unpacked package: ``--from DIR``), takes from it, per protocol version ``vN``:

- ``schema/vN/schema.json`` and ``schema/vN/schema.unstable.json``;
- the method tables ``AGENT_METHODS``, ``CLIENT_METHODS``, ``PROTOCOL_METHODS``
  (and ``PROXY_METHODS`` where present) and ``PROTOCOL_VERSION`` of
  ``dist/vN/schema/index.js`` (-> ``meta.json``) and
  ``dist/vN/unstable/schema/index.js`` (-> ``meta.unstable.json``);

writes them with an ``UPSTREAM.json`` (package, version, files, and the
schema version where the package states one) into a fresh copy of the spec
root, regenerates the package from that copy, and only then replaces
``spec/vN`` and the generated modules: offline, a bad version or a schema
the generator cannot read leaves ``spec/`` and the package unchanged, with
one line on stderr. Spec folders the package does not ship (a draft kept on
purpose, ``spec/v2_alpha0``) are left alone.

Prints the bump summary (`summary.changes`: types, variants, methods and
fields added, removed and changed) and every line of the given trees
(``runtime/``, ``examples/``, ``docs/``) that names something removed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from .__main__ import generate, render
from .nodes import SchemaError
from .summary import Changes, changes, snapshot

PACKAGE = "@agentclientprotocol/sdk"
#: JS constant -> meta.json key
_TABLES = {
    "AGENT_METHODS": "agentMethods",
    "CLIENT_METHODS": "clientMethods",
    "PROTOCOL_METHODS": "protocolMethods",
    "PROXY_METHODS": "proxyMethods",
}
_CONST = re.compile(r"export const (\w+) = (\{.*?\}|\d+);", re.S)
_ENTRY = re.compile(r"^\s*(\w+):\s*\"([^\"]+)\",?\s*$", re.M)
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")
#: how many lines naming removed things the summary prints at most
MAX_PLACES = 200
#: bound on the text quoted from npm's stderr
MAX_NPM_ERROR = 300


class BumpError(Exception):
    """The bump cannot go ahead; its message is the one line a user sees."""


def method_tables(index_js: str) -> dict[str, object]:
    """``meta.json`` content from a generated ``index.js`` of the SDK."""
    meta: dict[str, object] = {}
    for name, body in _CONST.findall(index_js):
        if name == "PROTOCOL_VERSION":
            meta["version"] = int(body)
        elif name in _TABLES:
            meta[_TABLES[name]] = dict(_ENTRY.findall(body))
    if "version" not in meta or "agentMethods" not in meta:
        raise BumpError("no PROTOCOL_VERSION / AGENT_METHODS in the method tables")
    return {"version": meta.pop("version"), **meta}


def _json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n")


def extract(package: Path, spec_root: Path) -> list[str]:
    """Write ``spec_root/vN`` for every ``schema/vN`` of the unpacked
    `package`; the folder names written."""
    manifest = json.loads((package / "package.json").read_text())
    schemas = package / "schema"
    if not schemas.is_dir():
        raise BumpError(f"{package}: no schema/ folder (not an ACP SDK package?)")
    written = []
    for folder in sorted(schemas.iterdir()):
        if not re.fullmatch(r"v\d+", folder.name) or not folder.is_dir():
            continue
        out = spec_root / folder.name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        files = {}
        for name in ("schema.json", "schema.unstable.json"):
            source = folder / name
            if source.is_file():
                shutil.copyfile(source, out / name)
                files[name] = f"schema/{folder.name}/{name}"
        for meta_name, js in (
            ("meta.json", f"dist/{folder.name}/schema/index.js"),
            ("meta.unstable.json", f"dist/{folder.name}/unstable/schema/index.js"),
        ):
            source = package / js
            if source.is_file():
                _json(out / meta_name, method_tables(source.read_text()))
                files[meta_name] = js
        if "schema.json" not in files or "meta.json" not in files:
            raise BumpError(f"{package}: {folder.name} lacks schema.json or its tables")
        version = json.loads((out / "meta.json").read_text())["version"]
        upstream: dict[str, object] = {
            "package": manifest.get("name", PACKAGE),
            "version": manifest["version"],
            "files": files,
            "schema_version": _stated_schema_version(out),
            "role": f"protocol version {version}",
        }
        _json(out / "UPSTREAM.json", upstream)
        written.append(folder.name)
    if not written:
        raise BumpError(f"{package}: no schema/vN folder")
    return written


def _stated_schema_version(folder: Path) -> str | None:
    """The schema version, where the schema states one (a top-level
    ``version`` or ``x-version``); the 2.x packages state none."""
    for name in ("schema.json",):
        data = json.loads((folder / name).read_text())
        for key in ("version", "x-version", "x-schema-version"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return None


def npm_pack(version: str, into: Path) -> Path:
    """``npm pack PACKAGE@version`` unpacked under `into`; the package folder."""
    if not _VERSION.fullmatch(version):
        raise BumpError(f"not a version: {version!r} (want e.g. 2.4.0)")
    npm = shutil.which("npm")
    if npm is None:
        raise BumpError("npm not found: install Node.js, or pass --from DIR")
    try:
        done = subprocess.run(
            [npm, "pack", f"{PACKAGE}@{version}", "--pack-destination", str(into)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=into,
        )
    except subprocess.TimeoutExpired:
        raise BumpError(f"npm pack {PACKAGE}@{version}: timed out (offline?)") from None
    if done.returncode != 0:
        reason = _npm_reason(done.stderr)
        raise BumpError(f"npm pack {PACKAGE}@{version} failed: {reason}")
    tarballs = sorted(into.glob("*.tgz"))
    if not tarballs:
        raise BumpError(f"npm pack {PACKAGE}@{version}: no tarball written")
    with tarfile.open(tarballs[0]) as tar:
        tar.extractall(into, filter="data")
    return into / "package"


def _npm_reason(stderr: str) -> str:
    """The telling line of npm's error output, bounded."""
    lines = [ln.removeprefix("npm error").strip() for ln in stderr.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("A complete log")]
    for line in lines:
        if re.search(r"E404|ETARGET|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|code E", line):
            return line[:MAX_NPM_ERROR]
    return (lines[0] if lines else "no output")[:MAX_NPM_ERROR]


@dataclasses.dataclass
class Place:
    """One line of the repository naming something the bump removed."""

    path: str
    line: int
    name: str
    text: str
    #: modules that lost the name; where it is named unqualified, also those
    #: that still have it (a v2 type named alone may be v1's)
    gone_from: tuple[str, ...]
    kept_in: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"gone from {', '.join(self.gone_from)}"
        if self.kept_in:
            where += f"; still in {', '.join(self.kept_in)}"
        return f"{self.path}:{self.line}: {self.name} ({where}): {self.text[:120]}"


def places(
    gone: dict[str, set[str]],
    kept: dict[str, set[str]],
    trees: Sequence[Path],
    root: Path,
) -> list[Place]:
    """Every line of the files under `trees` naming a removed type or method.

    `gone`: name (a type, or a method's wire name) -> the modules that lost
    it; `kept`: name -> the modules that still have it. A type named with its
    module (``v2.LoadSessionRequest``) is a place only where that module lost
    it; named alone, or a wire name quoted (``"session/load"``, in backticks
    too), it is a place marked with the modules that still have it.
    """
    if not gone:
        return []
    words = sorted(n for n in gone if "/" not in n)
    wires = sorted(n for n in gone if "/" in n)
    alternatives = [rf"(?:\b(v\d+\w*)\.)?\b({'|'.join(map(re.escape, words))})\b"]
    if not words:
        alternatives = []
    if wires:
        quoted = "|".join(map(re.escape, wires))
        alternatives.append(rf"(?<=[\"'`])()({quoted})(?=[\"'`])")
    pattern = re.compile("|".join(alternatives))
    found: list[Place] = []
    for tree in trees:
        paths = [tree] if tree.is_file() else sorted(tree.rglob("*"))
        for path in paths:
            if path.suffix not in (".py", ".md", ".html", ".js") or not path.is_file():
                continue
            rel = path.relative_to(root) if path.is_relative_to(root) else path
            for number, text in enumerate(path.read_text().splitlines(), 1):
                place = _place_in(pattern, text, gone, kept)
                if place is not None:
                    found.append(Place(str(rel), number, *place))
    return found


def _place_in(
    pattern: re.Pattern[str],
    text: str,
    gone: dict[str, set[str]],
    kept: dict[str, set[str]],
) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    for match in pattern.finditer(text):
        groups = [g for g in match.groups() if g is not None]
        module = groups[0].removesuffix("_unstable") if len(groups) == 2 else ""
        name = groups[-1]
        lost = tuple(sorted(gone[name]))
        if module:
            if module in gone[name]:
                return f"{module}.{name}", text.strip(), (module,), ()
            continue
        return name, text.strip(), lost, tuple(sorted(kept.get(name, ())))
    return None


def summarize(
    old_package: Path, files: dict[str, str], modules: Iterable[str]
) -> dict[str, Changes]:
    """Per bumped module, what changed from the package at `old_package`."""
    found = {}
    for name in modules:
        old = old_package / f"{name}.py"
        before = snapshot(old.read_text()) if old.is_file() else snapshot("")
        found[name] = changes(before, snapshot(files[f"{name}.py"]))
    return found


def bump(
    spec_root: Path,
    out_dir: Path,
    *,
    version: str | None = None,
    package: Path | None = None,
    trees: Sequence[Path] = (),
    root: Path | None = None,
    print_line: object = print,
) -> dict[str, Changes]:
    """Replace ``spec_root/vN`` with what the package ships and regenerate
    `out_dir`; print the summary. Raises `BumpError` with `spec_root` and
    `out_dir` untouched when anything fails before the swap."""
    emit = print_line if callable(print_line) else print
    with tempfile.TemporaryDirectory(prefix="acp-bump-") as tmp:
        work = Path(tmp)
        if package is None:
            assert version is not None
            (work / "npm").mkdir()
            package = npm_pack(version, work / "npm")
        elif not (package / "package.json").is_file():
            raise BumpError(f"--from {package}: no package.json (unpack the .tgz)")
        staged = work / "spec"
        shutil.copytree(spec_root, staged)
        bumped = extract(package, staged)
        try:
            files = render(staged)
        except SchemaError as error:
            raise BumpError(
                f"the generator cannot read the new schemas: {error}"
            ) from None
        except (OSError, ValueError, KeyError) as error:
            raise BumpError(f"the new spec folders are unreadable: {error}") from None
        found = summarize(out_dir, files, bumped)
        for folder in bumped:  # the swap: nothing above touched spec_root
            target = spec_root / folder
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(staged / folder, target)
        generate(spec_root, out_dir)
    gone: dict[str, set[str]] = {}
    for name, change in found.items():
        for line in change.lines(name):
            emit(line)
        for removed in change.types_removed + change.methods_removed:
            gone.setdefault(removed, set()).add(name)
    kept = _names_by_module(out_dir)
    hits = places(gone, kept, trees, root or spec_root.parent)
    if hits:
        emit(f"places naming something removed ({len(hits)}):")
        for hit in hits[:MAX_PLACES]:
            emit(f"  {hit}")
        if len(hits) > MAX_PLACES:
            emit(f"  ... ({len(hits) - MAX_PLACES} more)")
    elif gone:
        emit("nothing in the given trees names what was removed")
    return found


def _names_by_module(package: Path) -> dict[str, set[str]]:
    """Type and method wire name -> the version modules of `package` having it."""
    names: dict[str, set[str]] = {}
    for path in sorted(package.glob("v*.py")):
        if path.stem.endswith("_unstable"):
            continue
        snap = snapshot(path.read_text())
        for name in [*snap.types, *(wire for _table, wire in snap.methods)]:
            names.setdefault(name, set()).add(path.stem)
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("version", nargs="?", help="the npm version, e.g. 2.4.0")
    parser.add_argument(
        "--from", dest="source", type=Path, help="an unpacked package instead of npm"
    )
    parser.add_argument("--spec", type=Path, default=Path("spec"))
    parser.add_argument("--out", type=Path, default=Path("generated/acp_schema"))
    parser.add_argument(
        "--scan",
        type=Path,
        action="append",
        help="a tree to search for removed names (repeatable; default: "
        "runtime, examples, docs)",
    )
    args = parser.parse_args(argv)
    if args.version is None and args.source is None:
        parser.error("give a VERSION or --from DIR")
    scan = args.scan or [Path("runtime"), Path("examples"), Path("docs")]
    try:
        bump(
            args.spec,
            args.out,
            version=args.version,
            package=args.source,
            trees=[p for p in scan if p.exists()],
            root=Path.cwd(),
        )
    except BumpError as error:
        print(f"acp_codegen.bump: {error}; spec/ unchanged", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
