"""The inspector reads lines with the runtime's own bound on nesting
(``acp_core.Limits.max_nesting_depth``, 128 levels, checked by
``acp_core.decode_envelope`` before anything decodes a line): a deeper message is
recorded as malformed with its id, never decoded; one at the bound is read."""

from __future__ import annotations

from acp_core import DEFAULT_MAX_NESTING_DEPTH
from acp_inspect import Malformed, Message, parse_line


def nested(depth: int) -> bytes:
    """A request (id 3) whose own object is level 1, ``depth`` levels in all."""
    inner = b"[" * (depth - 2) + b"]" * (depth - 2)
    return (
        b'{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"x":%b}}' % inner
    )


def test_a_message_nested_deeper_than_the_bound_is_malformed_and_never_decoded() -> (
    None
):
    for depth in (DEFAULT_MAX_NESTING_DEPTH + 1, 5_000):
        [parsed] = parse_line("to_agent", 0, 0.0, nested(depth))
        assert isinstance(parsed, Malformed), depth
        assert parsed.id == 3
        assert f"nested deeper than {DEFAULT_MAX_NESTING_DEPTH}" in parsed.reason
    [parsed] = parse_line("to_agent", 0, 0.0, nested(DEFAULT_MAX_NESTING_DEPTH))
    assert isinstance(parsed, Message) and parsed.id == 3
