"""Line counts of runtime modules: total lines, statement lines, statements.

Statement lines: physical lines holding code, not counting blank lines,
comments, docstrings and ``@overload`` stubs (the typed signatures a type
checker reads; the implementation they describe is counted).  Statements:
the same code counted in Python statements (``ast.stmt`` nodes: a call or an
import spread over ten lines is one; ``def`` / ``class`` / ``if`` headers
count one each).  Used for issue 10's budget of acp_asyncio ("a few hundred
lines")::

    python bench/statement_lines.py runtime/acp_asyncio runtime/acp_trio
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

__all__ = ["statement_lines", "statements"]

_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}


def _skipped(tree: ast.AST) -> set[int]:
    """Lines of docstrings and ``@overload`` stubs."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            (isinstance(d, ast.Name) and d.id == "overload")
            or (isinstance(d, ast.Attribute) and d.attr == "overload")
            for d in node.decorator_list
        ):
            first = min(d.lineno for d in node.decorator_list)
            lines.update(range(first, (node.end_lineno or node.lineno) + 1))
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                doc = body[0]
                lines.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    return lines


def statement_lines(source: str) -> int:
    """The number of statement lines of ``source`` (see the module docstring)."""
    skipped = _skipped(ast.parse(source))
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _NOT_CODE:
            continue
        for line in range(token.start[0], token.end[0] + 1):
            if line not in skipped:
                code.add(line)
    return len(code)


def statements(source: str) -> int:
    """The number of statements of ``source``, docstrings and ``@overload`` stubs
    not counted."""
    tree = ast.parse(source)
    skipped = _skipped(tree)
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno not in skipped
    )


def main(paths: list[str]) -> None:
    for root in paths:
        totals = [0, 0, 0]
        for path in sorted(Path(root).glob("*.py")):
            source = path.read_text()
            counts = (source.count("\n"), statement_lines(source), statements(source))
            totals = [t + c for t, c in zip(totals, counts, strict=True)]
            print(
                f"{path}: {counts[0]} lines, {counts[1]} statement lines, {counts[2]} statements"
            )
        print(
            f"{root}: {totals[0]} lines, {totals[1]} statement lines, {totals[2]} statements\n"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["runtime/acp_asyncio", "runtime/acp_trio"])
