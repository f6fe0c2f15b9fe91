"""One framer: every reader of a peer's bytes in the runtime splits them into
lines with ``acp_core.LineBuffer`` (bounded, an over-long line discarded while
it streams), none at a newline its own way.  The few line readers that read
no peer (a file's lines asked by ``fs/read_text_file``, the user's answer on
the terminal) are named here with why."""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"

#: where a line is split from bytes: the framer itself
FRAMER = "acp_core/_framing.py"
#: line readers of no peer's stream: (module, method) and why
NOT_A_PEER = {
    # fs/read_text_file's `line`/`limit`: lines of a file, each read in
    # bounded pieces (readline(CHUNK)), the whole bounded by MAX_READ
    ("acp_client/workspace.py", "readline"),
    # the user's answer to a question, read from the terminal
    ("acp_client/questions.py", "readline"),
}
SPLITTING = {"split", "rsplit", "find", "rfind", "index", "partition", "rpartition"}
READING = {"readline", "readlines", "readuntil"}


def _newline(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, bytes)
        and b"\n" in node.value
    )


def line_splits(root: Path) -> list[str]:
    """Each place under ``root`` that splits bytes at a newline or reads a
    stream line by line, outside the framer and the readers of no peer."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where == FRAMER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            ):
                continue
            name = node.func.attr
            if name in SPLITTING and node.args and _newline(node.args[0]):
                found.append(f"{where}:{node.lineno} .{name}(b'\\n')")
            elif name in READING and (where, name) not in NOT_A_PEER:
                found.append(f"{where}:{node.lineno} .{name}()")
    return found


def test_no_runtime_package_frames_lines_its_own_way() -> None:
    assert line_splits(RUNTIME) == []


def test_the_scan_finds_a_split_of_its_own(tmp_path: Path) -> None:
    # the rule's own check: a hand-written framer is seen, the framer is not
    (tmp_path / "acp_core").mkdir()
    (tmp_path / "acp_core" / "_framing.py").write_text('data.split(b"\\n")\n')
    (tmp_path / "sse.py").write_text(
        'lines = (partial + chunk).split(b"\\n")\nline = stream.readline()\n'
    )
    assert line_splits(tmp_path) == [
        "sse.py:1 .split(b'\\n')",
        "sse.py:2 .readline()",
    ]
