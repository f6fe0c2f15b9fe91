"""Python literals of schema values, written as ``ruff format`` writes them.

Every string, number or JSON value the generator puts into code (a wire
name, a tag, an enum value, a ``pattern``, a default's JSON) goes through
:func:`py_literal`, so the generated modules pass ``ruff format --check``
whatever the schema holds (quotes, backslashes, control characters,
unicode): ``tests/codegen/test_literal.py`` compares it to ruff's output.

Ruff's rules for a one-line string: double quotes, unless the text holds
more double quotes than single ones (then single quotes); only the quote
chosen is escaped; escapes are left as written.  Here non-printable
characters are escaped the way :func:`repr` escapes them (lowercase hex).
"""

from __future__ import annotations

__all__ = ["py_literal", "py_str"]

_SIMPLE_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def py_str(text: str) -> str:
    """``text`` as a one-line Python string literal, quoted as ruff quotes it."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    out: list[str] = []
    for char in text:
        if char == quote:
            out.append("\\" + char)
        elif char in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        else:  # repr's escape: \x.., \u...., \U........ (lowercase hex)
            out.append(repr(char)[1:-1])
    return quote + "".join(out) + quote


def py_literal(value: object) -> str:
    """A JSON value (or a Python scalar) as a Python literal, as ruff writes it."""
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    return repr(value)
