"""Line counts of runtime modules: total lines and statement lines.

Statement lines: lines holding code, not counting blank lines, comments,
docstrings and ``@overload`` stubs (the typed signatures a type checker reads;
the implementation they describe is counted).  Used for issue 10's budget of
acp_asyncio ("a few hundred lines") and reported in runtime/STATUS.md::

    python bench/statement_lines.py runtime/acp_asyncio runtime/acp_trio
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

__all__ = ["statement_lines"]

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


def main(paths: list[str]) -> None:
    for root in paths:
        total_lines = total_statements = 0
        for path in sorted(Path(root).glob("*.py")):
            source = path.read_text()
            lines = source.count("\n")
            statements = statement_lines(source)
            total_lines += lines
            total_statements += statements
            print(f"{path}: {lines} lines, {statements} statement lines")
        print(f"{root}: {total_lines} lines, {total_statements} statement lines\n")


if __name__ == "__main__":
    main(sys.argv[1:] or ["runtime/acp_asyncio", "runtime/acp_trio"])
