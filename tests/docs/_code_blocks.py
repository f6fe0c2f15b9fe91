"""The fenced code blocks of a Markdown file, and the programs they make up.

A document's code blocks follow three rules, which ``test_snippets.py``
enforces:

- a ``python`` block titled ``NAME.py`` (an info string ``python title="NAME.py"``)
  is the file ``NAME.py``; an untitled ``python`` block is a program of its own;
- a ``console`` block's ``$ python NAME.py ARGS...`` lines run those files
  (a ``python`` among the arguments is this interpreter too); the lines up to
  the next ``$`` line are that command's expected output;
- a block's ``--8<-- "PATH"`` line stands for the file PATH of the
  repository (pymdownx.snippets includes it when the site is built);
- every other line of a ``console`` block (``$ python3 -m nox -s docs``, ...)
  is an illustration, not run.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import textwrap
from pathlib import Path

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`\n]*)$")
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')
_RUN = re.compile(r"^python (?P<file>[\w.-]+\.py)(?P<args>(?: .*)?)$")
_INCLUDE = re.compile(r'^--8<-- "(?P<path>[^"]+)"$')


@dataclasses.dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its language, title (or None), text and line number."""

    language: str
    title: str | None
    text: str
    line: int


@dataclasses.dataclass(frozen=True)
class Run:
    """A ``$ python NAME.py`` line of a console block and its expected output."""

    file: str
    args: list[str]
    expected: list[str]
    line: int


def code_blocks(path: Path, root: Path) -> list[CodeBlock]:
    """Every fenced block of ``path``, in order (indented fences included),
    with ``--8<--`` includes read from ``root``."""
    blocks: list[CodeBlock] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None or not opening["info"].strip():
            i += 1
            continue
        info = opening["info"].strip()
        language = info.split()[0]
        title = m["title"] if (m := _TITLE.search(info)) else None
        closing = opening["indent"] + opening["fence"]
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != closing:
            j += 1
        body = textwrap.dedent("\n".join(lines[i + 1 : j]))
        if m := _INCLUDE.match(body.strip()):
            body = (root / m["path"]).read_text(encoding="utf-8").rstrip("\n")
        blocks.append(CodeBlock(language, title, body + "\n", i + 1))
        i = j + 1
    return blocks


def runs(block: CodeBlock) -> list[Run]:
    """The ``$ python NAME.py`` commands of a console block, with their output."""
    found: list[Run] = []
    current: Run | None = None
    for number, line in enumerate(block.text.rstrip("\n").split("\n")):
        if line.startswith("$ "):
            m = _RUN.match(line[2:].strip())
            current = None
            if m:
                args = shlex.split(m["args"])
                current = Run(m["file"], args, [], block.line + 1 + number)
            if current is not None:
                found.append(current)
        elif current is not None:
            current.expected.append(line.rstrip())
    return found
